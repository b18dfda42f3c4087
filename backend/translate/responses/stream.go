package responses

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/tidwall/gjson"

	"omniroute/backend/jsonv"
	"omniroute/backend/translate"
	"omniroute/backend/translate/sse"
)

// Stream translates Chat Completions SSE chunks into the Responses API event
// stream. It is a translate.StreamTranslator; Fail is its one extra.
//
// The first chunk yields response.created and response.in_progress. Reasoning
// deltas (delta.reasoning_content or delta.reasoning) stream as a reasoning
// item's summary text, content and refusal deltas as a message item's parts,
// and tool call deltas (keyed by their Chat index) as function_call items —
// custom_tool_call items for the request's custom tools, whose input is sent
// whole once the call is done, since it must first be decoded from the Chat
// arguments. Reasoning and message items close when another kind of output
// starts; tool calls stay open until the finish_reason chunk, so interleaved
// parallel deltas are fine. Every event carries a strictly increasing
// sequence_number from 0, and its SSE event name equals its type.
//
// The stream is complete once a chunk carried a finish_reason and no error
// came; only then does End write response.completed (response.incomplete for
// a "length" or "content_filter" finish) with the whole response object,
// usage from the final usage chunk included.
type Stream struct {
	res      *result
	seq      int
	started  bool
	finished bool // a finish_reason arrived
	failed   bool // the upstream reported an error or sent garbage
	ended    bool // End or Fail wrote the terminal event
	finish   string

	reasoning *item // open reasoning item
	message   *item // open message item
	partOpen  bool  // the message's last part is open
	calls     []*call

	buf []byte // scratch for one event's JSON
}

// call tracks one Chat tool call by its stream index.
type call struct {
	index    int
	hasIndex bool
	chatID   string
	name     string
	pending  []byte // arguments that came before the name
	it       *item  // nil until the name is known
	done     bool
}

var _ translate.StreamTranslator = (*Stream)(nil)

// NewStreamFromChat returns a translator from Chat Completions chunks to
// Responses events. model names the response until the upstream's first chunk
// names the model that actually answers; req is the client's Responses
// request, echoed in the response object (see ResponseFromChat). The result is
// a *Stream.
func NewStreamFromChat(model string, req []byte) translate.StreamTranslator {
	r := newResult(parseEcho(req))
	if model != "" {
		r.model = model
	}
	return &Stream{res: r}
}

// Complete reports whether the upstream finished its answer: a finish_reason
// arrived and no error did.
func (s *Stream) Complete() bool { return s.finished && !s.failed }

// Usage returns the usage from the upstream's usage chunk. InputTokens is
// prompt_tokens, which includes CacheReadTokens, as in Chat Completions.
func (s *Stream) Usage() translate.Usage { return s.res.usage.usage() }

