package responses

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"omniroute/backend/translate"
	"omniroute/backend/translate/sse"
)

// StreamToChat turns a Responses event stream (response.created,
// response.output_text.delta, response.function_call_arguments.delta,
// response.completed, …) into Chat Completions chunks ending in [DONE].
type StreamToChat struct {
	model    string
	id       string
	created  int64
	started  bool
	done     bool
	failed   bool
	calls    map[string]int // item id → tool call index
	nCalls   int
	sawCalls bool
	usage    translate.Usage
}

// NewStreamToChat returns a translator for one upstream Responses stream.
func NewStreamToChat(model string) translate.StreamTranslator {
	return &StreamToChat{model: model, calls: map[string]int{}}
}

// Complete reports whether response.completed (or incomplete) arrived.
func (s *StreamToChat) Complete() bool { return s.done && !s.failed }

// Usage returns the usage the final event reported.
func (s *StreamToChat) Usage() translate.Usage { return s.usage }

// End adds nothing: the closing chunks are written on response.completed.
func (s *StreamToChat) End(dst []byte) []byte { return dst }

// Event translates one upstream event.
func (s *StreamToChat) Event(dst []byte, ev sse.Event) ([]byte, error) {
	if ev.Comment || s.done || s.failed || len(ev.Data) == 0 || !gjson.ValidBytes(ev.Data) {
		return dst, nil
	}
	root := gjson.ParseBytes(ev.Data)
	typ := root.Get("type").String()
	if typ == "" {
		typ = ev.Event
	}
	switch typ {
	case "response.created", "response.in_progress":
		r := root.Get("response")
		if s.id == "" {
			s.id = "chatcmpl-" + strings.TrimPrefix(r.Get("id").String(), "resp_")
			s.created = r.Get("created_at").Int()
			if m := r.Get("model").String(); m != "" {
				s.model = m
			}
		}
		return s.start(dst), nil
	case "response.output_text.delta", "response.refusal.delta":
		return s.chunk(s.start(dst), `{"content":`+quote(root.Get("delta").String())+`}`, ""), nil
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		return s.chunk(s.start(dst), `{"reasoning_content":`+quote(root.Get("delta").String())+`}`, ""), nil
	case "response.output_item.added":
		it := root.Get("item")
		if t := it.Get("type").String(); t == "function_call" || t == "custom_tool_call" {
			idx := s.nCalls
			s.nCalls++
			s.sawCalls = true
			s.calls[it.Get("id").String()] = idx
			args := ""
			if t == "custom_tool_call" {
				args = `{"input":"`
			}
			d := `{"tool_calls":[{"index":` + strconv.Itoa(idx) + `,"id":` + quote(it.Get("call_id").String()) +
				`,"type":"function","function":{"name":` + quote(it.Get("name").String()) + `,"arguments":` + quote(args) + `}}]}`
			return s.chunk(s.start(dst), d, ""), nil
		}
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		idx, ok := s.calls[root.Get("item_id").String()]
		if !ok {
			return dst, nil
		}
		delta := root.Get("delta").String()
		if typ == "response.custom_tool_call_input.delta" {
			q := quote(delta)
			delta = q[1 : len(q)-1] // the text goes inside the JSON string "input"
		}
		d := `{"tool_calls":[{"index":` + strconv.Itoa(idx) + `,"function":{"arguments":` + quote(delta) + `}}]}`
		return s.chunk(dst, d, ""), nil
	case "response.output_item.done":
		it := root.Get("item")
		if it.Get("type").String() == "custom_tool_call" {
			if idx, ok := s.calls[it.Get("id").String()]; ok {
				d := `{"tool_calls":[{"index":` + strconv.Itoa(idx) + `,"function":{"arguments":"\"}"}}]}`
				return s.chunk(dst, d, ""), nil
			}
		}
	case "response.completed", "response.incomplete", "response.done":
		r := root.Get("response")
		s.done = true
		s.readUsage(r.Get("usage"))
		dst = s.start(dst)
		dst = s.chunk(dst, `{}`, finishOf(r, s.sawCalls))
		if u := r.Get("usage"); u.IsObject() {
			b, _ := marshal(chatUsage(u))
			dst = s.frame(dst, `"choices":[],"usage":`+string(b))
		}
		return sse.Append(dst, "", []byte("[DONE]")), nil
	case "response.failed", "error":
		s.failed = true
		e := root.Get("response.error")
		if !e.Exists() {
			e = root
		}
		return dst, upstreamError(e)
	}
	return dst, nil
}

func (s *StreamToChat) readUsage(u gjson.Result) {
	if !u.IsObject() {
		return
	}
	s.usage = translate.Usage{InputTokens: int(u.Get("input_tokens").Int()), OutputTokens: int(u.Get("output_tokens").Int()),
		CacheReadTokens: int(u.Get("input_tokens_details.cached_tokens").Int()),
		ReasoningTokens: int(u.Get("output_tokens_details.reasoning_tokens").Int())}
}

// start writes the role chunk once.
func (s *StreamToChat) start(dst []byte) []byte {
	if s.started {
		return dst
	}
	s.started = true
	if s.id == "" {
		s.id = "chatcmpl-" + randHex()
	}
	return s.chunk(dst, `{"role":"assistant","content":""}`, "")
}

// chunk writes one chat.completion.chunk with delta (raw JSON) and finish reason.
func (s *StreamToChat) chunk(dst []byte, delta, finish string) []byte {
	f := "null"
	if finish != "" {
		f = quote(finish)
	}
	return s.frame(dst, `"choices":[{"index":0,"delta":`+delta+`,"finish_reason":`+f+`}]`)
}

func (s *StreamToChat) frame(dst []byte, rest string) []byte {
	b := make([]byte, 0, 128+len(rest))
	b = append(b, `{"id":`...)
	b = appendString(b, s.id)
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = strconv.AppendInt(b, s.created, 10)
	b = append(b, `,"model":`...)
	b = appendString(b, s.model)
	b = append(b, ',')
	b = append(b, rest...)
	b = append(b, '}')
	return sse.Append(dst, "", b)
}

func quote(s string) string { return string(appendString(nil, s)) }
