package anthropic

import (
	"sort"

	"github.com/tidwall/gjson"

	"omniroute/backend/jsonv"
	"omniroute/backend/translate"
	"omniroute/backend/translate/sse"
)

// NewStreamFromChat returns a translator from OpenAI chat.completion.chunk
// events to an Anthropic Messages event stream: message_start, ping,
// content_block_start/delta/stop per block (thinking, text, tool_use),
// message_delta with stop_reason and usage, message_stop. model names the
// answer until a chunk reports the upstream's own model.
//
// Blocks are opened and closed one at a time, as Anthropic does: a tool call
// is streamed live as soon as its name is known; if an upstream interleaves
// argument pieces of a tool call whose block was already closed, Event
// returns an *UpstreamStreamError rather than corrupt the arguments.
func NewStreamFromChat(model string) translate.StreamTranslator {
	return &streamFromChat{model: model, open: -1}
}

type fromChatTool struct {
	block   int    // Anthropic block index once started
	id      string // as the upstream sent it
	name    string
	pending []byte // arguments received before the name
	started bool
	closed  bool
}

type streamFromChat struct {
	model     string
	id        string
	gotModel  bool
	started   bool // message_start was sent
	open      int  // index of the open block, -1 for none
	openKind  byte
	openTool  int // OpenAI index of the open tool call
	next      int // next block index
	tools     map[int64]*fromChatTool
	hasTools  bool
	refused   bool // the upstream streamed a refusal (delta.refusal)
	finish    string
	sawFinish bool
	sawDone   bool
	closed    bool // message_stop was sent
	failed    bool
	usage     tokens
	buf       []byte
}

// Complete reports whether the upstream sent a finish_reason or [DONE] and no error.
func (s *streamFromChat) Complete() bool { return !s.failed && (s.sawFinish || s.sawDone) }

// Usage returns the usage from the upstream's usage chunk(s).
func (s *streamFromChat) Usage() translate.Usage { return s.usage.public() }

// End writes message_delta and message_stop if the upstream ended properly
// (finish_reason then end of stream) and they were not written yet.
func (s *streamFromChat) End(dst []byte) []byte {
	if !s.Complete() || s.closed {
		return dst
	}
	return s.close(dst)
}

// Event translates one upstream chunk; an upstream error becomes an *UpstreamStreamError.
func (s *streamFromChat) Event(dst []byte, ev sse.Event) ([]byte, error) {
	if s.closed || s.failed {
		return dst, nil
	}
	if ev.Comment {
		if s.started {
			dst = sse.Append(dst, "ping", []byte(`{"type":"ping"}`))
		}
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
	var choices, usage, errObj gjson.Result
	root.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "id":
			if v.Type == gjson.String && s.id == "" {
				s.id = v.Str
			}
		case "model":
			if v.Type == gjson.String && v.Str != "" && !s.gotModel {
				s.model, s.gotModel = v.Str, true
			}
		case "choices":
			choices = v
		case "usage":
			usage = v
		case "error":
			errObj = v
		}
		return true
	})
	if errObj.Exists() && errObj.Type != gjson.Null || ev.Event == "error" {
		s.failed = true
		msg := errObj.Get("message").String()
		if msg == "" && errObj.Type == gjson.String {
			msg = errObj.Str
		}
		if msg == "" {
			msg = "the upstream reported an error"
		}
		code := errObj.Get("code").String()
		if code == "" {
			code = errObj.Get("type").String()
		}
		return dst, &UpstreamStreamError{Code: code, Message: msg}
	}
	dst = s.start(dst)
	if usage.IsObject() {
		s.usage.readChat(usage)
	}
	var choice gjson.Result
	each(choices, func(_ int, c gjson.Result) bool {
		if i := c.Get("index"); !i.Exists() || i.Int() == 0 {
			choice = c
			return false
		}
		return true
	})
	if !choice.IsObject() || s.sawFinish {
		return dst, nil
	}
	var err error
	if dst, err = s.delta(dst, choice.Get("delta")); err != nil {
		s.failed = true
		return dst, err
	}
	if f := choice.Get("finish_reason"); f.Type == gjson.String && f.Str != "" {
		s.sawFinish, s.finish = true, f.Str
		dst = s.closeBlocks(dst)
	}
	return dst, nil
}