// Event translates one upstream chunk. An error event or chunk, or a chunk
// that is not a JSON object, returns an *UpstreamError and makes the stream
// incomplete; "[DONE]" and comments write nothing.
func (s *Stream) Event(dst []byte, ev sse.Event) ([]byte, error) {
	if ev.Comment || s.ended {
		return dst, nil
	}
	data := bytes.TrimSpace(ev.Data)
	if ev.IsDone() {
		return dst, nil
	}
	if ev.Event == "error" {
		s.failed = true
		if jsonv.Valid(data) {
			if r := gjson.ParseBytes(data); r.Get("error").Exists() {
				return dst, upstreamError(r.Get("error"))
			} else if r.IsObject() {
				return dst, upstreamError(r)
			}
		}
		return dst, &UpstreamError{Code: CodeUpstreamError, Message: string(data)}
	}
	if len(data) == 0 {
		return dst, nil
	}
	if !jsonv.Valid(data) {
		s.failed = true
		return dst, &UpstreamError{Code: CodeMalformedChunk, Message: "the upstream sent a chunk that is not JSON"}
	}
	root := gjson.ParseBytes(data)
	if !root.IsObject() {
		s.failed = true
		return dst, &UpstreamError{Code: CodeMalformedChunk, Message: "the upstream sent a chunk that is not a JSON object"}
	}
	if e := root.Get("error"); e.Exists() && e.Type != gjson.Null {
		s.failed = true
		return dst, upstreamError(e)
	}
	if !s.started {
		s.started = true
		if m := root.Get("model"); m.Type == gjson.String && m.Str != "" {
			s.res.model = m.Str
		}
		if c := root.Get("created"); c.Type == gjson.Number && c.Int() > 0 {
			s.res.created = c.Int()
		}
		dst = s.emitResponse(dst, "response.created", "in_progress", "", nil)
		dst = s.emitResponse(dst, "response.in_progress", "in_progress", "", nil)
	}
	if u := root.Get("usage"); u.IsObject() {
		s.res.usage = parseUsage(u)
	}
	var choice gjson.Result
	root.Get("choices").ForEach(func(_, c gjson.Result) bool {
		if i := c.Get("index"); !i.Exists() || i.Int() == 0 {
			choice = c
			return false
		}
		return true
	})
	if !choice.IsObject() {
		return dst, nil
	}
	delta := choice.Get("delta")
	if r := delta.Get("reasoning_content"); r.Type == gjson.String && r.Str != "" {
		dst = s.reasoningDelta(dst, r.Str)
	} else if r := delta.Get("reasoning"); r.Type == gjson.String && r.Str != "" {
		dst = s.reasoningDelta(dst, r.Str)
	}
	if tb := delta.Get("thinking_blocks"); tb.IsArray() {
		dst = s.signedDelta(dst, readBlocks(tb))
	}
	if c := delta.Get("content"); c.Type == gjson.String && c.Str != "" {
		dst = s.textDelta(dst, c.Str, false)
	}
	if r := delta.Get("refusal"); r.Type == gjson.String && r.Str != "" {
		dst = s.textDelta(dst, r.Str, true)
	}
	delta.Get("tool_calls").ForEach(func(_, tc gjson.Result) bool {
		if tc.IsObject() {
			dst = s.toolDelta(dst, tc)
		}
		return true
	})
	if fc := delta.Get("function_call"); fc.IsObject() { // legacy single function call
		dst = s.toolDelta(dst, fc)
	}
	if fr := choice.Get("finish_reason"); fr.Type == gjson.String && fr.Str != "" {
		s.finish, s.finished = fr.Str, true
		dst = s.closeAll(dst)
	}
	return dst, nil
}

// End writes the closing response.completed (or response.incomplete) event.
// It writes nothing when the upstream did not finish (Complete is false) or
// the stream already ended.
func (s *Stream) End(dst []byte) []byte {
	if s.ended || !s.Complete() {
		return dst
	}
	s.ended = true
	dst = s.closeAll(dst)
	status, reason := statusFor(s.finish)
	typ := "response.completed"
	if status == "incomplete" {
		typ = "response.incomplete"
	}
	return s.emitResponse(dst, typ, status, reason, nil)
}

// Fail writes a response.failed event carrying code and message, ending the
// stream. Codex CLI reads the error from response.failed (it ignores a bare
// "error" event), retrying unless the code says not to (invalid_prompt).
// error.code is of the spec's enum (errorCodeFor), the gateway's own code in
// error.omniroute_code. It writes nothing once the stream has ended.
func (s *Stream) Fail(dst []byte, code, message string) []byte {
	if s.ended {
		return dst
	}
	s.ended = true
	return s.emitResponse(dst, "response.failed", "failed", "", errorCodeFor(code, message))
}

// openReasoning starts a reasoning item unless one is open.
func (s *Stream) openReasoning(dst []byte) []byte {
	if s.reasoning != nil {
		return dst
	}
	dst = s.closeMessage(dst, "completed")
	s.reasoning = s.res.add(kindReasoning)
	s.reasoning.sealed = s.res.echo.sealed
	dst = s.emitItem(dst, "response.output_item.added", s.reasoning)
	b := s.begin("response.reasoning_summary_part.added")
	b = appendItemRef(b, s.reasoning)
	b = append(b, `,"summary_index":0,"part":{"type":"summary_text","text":""}`...)
	return s.end(dst, "response.reasoning_summary_part.added", b)
}

