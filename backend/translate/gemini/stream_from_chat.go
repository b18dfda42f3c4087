package gemini

import (
	"sort"

	"github.com/tidwall/gjson"

	"omniroute/backend/jsonv"
	"omniroute/backend/translate"
	"omniroute/backend/translate/sse"
)

// Framing is how a streamGenerateContent answer is framed.
type Framing int

const (
	// FramingSSE is ?alt=sse: each chunk one "data: {…}" event.
	FramingSSE Framing = iota
	// FramingJSONArray is the default without alt=sse: one JSON array whose
	// elements are the chunks, written as they come ("[{…}", ",\r\n{…}", "]").
	FramingJSONArray
)

// ErrorWriter is implemented by the Chat → Gemini stream translator: it ends
// the client's stream with a Google-shaped error in the stream's framing (an
// SSE data event, or the last element of the JSON array and its "]").
type ErrorWriter interface {
	AppendError(dst []byte, httpStatus int, status, message string) []byte
}

// NewStreamFromChat returns a translator from OpenAI chat.completion.chunk
// events to a Gemini streamGenerateContent answer in the given framing, for a
// Gemini-native client. Text and reasoning deltas are sent as they come (one
// chunk each, reasoning as thought parts); tool calls are gathered, since a
// Gemini functionCall part carries whole args, and sent with the last chunk,
// which also carries the finishReason and the usageMetadata (OpenAI reports
// usage after the finish_reason, so the last chunk waits for [DONE] or End).
// Upstream keep-alive comments are not forwarded: Gemini clients' SSE readers
// expect only data events. model names the answer (modelVersion).
func NewStreamFromChat(model string, framing Framing) translate.StreamTranslator {
	return &streamFromChat{model: model, framing: framing}
}

type fromChatTool struct {
	id, name string
	sig      string
	args     []byte
}

type streamFromChat struct {
	model     string
	id        string
	gotModel  bool
	framing   Framing
	opened    bool // the first chunk (and for the array framing its "[") was written
	tools     map[int64]*fromChatTool
	finish    string
	refused   bool // the upstream streamed a refusal (delta.refusal)
	sawFinish bool
	sawDone   bool
	closed    bool
	failed    bool
	usage     tokens
	buf       []byte
}

// Complete reports whether the upstream sent a finish_reason or [DONE] and no error.
func (s *streamFromChat) Complete() bool { return !s.failed && (s.sawFinish || s.sawDone) }

// Usage returns the usage from the upstream's usage chunk.
func (s *streamFromChat) Usage() translate.Usage { return s.usage.public() }

// End writes the last chunk if the upstream ended properly and it was not written yet.
func (s *streamFromChat) End(dst []byte) []byte {
	if !s.Complete() || s.closed {
		return dst
	}
	return s.close(dst)
}

// AppendError ends the stream with a Google error object in its framing.
func (s *streamFromChat) AppendError(dst []byte, httpStatus int, status, message string) []byte {
	if s.closed {
		return dst
	}
	s.closed, s.failed = true, true
	s.buf = AppendError(s.buf[:0], httpStatus, status, message, 0)
	dst = s.frame(dst, s.buf)
	if s.framing == FramingJSONArray {
		dst = append(dst, ']')
	}
	return dst
}

// Event translates one upstream chunk; an upstream error becomes an *UpstreamStreamError.
func (s *streamFromChat) Event(dst []byte, ev sse.Event) ([]byte, error) {
	if s.closed || s.failed || ev.Comment {
		return dst, nil
	}
	if ev.IsDone() {
		s.sawDone = true
		return s.close(dst), nil
	}
	if len(ev.Data) == 0 || !jsonv.Valid(ev.Data) {
		if ev.Event == "error" {
			s.failed = true
			return dst, &UpstreamStreamError{Message: truncate(string(ev.Data), 500)}
		}
		return dst, nil
	}
	root := gjson.ParseBytes(ev.Data)
	if !root.IsObject() {
		return dst, nil
	}
	if e := root.Get("error"); e.Exists() && e.Type != gjson.Null || ev.Event == "error" {
		s.failed = true
		msg := e.Get("message").String()
		if msg == "" && e.Type == gjson.String {
			msg = e.Str
		}
		if msg == "" {
			msg = "the upstream reported an error"
		}
		code := e.Get("code").String()
		if code == "" {
			code = e.Get("type").String()
		}
		return dst, &UpstreamStreamError{Code: code, Message: truncate(msg, 2000)}
	}
	if id := root.Get("id"); id.Type == gjson.String && s.id == "" {
		s.id = id.Str
	}
	if m := root.Get("model"); m.Type == gjson.String && m.Str != "" && !s.gotModel && !s.opened {
		s.model, s.gotModel = m.Str, true
	}
	if u := root.Get("usage"); u.IsObject() {
		s.usage.readChat(u)
	}
	var choice gjson.Result
	each(root.Get("choices"), func(_ int, c gjson.Result) bool {
		if i := c.Get("index"); !i.Exists() || i.Int() == 0 {
			choice = c
			return false
		}
		return true
	})
	if !choice.IsObject() || s.sawFinish {
		return dst, nil
	}
	d := choice.Get("delta")
	reasoning := d.Get("reasoning_content")
	if reasoning.Type != gjson.String || reasoning.Str == "" {
		reasoning = d.Get("reasoning")
	}
	if reasoning.Type == gjson.String && reasoning.Str != "" {
		dst = s.textChunk(dst, reasoning.Str, true)
	}
	if c := d.Get("content"); c.Type == gjson.String && c.Str != "" {
		dst = s.textChunk(dst, c.Str, false)
	}
	if r := d.Get("refusal"); r.Type == gjson.String && r.Str != "" {
		s.refused = true
		dst = s.textChunk(dst, r.Str, false)
	}
	each(d.Get("tool_calls"), func(i int, c gjson.Result) bool {
		s.toolDelta(c, int64(i))
		return true
	})
	if f := choice.Get("finish_reason"); f.Type == gjson.String && f.Str != "" {
		s.sawFinish, s.finish = true, f.Str
	}
	return dst, nil
}