// delta translates one choice delta.
func (s *streamFromChat) delta(dst []byte, d gjson.Result) ([]byte, error) {
	if !d.IsObject() {
		return dst, nil
	}
	var content, reasoning, reasoningAlt, refusal, calls, signed gjson.Result
	d.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "content":
			content = v
		case "reasoning_content":
			reasoning = v
		case "reasoning":
			reasoningAlt = v
		case "refusal":
			refusal = v
		case "tool_calls":
			calls = v
		case "thinking_blocks":
			signed = v
		}
		return true
	})
	if reasoning.Type != gjson.String || reasoning.Str == "" {
		reasoning = reasoningAlt
	}
	if reasoning.Type == gjson.String && reasoning.Str != "" {
		dst = s.text(dst, kindThinking, reasoning.Str)
	}
	if signed.IsArray() {
		dst = s.thinkingBlocks(dst, signed)
	}
	if content.Type == gjson.String && content.Str != "" {
		dst = s.text(dst, kindText, content.Str)
	}
	if refusal.Type == gjson.String && refusal.Str != "" {
		s.refused = true
		dst = s.text(dst, kindText, refusal.Str)
	}
	var err error
	each(calls, func(i int, c gjson.Result) bool {
		dst, err = s.toolDelta(dst, c, int64(i))
		return err == nil
	})
	return dst, err
}

// thinkingBlocks streams a delta's thinking_blocks (LiteLLM's form, as an
// upstream that signs its reasoning sends them; their text comes as
// reasoning_content): a signature ends the thinking block with a
// signature_delta, a redacted_thinking block is started with its data and
// stopped.
func (s *streamFromChat) thinkingBlocks(dst []byte, blocks gjson.Result) []byte {
	each(blocks, func(_ int, b gjson.Result) bool {
		switch b.Get("type").String() {
		case "thinking":
			sig := b.Get("signature")
			if sig.Type != gjson.String || sig.Str == "" {
				return true
			}
			if s.open < 0 || s.openKind != kindThinking {
				dst = s.closeOpen(dst)
				s.open, s.openKind = s.next, kindThinking
				s.next++
				dst = s.blockStart(dst, `{"type":"thinking","thinking":"","signature":""}`)
			}
			s.buf = append(s.buf[:0], `{"type":"content_block_delta","index":`...)
			s.buf = appendInt(s.buf, s.open)
			s.buf = append(s.buf, `,"delta":{"type":"signature_delta","signature":`...)
			s.buf = appendString(s.buf, sig.Str)
			s.buf = append(s.buf, `}}`...)
			dst = sse.Append(dst, "content_block_delta", s.buf)
			dst = s.closeOpen(dst) // the signature is a thinking block's last delta
		case "redacted_thinking":
			data := b.Get("data")
			if data.Type != gjson.String || data.Str == "" {
				return true
			}
			dst = s.closeOpen(dst)
			s.open, s.openKind = s.next, kindThinking
			s.next++
			block := append([]byte(`{"type":"redacted_thinking","data":`), appendString(nil, data.Str)...)
			dst = s.blockStart(dst, string(append(block, '}')))
			dst = s.closeOpen(dst)
		}
		return true
	})
	return dst
}