// signedDelta keeps a delta's signed blocks (Chat thinking_blocks) on the
// reasoning item: a signature signs the reasoning text streamed since the
// last one; the item's encrypted_content carries them when it is done.
func (s *Stream) signedDelta(dst []byte, blocks []signedBlock) []byte {
	for _, b := range blocks {
		dst = s.openReasoning(dst)
		it := s.reasoning
		if b.Type == "thinking" {
			b.Thinking = string(it.text[it.cut:])
			it.cut = len(it.text)
		}
		it.blocks = append(it.blocks, b)
	}
	return dst
}

func (s *Stream) reasoningDelta(dst []byte, text string) []byte {
	dst = s.openReasoning(dst)
	it := s.reasoning
	it.text = append(it.text, text...)
	b := s.begin("response.reasoning_summary_text.delta")
	b = appendItemRef(b, it)
	b = append(b, `,"summary_index":0,"delta":`...)
	b = appendString(b, text)
	return s.end(dst, "response.reasoning_summary_text.delta", b)
}

func (s *Stream) closeReasoning(dst []byte, status string) []byte {
	it := s.reasoning
	if it == nil {
		return dst
	}
	s.reasoning = nil
	text := string(it.text)
	b := s.begin("response.reasoning_summary_text.done")
	b = appendItemRef(b, it)
	b = append(b, `,"summary_index":0,"text":`...)
	b = appendString(b, text)
	dst = s.end(dst, "response.reasoning_summary_text.done", b)
	b = s.begin("response.reasoning_summary_part.done")
	b = appendItemRef(b, it)
	b = append(b, `,"summary_index":0,"part":{"type":"summary_text","text":`...)
	b = appendString(b, text)
	b = append(b, '}')
	dst = s.end(dst, "response.reasoning_summary_part.done", b)
	it.status = status
	return s.emitItem(dst, "response.output_item.done", it)
}

func (s *Stream) textDelta(dst []byte, text string, refusal bool) []byte {
	if s.message == nil {
		dst = s.closeReasoning(dst, "completed")
		s.message = s.res.add(kindMessage)
		s.partOpen = false
		dst = s.emitItem(dst, "response.output_item.added", s.message)
	}
	m := s.message
	if !s.partOpen || m.parts[len(m.parts)-1].refusal != refusal {
		dst = s.closePart(dst)
		m.parts = append(m.parts, part{refusal: refusal})
		s.partOpen = true
		b := s.begin("response.content_part.added")
		b = appendItemRef(b, m)
		b = appendContentIndex(b, len(m.parts)-1)
		b = append(b, `,"part":`...)
		if refusal {
			b = append(b, `{"type":"refusal","refusal":""}`...)
		} else {
			b = append(b, `{"type":"output_text","text":"","annotations":[],"logprobs":[]}`...)
		}
		dst = s.end(dst, "response.content_part.added", b)
	}
	p := &m.parts[len(m.parts)-1]
	p.text = append(p.text, text...)
	typ := "response.output_text.delta"
	if refusal {
		typ = "response.refusal.delta"
	}
	b := s.begin(typ)
	b = appendItemRef(b, m)
	b = appendContentIndex(b, len(m.parts)-1)
	b = append(b, `,"delta":`...)
	b = appendString(b, text)
	if !refusal {
		b = append(b, `,"logprobs":[]`...)
	}
	return s.end(dst, typ, b)
}

