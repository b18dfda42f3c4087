package anthropic

import (
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/jsonv"
	"omniroute/backend/translate"
	"omniroute/backend/translate/sse"
)

// NewStreamToChat returns a translator from an Anthropic Messages event stream
// to OpenAI chat.completion.chunk events: a role chunk, content/reasoning/tool
// call deltas, a finish chunk, a final usage chunk (choices: []) and
// "data: [DONE]" once the upstream sent message_stop. model names the answer
// until message_start reports the upstream's own model.
func NewStreamToChat(model string) translate.StreamTranslator {
	return &streamToChat{model: model, created: time.Now().Unix()}
}

// Kinds of Anthropic content blocks, as the stream translators track them.
const (
	kindOther byte = iota
	kindText
	kindThinking
	kindTool
)

type toChatBlock struct {
	kind    byte
	tool    int  // OpenAI tool_calls index, for kindTool
	hasArgs bool // some arguments were sent
}

type streamToChat struct {
	model   string
	id      string
	created int64
	prefix  []byte // `{"id":…,"model":…,"choices":[{"index":0,"delta":`
	blocks  map[int64]*toChatBlock
	tools   int // tool calls started so far
	usage   tokens
	stop    string
	started bool // the role chunk was sent
	finish  bool // the finish chunk was sent
	done    bool // message_stop arrived and [DONE] was sent
	failed  bool
	buf     []byte
}

// Complete reports whether message_stop arrived and no error did.
func (s *streamToChat) Complete() bool { return s.done && !s.failed }

// Usage returns the usage from message_start and message_delta.
func (s *streamToChat) Usage() translate.Usage { return s.usage.public() }

// End has nothing to add: the closing chunks are written when message_stop arrives.
func (s *streamToChat) End(dst []byte) []byte { return dst }

// Event translates one upstream event; an upstream error becomes an *UpstreamStreamError.
func (s *streamToChat) Event(dst []byte, ev sse.Event) ([]byte, error) {
	if s.done || s.failed || ev.Comment {
		return dst, nil
	}
	if len(ev.Data) == 0 || !jsonv.Valid(ev.Data) {
		if ev.Event == "error" {
			s.failed = true
			return dst, &UpstreamStreamError{Message: truncate(string(ev.Data), 500)}
		}
		return dst, nil
	}
	root := gjson.ParseBytes(ev.Data)
	typ := root.Get("type").String()
	if typ == "" {
		typ = ev.Event
	}
	switch typ {
	case "error":
		s.failed = true
		e := root.Get("error")
		msg := e.Get("message").String()
		if msg == "" {
			msg = "the upstream reported an error"
		}
		return dst, &UpstreamStreamError{Code: e.Get("type").String(), Message: msg}
	case "message_start":
		m := root.Get("message")
		if id := m.Get("id").String(); id != "" {
			s.id = id
		}
		if model := m.Get("model").String(); model != "" {
			s.model = model
		}
		s.usage.readAnthropic(m.Get("usage"))
		return s.start(dst), nil
	case "content_block_start":
		dst = s.start(dst)
		return s.blockStart(dst, root), nil
	case "content_block_delta":
		dst = s.start(dst)
		return s.blockDelta(dst, root), nil
	case "content_block_stop":
		b := s.blocks[root.Get("index").Int()]
		if b != nil && b.kind == kindTool && !b.hasArgs {
			b.hasArgs = true
			dst = s.toolArgs(dst, b.tool, "{}")
		}
		return dst, nil
	case "message_delta":
		dst = s.start(dst)
		if r := root.Get("delta.stop_reason"); r.Type == gjson.String {
			s.stop = r.Str
		}
		s.usage.readAnthropic(root.Get("usage"))
		if !s.finish && s.stop != "" {
			dst = s.finishChunk(dst)
		}
		return dst, nil
	case "message_stop":
		dst = s.start(dst)
		if !s.finish {
			dst = s.finishChunk(dst)
		}
		s.buf = append(s.buf[:0], `{"id":`...)
		s.buf = appendString(s.buf, s.id)
		s.buf = append(s.buf, `,"object":"chat.completion.chunk","created":`...)
		s.buf = appendInt(s.buf, int(s.created))
		s.buf = append(s.buf, `,"model":`...)
		s.buf = appendString(s.buf, s.model)
		s.buf = append(s.buf, `,"choices":[],"usage":`...)
		s.buf = appendChatUsage(s.buf, s.usage)
		s.buf = append(s.buf, '}')
		dst = sse.Append(dst, "", s.buf)
		dst = sse.Append(dst, "", []byte("[DONE]"))
		s.done = true
		return dst, nil
	}
	return dst, nil // ping and unknown events have no Chat form
}

// start sends the role chunk once.
func (s *streamToChat) start(dst []byte) []byte {
	if s.started {
		return dst
	}
	s.started = true
	if s.id == "" {
		s.id = newID("msg_")
	}
	s.prefix = append(s.prefix[:0], `{"id":`...)
	s.prefix = appendString(s.prefix, s.id)
	s.prefix = append(s.prefix, `,"object":"chat.completion.chunk","created":`...)
	s.prefix = appendInt(s.prefix, int(s.created))
	s.prefix = append(s.prefix, `,"model":`...)
	s.prefix = appendString(s.prefix, s.model)
	s.prefix = append(s.prefix, `,"choices":[{"index":0,"delta":`...)
	return s.chunk(dst, `{"role":"assistant","content":""}`, "")
}