// start sends message_start and a ping once.
func (s *streamFromChat) start(dst []byte) []byte {
	if s.started {
		return dst
	}
	s.started = true
	if s.id == "" {
		s.id = newID("msg_")
	}
	s.buf = append(s.buf[:0], `{"type":"message_start","message":{"id":`...)
	s.buf = appendString(s.buf, s.id)
	s.buf = append(s.buf, `,"type":"message","role":"assistant","model":`...)
	s.buf = appendString(s.buf, s.model)
	s.buf = append(s.buf, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":`...)
	u := s.usage
	u.Output = 0
	s.buf = appendAnthropicUsage(s.buf, u)
	s.buf = append(s.buf, `}}`...)
	dst = sse.Append(dst, "message_start", s.buf)
	return sse.Append(dst, "ping", []byte(`{"type":"ping"}`))
}

// text appends a text or thinking delta, opening a block of that kind if needed.
func (s *streamFromChat) text(dst []byte, kind byte, t string) []byte {
	if s.open < 0 || s.openKind != kind {
		dst = s.closeOpen(dst)
		s.open, s.openKind = s.next, kind
		s.next++
		if kind == kindThinking {
			dst = s.blockStart(dst, `{"type":"thinking","thinking":"","signature":""}`)
		} else {
			dst = s.blockStart(dst, `{"type":"text","text":""}`)
		}
	}
	s.buf = append(s.buf[:0], `{"type":"content_block_delta","index":`...)
	s.buf = appendInt(s.buf, s.open)
	if kind == kindThinking {
		s.buf = append(s.buf, `,"delta":{"type":"thinking_delta","thinking":`...)
	} else {
		s.buf = append(s.buf, `,"delta":{"type":"text_delta","text":`...)
	}
	s.buf = appendString(s.buf, t)
	s.buf = append(s.buf, `}}`...)
	return sse.Append(dst, "content_block_delta", s.buf)
}

func (s *streamFromChat) blockStart(dst []byte, block string) []byte {
	s.buf = append(s.buf[:0], `{"type":"content_block_start","index":`...)
	s.buf = appendInt(s.buf, s.open)
	s.buf = append(s.buf, `,"content_block":`...)
	s.buf = append(s.buf, block...)
	s.buf = append(s.buf, '}')
	return sse.Append(dst, "content_block_start", s.buf)
}

// closeOpen stops the open block, if any.
func (s *streamFromChat) closeOpen(dst []byte) []byte {
	if s.open < 0 {
		return dst
	}
	s.buf = append(s.buf[:0], `{"type":"content_block_stop","index":`...)
	s.buf = appendInt(s.buf, s.open)
	s.buf = append(s.buf, '}')
	dst = sse.Append(dst, "content_block_stop", s.buf)
	if s.openKind == kindTool {
		if t := s.tools[int64(s.openTool)]; t != nil {
			t.closed = true
		}
	}
	s.open = -1
	return dst
}

// toolDelta handles one entry of delta.tool_calls; pos is its array position,
// the index when the upstream omits one.
func (s *streamFromChat) toolDelta(dst []byte, c gjson.Result, pos int64) ([]byte, error) {
	if !c.IsObject() {
		return dst, nil
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
		s.hasTools = true
	}
	if id := c.Get("id"); id.Type == gjson.String && id.Str != "" && t.id == "" {
		t.id = id.Str
	}
	fn := c.Get("function")
	if name := fn.Get("name"); name.Type == gjson.String && name.Str != "" && t.name == "" {
		t.name = name.Str
	}
	var args string
	if a := fn.Get("arguments"); a.Type == gjson.String {
		args = a.Str
	} else if a.IsObject() {
		args = string(compactRaw(a.Raw))
	}
	switch {
	case t.closed:
		if args != "" {
			return dst, &UpstreamStreamError{Code: "stream_protocol_error",
				Message: "the upstream interleaved arguments of a tool call that had already ended"}
		}
		return dst, nil
	case !t.started:
		t.pending = append(t.pending, args...)
		if t.name == "" {
			return dst, nil
		}
		return s.startTool(dst, idx, t), nil
	}
	if args != "" {
		dst = s.toolArgs(dst, t.block, args)
	}
	return dst, nil
}

// startTool opens a tool_use block and flushes arguments received so far.
func (s *streamFromChat) startTool(dst []byte, idx int64, t *fromChatTool) []byte {
	dst = s.closeOpen(dst)
	t.started = true
	t.block = s.next
	s.next++
	s.open, s.openKind, s.openTool = t.block, kindTool, int(idx)
	if t.id == "" {
		t.id = newID("toolu_")
	}
	s.buf = append(s.buf[:0], `{"type":"tool_use","id":`...)
	s.buf = appendString(s.buf, t.id)
	s.buf = append(s.buf, `,"name":`...)
	s.buf = appendString(s.buf, t.name)
	s.buf = append(s.buf, `,"input":{}}`...)
	block := string(s.buf)
	dst = s.blockStart(dst, block)
	if len(t.pending) > 0 {
		dst = s.toolArgs(dst, t.block, string(t.pending))
		t.pending = nil
	}
	return dst
}

func (s *streamFromChat) toolArgs(dst []byte, block int, args string) []byte {
	s.buf = append(s.buf[:0], `{"type":"content_block_delta","index":`...)
	s.buf = appendInt(s.buf, block)
	s.buf = append(s.buf, `,"delta":{"type":"input_json_delta","partial_json":`...)
	s.buf = appendString(s.buf, args)
	s.buf = append(s.buf, `}}`...)
	return sse.Append(dst, "content_block_delta", s.buf)
}

// closeBlocks stops the open block and emits tool calls that never got a name.
func (s *streamFromChat) closeBlocks(dst []byte) []byte {
	dst = s.closeOpen(dst)
	var waiting []int64
	for idx, t := range s.tools {
		if !t.started {
			waiting = append(waiting, idx)
		}
	}
	sort.Slice(waiting, func(i, j int) bool { return waiting[i] < waiting[j] })
	for _, idx := range waiting {
		dst = s.startTool(dst, idx, s.tools[idx])
		dst = s.closeOpen(dst)
	}
	return dst
}

// close writes the end of the message: open blocks, message_delta, message_stop.
func (s *streamFromChat) close(dst []byte) []byte {
	if s.closed {
		return dst
	}
	dst = s.start(dst)
	dst = s.closeBlocks(dst)
	s.closed = true
	s.buf = append(s.buf[:0], `{"type":"message_delta","delta":{"stop_reason":"`...)
	if s.refused {
		s.buf = append(s.buf, "refusal"...)
	} else {
		s.buf = append(s.buf, stopReason(s.finish, s.hasTools)...)
	}
	s.buf = append(s.buf, `","stop_sequence":null},"usage":`...)
	s.buf = appendAnthropicUsage(s.buf, s.usage)
	s.buf = append(s.buf, '}')
	dst = sse.Append(dst, "message_delta", s.buf)
	return sse.Append(dst, "message_stop", []byte(`{"type":"message_stop"}`))
}