func (s *Stream) closePart(dst []byte) []byte {
	if !s.partOpen {
		return dst
	}
	s.partOpen = false
	m := s.message
	i := len(m.parts) - 1
	p := m.parts[i]
	text := string(p.text)
	typ, field := "response.output_text.done", `,"text":`
	if p.refusal {
		typ, field = "response.refusal.done", `,"refusal":`
	}
	b := s.begin(typ)
	b = appendItemRef(b, m)
	b = appendContentIndex(b, i)
	b = append(b, field...)
	b = appendString(b, text)
	if !p.refusal {
		b = append(b, `,"logprobs":[]`...)
	}
	dst = s.end(dst, typ, b)
	b = s.begin("response.content_part.done")
	b = appendItemRef(b, m)
	b = appendContentIndex(b, i)
	b = append(b, `,"part":`...)
	if p.refusal {
		b = append(b, `{"type":"refusal","refusal":`...)
		b = appendString(b, text)
		b = append(b, '}')
	} else {
		b = append(b, `{"type":"output_text","text":`...)
		b = appendString(b, text)
		b = append(b, `,"annotations":[],"logprobs":[]}`...)
	}
	return s.end(dst, "response.content_part.done", b)
}

func (s *Stream) closeMessage(dst []byte, status string) []byte {
	if s.message == nil {
		return dst
	}
	dst = s.closePart(dst)
	it := s.message
	s.message = nil
	it.status = status
	return s.emitItem(dst, "response.output_item.done", it)
}

// callFor finds the call a tool call delta belongs to, or starts one.
func (s *Stream) callFor(tc gjson.Result) *call {
	idx, id := tc.Get("index"), tc.Get("id").String()
	switch {
	case idx.Type == gjson.Number:
		i := int(idx.Int())
		for _, o := range s.calls {
			// Some upstreams reuse index 0 for every call; a new id then
			// means a new call.
			if o.hasIndex && o.index == i && !o.done && (id == "" || o.chatID == "" || o.chatID == id) {
				return o
			}
		}
		s.calls = append(s.calls, &call{index: i, hasIndex: true})
	case id != "":
		for _, o := range s.calls {
			if o.chatID == id && !o.done {
				return o
			}
		}
		s.calls = append(s.calls, &call{})
	default:
		if n := len(s.calls); n > 0 && !s.calls[n-1].done {
			return s.calls[n-1]
		}
		s.calls = append(s.calls, &call{})
	}
	return s.calls[len(s.calls)-1]
}

func (s *Stream) toolDelta(dst []byte, tc gjson.Result) []byte {
	c := s.callFor(tc)
	if id := tc.Get("id"); id.Type == gjson.String && id.Str != "" && c.chatID == "" {
		c.chatID = id.Str
	}
	fn := tc.Get("function")
	if !fn.Exists() {
		fn = tc // legacy function_call delta
	}
	if n := fn.Get("name"); n.Type == gjson.String && n.Str != "" && c.name == "" {
		c.name = n.Str
	}
	args := fn.Get("arguments").String()
	if c.it == nil {
		if c.name == "" {
			c.pending = append(c.pending, args...)
			return dst
		}
		dst = s.openCall(dst, c)
	}
	return s.callArgs(dst, c, args)
}

// openCall adds the call's output item and replays arguments that came
// before its name.
func (s *Stream) openCall(dst []byte, c *call) []byte {
	dst = s.closeReasoning(dst, "completed")
	dst = s.closeMessage(dst, "completed")
	c.it = s.res.addCall(c.chatID, c.name, nil)
	c.it.status = "in_progress"
	dst = s.emitItem(dst, "response.output_item.added", c.it)
	pending := string(c.pending)
	c.pending = nil
	return s.callArgs(dst, c, pending)
}

func (s *Stream) callArgs(dst []byte, c *call, args string) []byte {
	if args == "" {
		return dst
	}
	c.it.args = append(c.it.args, args...)
	if c.it.kind != kindFunctionCall {
		return dst // a custom call's input is sent whole at the end
	}
	b := s.begin("response.function_call_arguments.delta")
	b = appendItemRef(b, c.it)
	b = append(b, `,"delta":`...)
	b = appendString(b, args)
	return s.end(dst, "response.function_call_arguments.delta", b)
}