// chunk writes one chunk with the given delta JSON and finish reason ("" = null).
func (s *streamToChat) chunk(dst []byte, delta string, finish string) []byte {
	s.buf = append(s.buf[:0], s.prefix...)
	s.buf = append(s.buf, delta...)
	return s.closeChunk(dst, finish)
}

func (s *streamToChat) closeChunk(dst []byte, finish string) []byte {
	if finish == "" {
		s.buf = append(s.buf, `,"finish_reason":null}]}`...)
	} else {
		s.buf = append(s.buf, `,"finish_reason":"`...)
		s.buf = append(s.buf, finish...)
		s.buf = append(s.buf, `"}]}`...)
	}
	return sse.Append(dst, "", s.buf)
}

// textChunk writes a content or reasoning_content delta.
func (s *streamToChat) textChunk(dst []byte, key string, text string) []byte {
	s.buf = append(s.buf[:0], s.prefix...)
	s.buf = append(s.buf, `{"`...)
	s.buf = append(s.buf, key...)
	s.buf = append(s.buf, `":`...)
	s.buf = appendString(s.buf, text)
	s.buf = append(s.buf, '}')
	return s.closeChunk(dst, "")
}

// signedChunk sends a signed block as Chat's thinking_blocks (LiteLLM's
// streamed form): typ "thinking" with its signature, or "redacted_thinking"
// with its data.
func (s *streamToChat) signedChunk(dst []byte, typ, key, value string) []byte {
	s.buf = append(s.buf[:0], s.prefix...)
	s.buf = append(s.buf, `{"thinking_blocks":[{"type":"`...)
	s.buf = append(s.buf, typ...)
	if typ == "thinking" {
		s.buf = append(s.buf, `","thinking":"`...)
	}
	s.buf = append(s.buf, `","`...)
	s.buf = append(s.buf, key...)
	s.buf = append(s.buf, `":`...)
	s.buf = appendString(s.buf, value)
	s.buf = append(s.buf, `}]}`...)
	return s.closeChunk(dst, "")
}

func (s *streamToChat) toolArgs(dst []byte, tool int, args string) []byte {
	s.buf = append(s.buf[:0], s.prefix...)
	s.buf = append(s.buf, `{"tool_calls":[{"index":`...)
	s.buf = appendInt(s.buf, tool)
	s.buf = append(s.buf, `,"function":{"arguments":`...)
	s.buf = appendString(s.buf, args)
	s.buf = append(s.buf, `}}]}`...)
	return s.closeChunk(dst, "")
}

func (s *streamToChat) finishChunk(dst []byte) []byte {
	s.finish = true
	return s.chunk(dst, `{}`, finishReason(s.stop))
}

func (s *streamToChat) blockStart(dst []byte, root gjson.Result) []byte {
	if s.finish {
		return dst
	}
	idx := root.Get("index").Int()
	cb := root.Get("content_block")
	b := &toChatBlock{}
	if s.blocks == nil {
		s.blocks = make(map[int64]*toChatBlock, 4)
	}
	s.blocks[idx] = b
	switch cb.Get("type").String() {
	case "text":
		b.kind = kindText
		if t := cb.Get("text").String(); t != "" {
			dst = s.textChunk(dst, "content", t)
		}
	case "thinking":
		b.kind = kindThinking
		if t := cb.Get("thinking").String(); t != "" {
			dst = s.textChunk(dst, "reasoning_content", t)
		}
	case "redacted_thinking":
		if d := cb.Get("data").String(); d != "" {
			dst = s.signedChunk(dst, "redacted_thinking", "data", d)
		}
	case "tool_use":
		b.kind = kindTool
		b.tool = s.tools
		s.tools++
		id := cb.Get("id").String()
		if id == "" {
			id = newID("toolu_")
		}
		args := ""
		if in := cb.Get("input"); in.IsObject() && in.Raw != "{}" {
			if a := inputToArguments(in); a != "{}" {
				args = a
				b.hasArgs = true
			}
		}
		s.buf = append(s.buf[:0], s.prefix...)
		s.buf = append(s.buf, `{"tool_calls":[{"index":`...)
		s.buf = appendInt(s.buf, b.tool)
		s.buf = append(s.buf, `,"id":`...)
		s.buf = appendString(s.buf, id)
		s.buf = append(s.buf, `,"type":"function","function":{"name":`...)
		s.buf = appendString(s.buf, cb.Get("name").String())
		s.buf = append(s.buf, `,"arguments":`...)
		s.buf = appendString(s.buf, args)
		s.buf = append(s.buf, `}}]}`...)
		dst = s.closeChunk(dst, "")
	}
	return dst
}

func (s *streamToChat) blockDelta(dst []byte, root gjson.Result) []byte {
	if s.finish {
		return dst
	}
	d := root.Get("delta")
	switch d.Get("type").String() {
	case "text_delta":
		if t := d.Get("text").String(); t != "" {
			dst = s.textChunk(dst, "content", t)
		}
	case "thinking_delta":
		if t := d.Get("thinking").String(); t != "" {
			dst = s.textChunk(dst, "reasoning_content", t)
		}
	case "input_json_delta":
		b := s.blocks[root.Get("index").Int()]
		if b == nil || b.kind != kindTool {
			return dst
		}
		if p := d.Get("partial_json").String(); p != "" {
			b.hasArgs = true
			dst = s.toolArgs(dst, b.tool, p)
		}
	case "signature_delta":
		if sig := d.Get("signature").String(); sig != "" {
			dst = s.signedChunk(dst, "thinking", "signature", sig)
		}
	}
	// citations_delta: no Chat form.
	return dst
}