// toolDelta gathers one entry of delta.tool_calls.
func (s *streamFromChat) toolDelta(c gjson.Result, pos int64) {
	if !c.IsObject() {
		return
	}
	idx := pos
	if i := c.Get("index"); i.Type == gjson.Number {
		idx = i.Int()
	}
	if s.tools == nil {
		s.tools = make(map[int64]*fromChatTool, 2)
	}
	t := s.tools[idx]
	if t == nil {
		t = &fromChatTool{}
		s.tools[idx] = t
	}
	if id := c.Get("id"); id.Type == gjson.String && id.Str != "" && t.id == "" {
		t.id = id.Str
	}
	if sig := c.Get("extra_content.google.thought_signature"); sig.Type == gjson.String && t.sig == "" {
		t.sig = sig.Str
	}
	fn := c.Get("function")
	if name := fn.Get("name"); name.Type == gjson.String && name.Str != "" && t.name == "" {
		t.name = name.Str
	}
	if a := fn.Get("arguments"); a.Type == gjson.String {
		t.args = append(t.args, a.Str...)
	} else if a.IsObject() {
		t.args = append(t.args, compactRaw(a.Raw)...)
	}
}

// head appends the start of a chunk up to its parts array's contents.
func (s *streamFromChat) head() {
	s.buf = append(s.buf[:0], `{"candidates":[{"content":{"parts":[`...)
}

// tail closes a chunk: finishReason ("" for none), usage when last, ids.
func (s *streamFromChat) tail(finish string, last bool) {
	s.buf = append(s.buf, `],"role":"model"}`...)
	if finish != "" {
		s.buf = append(s.buf, `,"finishReason":"`...)
		s.buf = append(s.buf, finish...)
		s.buf = append(s.buf, '"')
	}
	s.buf = append(s.buf, `,"index":0}]`...)
	if last {
		s.buf = append(s.buf, `,"usageMetadata":`...)
		s.buf = appendGeminiUsage(s.buf, s.usage)
	}
	s.buf = append(s.buf, `,"modelVersion":`...)
	s.buf = appendString(s.buf, s.model)
	if s.id == "" {
		s.id = newID("")
	}
	s.buf = append(s.buf, `,"responseId":`...)
	s.buf = appendString(s.buf, s.id)
	s.buf = append(s.buf, '}')
}

func (s *streamFromChat) textChunk(dst []byte, text string, thought bool) []byte {
	s.head()
	s.buf = append(s.buf, `{"text":`...)
	s.buf = appendString(s.buf, text)
	if thought {
		s.buf = append(s.buf, `,"thought":true`...)
	}
	s.buf = append(s.buf, '}')
	s.tail("", false)
	return s.frame(dst, s.buf)
}

// frame writes one chunk in the stream's framing.
func (s *streamFromChat) frame(dst, chunk []byte) []byte {
	if s.framing == FramingJSONArray {
		if s.opened {
			dst = append(dst, ",\r\n"...)
		} else {
			dst = append(dst, '[')
		}
		s.opened = true
		return append(dst, chunk...)
	}
	s.opened = true
	return sse.Append(dst, "", chunk)
}

// close writes the last chunk: the gathered function calls (or an empty
// text part), the finishReason and the usage; then "]" for the array framing.
func (s *streamFromChat) close(dst []byte) []byte {
	if s.closed {
		return dst
	}
	s.closed = true
	s.head()
	idxs := make([]int64, 0, len(s.tools))
	dropped := false
	for i, t := range s.tools {
		switch {
		case t.name == "":
		case !answerArgsValid(string(t.args)):
			dropped = true // cut-off arguments: no invented args object
		default:
			idxs = append(idxs, i)
		}
	}
	sort.Slice(idxs, func(a, b int) bool { return idxs[a] < idxs[b] })
	for n, i := range idxs {
		t := s.tools[i]
		if n > 0 {
			s.buf = append(s.buf, ',')
		}
		s.buf = append(s.buf, `{"functionCall":{"id":`...)
		s.buf = appendString(s.buf, chatCallID(t.id))
		s.buf = append(s.buf, `,"name":`...)
		s.buf = appendString(s.buf, t.name)
		s.buf = append(s.buf, `,"args":`...)
		s.buf = append(s.buf, argumentsToArgs(string(t.args))...)
		s.buf = append(s.buf, '}')
		if t.sig != "" {
			s.buf = append(s.buf, `,"thoughtSignature":`...)
			s.buf = appendString(s.buf, t.sig)
		}
		s.buf = append(s.buf, '}')
	}
	if len(idxs) == 0 {
		s.buf = append(s.buf, `{"text":""}`...)
	}
	finish := geminiFinish(s.finish)
	if dropped {
		finish = droppedCallFinish(s.finish)
	}
	if s.refused {
		finish = refusalFinish
	}
	s.tail(finish, true)
	dst = s.frame(dst, s.buf)
	if s.framing == FramingJSONArray {
		dst = append(dst, ']')
	}
	return dst
}