func (s *Stream) closeCall(dst []byte, c *call, status string) []byte {
	c.done = true
	it := c.it
	if it.kind == kindCustomCall {
		input := customInput(it.args)
		if input != "" {
			b := s.begin("response.custom_tool_call_input.delta")
			b = appendItemRef(b, it)
			b = append(b, `,"delta":`...)
			b = appendString(b, input)
			dst = s.end(dst, "response.custom_tool_call_input.delta", b)
		}
		b := s.begin("response.custom_tool_call_input.done")
		b = appendItemRef(b, it)
		b = append(b, `,"input":`...)
		b = appendString(b, input)
		dst = s.end(dst, "response.custom_tool_call_input.done", b)
	} else {
		b := s.begin("response.function_call_arguments.done")
		b = appendItemRef(b, it)
		b = append(b, `,"name":`...)
		b = appendString(b, it.name)
		b = append(b, `,"arguments":`...)
		b = appendString(b, string(it.args))
		dst = s.end(dst, "response.function_call_arguments.done", b)
	}
	it.status = status
	return s.emitItem(dst, "response.output_item.done", it)
}

// closeAll closes every open item in output order. When the finish was a
// truncation, the last item is the one cut short and is marked incomplete.
func (s *Stream) closeAll(dst []byte) []byte {
	for _, c := range s.calls {
		if !c.done && c.it == nil {
			dst = s.openCall(dst, c)
		}
	}
	var open []*item
	if s.reasoning != nil {
		open = append(open, s.reasoning)
	}
	if s.message != nil {
		open = append(open, s.message)
	}
	for _, c := range s.calls {
		if !c.done {
			open = append(open, c.it)
		}
	}
	slices.SortFunc(open, func(a, b *item) int { return a.index - b.index })
	status, _ := statusFor(s.finish)
	for i, it := range open {
		st := "completed"
		if status == "incomplete" && i == len(open)-1 {
			st = "incomplete"
		}
		switch {
		case it == s.reasoning:
			dst = s.closeReasoning(dst, st)
		case it == s.message:
			dst = s.closeMessage(dst, st)
		default:
			for _, c := range s.calls {
				if c.it == it {
					dst = s.closeCall(dst, c, st)
				}
			}
		}
	}
	return dst
}

// begin starts an event's JSON in the scratch buffer.
func (s *Stream) begin(typ string) []byte {
	b := append(s.buf[:0], `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","sequence_number":`...)
	b = strconv.AppendInt(b, int64(s.seq), 10)
	s.seq++
	return b
}

// end closes the event's JSON and writes it to dst as an SSE event.
func (s *Stream) end(dst []byte, typ string, b []byte) []byte {
	b = append(b, '}')
	s.buf = b
	return sse.Append(dst, typ, b)
}

func (s *Stream) emitItem(dst []byte, typ string, it *item) []byte {
	b := s.begin(typ)
	b = append(b, `,"output_index":`...)
	b = strconv.AppendInt(b, int64(it.index), 10)
	raw, err := marshal(it.json())
	if err != nil { // cannot happen: item JSON is built from strings only
		raw = []byte("null")
	}
	b = append(b, `,"item":`...)
	b = append(b, raw...)
	return s.end(dst, typ, b)
}

func (s *Stream) emitResponse(dst []byte, typ, status, reason string, e *errorJSON) []byte {
	b := s.begin(typ)
	raw, err := marshal(s.res.object(status, reason, e))
	if err != nil { // cannot happen: echoed values come from valid JSON
		raw = []byte("null")
	}
	b = append(b, `,"response":`...)
	b = append(b, raw...)
	return s.end(dst, typ, b)
}

func appendItemRef(b []byte, it *item) []byte {
	b = append(b, `,"item_id":`...)
	b = appendString(b, it.id)
	b = append(b, `,"output_index":`...)
	return strconv.AppendInt(b, int64(it.index), 10)
}

func appendContentIndex(b []byte, i int) []byte {
	b = append(b, `,"content_index":`...)
	return strconv.AppendInt(b, int64(i), 10)
}

// appendString appends s as a JSON string, escaping as encoding/json does
// (without HTML escaping) and replacing invalid UTF-8 with U+FFFD.
func appendString(b []byte, s string) []byte { return translate.AppendJSONString(b, s) }
