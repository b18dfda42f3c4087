package gateway

import (
	"bytes"
	"errors"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"omniroute/backend/resilience/verdict"
	"omniroute/backend/translate"
	"omniroute/backend/translate/sse"
)

// Restart with a verified splice (issue 40): when no target could continue a
// broken stream from a prefill, the next eligible target is sent the
// original request (no prefill) and its answer is held back until its text
// has reproduced, byte for byte, the text the client already has; only what
// follows is relayed, into the same client stream. A deterministic answer
// (temperature 0, a cached answer, the same model behind two connections) is
// thus finished; an answer that diverges before reproducing the delivered
// text is dropped before any of it reaches the client, which gets the
// original failure exactly as without the restart. The attempt log says which
// happened (AttemptRecord.Splice).

// Values of AttemptRecord.Splice.
const (
	spliceRestarted = "restarted-spliced"
	spliceDiverged  = "restart-diverged"
)

// errRestartDiverged stops a restart whose text left the delivered text.
var errRestartDiverged = errors.New("the restarted answer diverged from the delivered text")

// restartStream tries the restart on the plan's other targets, in order (a
// target that ignored or refused a prefill included: it is asked no prefill
// now). It returns true when the client received a complete answer. A
// restart that diverged, or wrote to the client and then broke, ends the
// tries: the client gets the original failure.
func (g *Gateway) restartStream(s *streamState, broke verdict.Verdict) bool {
	a := s.a
	req := a.req
	switch req.format {
	case translate.Chat, translate.Messages, translate.Responses, translate.Gemini: // Gemini: SSE only (continuationOn)
	default:
		return false
	}
	body, err := withoutReasoning(req.format, req.body)
	if err != nil {
		return false
	}
	for _, cand := range req.plan.Candidates {
		if cand.Key() == a.cand.Key() {
			continue
		}
		if len(req.attempts) >= g.general().MaxAttempts || a.r.Context().Err() != nil {
			return false
		}
		ticket, x := g.engine.Admit(cand)
		if x != nil {
			continue
		}
		wrote, ok, diverged := g.continueOn(a, s.rc, cand, ticket, body, len(a.delivered), &s.blocks, &s.resp, broke, true)
		if ok {
			return true
		}
		if wrote || diverged {
			return false
		}
	}
	return false
}

// withoutReasoning is the client's request with its reasoning options left
// out (as for a continuation): the client has its reasoning already, and a
// restart without it keeps the answer's blocks as the splice reads them.
func withoutReasoning(f translate.Format, body []byte) ([]byte, error) {
	out := body
	var err error
	if f == translate.Gemini {
		// Its thinking options go; the stream flag is the URL's.
		for _, option := range []string{"generationConfig.thinkingConfig", "generation_config.thinking_config"} {
			if out, err = sjson.DeleteBytes(out, option); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	for _, option := range reasoningOptions(f) {
		if out, err = sjson.DeleteBytes(out, option); err != nil {
			return nil, err
		}
	}
	if f == translate.Messages {
		if out, err = withoutThinkingEdits(out); err != nil {
			return nil, err
		}
	}
	return sjson.SetBytes(out, "stream", true)
}

// restartDiverged ends a restart attempt whose text left the delivered text:
// nothing of it reached the client, and the target is blamed for nothing (it
// answered; its answer was another one).
func (a *attemptCtx) restartDiverged(sp *restartSplice) {
	a.req.relayed -= sp.s.sent // none of its text reached the client
	a.ticket.Abandon()
	a.rec.Verdict, a.rec.Code, a.rec.Splice = "diverged", "RESTART_DIVERGED", spliceDiverged
	a.rec.Detail = "the restarted answer diverged from the delivered text after " + strconv.Itoa(sp.got) + " of " + strconv.Itoa(len(sp.delivered)) + " bytes"
	a.rec.LatencyMs = msSince(a.t0, a.g.clk.Now())
	a.req.attempts = append(a.req.attempts, a.rec)
}

// restartSplice is the filter of a restart's client bytes (Chat, Messages,
// Responses or Gemini events): until the answer's text has reproduced delivered it lets nothing
// through (the frames that open the answer are kept for that moment); the
// event that completes the delivered text goes on with only its new text,
// and every later event as it is (a Messages event's block index counted
// from the restart's text block). Text that departs from delivered, a tool
// call, or the answer's end before delivered was reproduced, diverges: the
// relay is stopped and nothing is let through.
type restartSplice struct {
	format    translate.Format
	delivered string
	s         *streamState
	parser    clientEvents
	got       int // bytes of delivered reproduced so far
	matched   bool
	diverged  bool
	held      []byte // opening frames kept for the match (Messages)
	out       []byte
	textIndex int64 // Messages: the restart's text block, -1 before its start
}

func newRestartSplice(f translate.Format, delivered string, s *streamState) *restartSplice {
	return &restartSplice{format: f, delivered: delivered, s: s, textIndex: -1}
}

// filter wraps next (the opening filter, which drops the frames that open
// an answer the client already has).
func (r *restartSplice) filter(next func([]byte) []byte) func([]byte) []byte {
	return func(in []byte) []byte {
		if r.diverged {
			return in[:0]
		}
		r.out = r.out[:0]
		_ = r.parser.Feed(in, r.event)
		if r.diverged {
			r.s.streamErr = errRestartDiverged // stops the relay
			return in[:0]
		}
		return next(append(in[:0], r.out...))
	}
}

// event takes one client event of the restarted answer.
func (r *restartSplice) event(ev sse.Event) bool {
	if ev.Comment {
		return true
	}
	switch r.format {
	case translate.Messages:
		r.messagesEvent(ev)
	case translate.Responses:
		r.responsesEvent(ev)
	case translate.Gemini:
		r.geminiEvent(ev)
	default:
		r.chatEvent(ev)
	}
	return !r.diverged
}

func (r *restartSplice) chatEvent(ev sse.Event) {
	if r.matched {
		r.out = r.parser.append(r.out, ev.Event, ev.Data)
		return
	}
	if ev.IsDone() {
		r.diverged = true // the answer ended short of the delivered text
		return
	}
	choice := gjson.GetBytes(ev.Data, "choices.0")
	if choice.Get("delta.tool_calls").Exists() {
		r.diverged = true
		return
	}
	data := ev.Data
	if t := choice.Get("delta.content"); t.Type == gjson.String && t.Str != "" {
		rest, ok := r.take(t.Str)
		if !ok {
			return
		}
		if r.matched {
			fr := choice.Get("finish_reason")
			if rest == "" && (!fr.Exists() || fr.Type == gjson.Null) {
				return // nothing new in it
			}
			data, _ = sjson.SetBytes(data, "choices.0.delta.content", rest)
			r.out = r.parser.append(r.out, ev.Event, data)
			return
		}
	}
	if fr := choice.Get("finish_reason"); fr.Exists() && fr.Type != gjson.Null {
		r.diverged = true // finished before reproducing the delivered text
	}
	// Role, reasoning and usage chunks before the match: the client has its own.
}

func (r *restartSplice) messagesEvent(ev sse.Event) {
	name := messagesEventName(ev.Event, ev.Data)
	data := ev.Data
	index := gjson.GetBytes(data, "index")
	if strings.HasPrefix(name, "content_block_") && index.Type == gjson.Number && r.textIndex >= 0 && index.Int() >= r.textIndex {
		// The restart's text block is the client's: its index counted from it.
		data, _ = sjson.SetBytes(data, "index", index.Int()-r.textIndex)
	}
	if r.matched {
		r.out = r.parser.append(r.out, ev.Event, data)
		return
	}
	switch name {
	case "message_start":
		r.held = r.parser.append(r.held, ev.Event, data) // its usage, for the end
	case "content_block_start":
		switch gjson.GetBytes(data, "content_block.type").String() {
		case "text":
			if r.textIndex < 0 && index.Type == gjson.Number {
				r.textIndex = index.Int()
				data, _ = sjson.SetBytes(data, "index", 0)
				r.held = r.parser.append(r.held, ev.Event, data)
			}
		case "thinking", "redacted_thinking":
		default:
			r.diverged = true // a tool call: not the delivered text
		}
	case "content_block_delta":
		delta := gjson.GetBytes(data, "delta")
		switch delta.Get("type").String() {
		case "text_delta":
			rest, ok := r.take(delta.Get("text").String())
			if ok && r.matched {
				r.out = append(r.out, r.held...)
				r.held = r.held[:0]
				if rest != "" {
					data, _ = sjson.SetBytes(data, "delta.text", rest)
					r.out = r.parser.append(r.out, ev.Event, data)
				}
			}
		case "thinking_delta", "signature_delta":
		default:
			r.diverged = true
		}
	case "content_block_stop":
		if r.textIndex >= 0 && index.Int() == r.textIndex {
			r.diverged = true // the text block closed short of the delivered text
		}
	case "message_delta", "message_stop":
		r.diverged = true
	}
}

// responsesEvent takes a Responses client's restarted answer (the filter
// after it, responsesSplice, rewrites what passes into the client's own
// response: its response and item ids, output and content indexes and
// sequence numbers, and the whole text in the done events). Before the
// match nothing passes: the opening events and a reasoning item are the
// client's already. The output_text.delta that completes the delivered text
// goes on with only its new text, every later event as it is. An item other
// than a message or reasoning (a function call), a part other than text, or
// the text, the message or the response ending short of the delivered text
// diverges.
func (r *restartSplice) responsesEvent(ev sse.Event) {
	if r.matched {
		r.out = r.parser.append(r.out, ev.Event, ev.Data)
		return
	}
	if len(ev.Data) == 0 || ev.Data[0] != '{' {
		return
	}
	typ := gjson.GetBytes(ev.Data, "type").String()
	switch typ {
	case "response.output_text.delta":
		rest, ok := r.take(gjson.GetBytes(ev.Data, "delta").String())
		if ok && r.matched && rest != "" {
			data, _ := sjson.SetBytes(ev.Data, "delta", rest)
			r.out = r.parser.append(r.out, ev.Event, data)
		}
	case "response.output_item.added", "response.output_item.done":
		switch gjson.GetBytes(ev.Data, "item.type").String() {
		case "reasoning":
		case "message":
			if typ == "response.output_item.done" {
				r.diverged = true // the message closed short of the delivered text
			}
		default:
			r.diverged = true // a function call: not the delivered text
		}
	case "response.content_part.added":
		if gjson.GetBytes(ev.Data, "part.type").String() != "output_text" {
			r.diverged = true // a refusal
		}
	case "response.output_text.done", "response.content_part.done", "response.refusal.delta",
		"response.completed", "response.incomplete", "response.failed":
		r.diverged = true
	default:
		if strings.HasPrefix(typ, "response.function_call") || strings.HasPrefix(typ, "response.custom_tool_call") {
			r.diverged = true
		}
	}
}

// geminiEvent takes a Gemini client's restarted chunk (each chunk is whole,
// as a Chat chunk): before the match its thought parts, and chunks with no
// text (usage), are dropped; the chunk that completes the delivered text
// goes on with only its new text (and the parts after it), every later
// chunk as it is. A function call, text departing from the delivered text, a
// finish reason or a blocked prompt before the match diverges.
func (r *restartSplice) geminiEvent(ev sse.Event) {
	if r.matched {
		r.out = r.parser.append(r.out, ev.Event, ev.Data)
		return
	}
	if len(ev.Data) == 0 || ev.Data[0] != '{' {
		return
	}
	cands := gjson.GetBytes(ev.Data, "candidates")
	if !cands.Exists() {
		if gjson.GetBytes(ev.Data, "promptFeedback.blockReason").String() != "" ||
			gjson.GetBytes(ev.Data, "prompt_feedback.block_reason").String() != "" {
			r.diverged = true
		}
		return
	}
	cand := cands.Get("0")
	var kept [][]byte // the parts the client gets of this chunk
	for _, p := range cand.Get("content.parts").Array() {
		if r.matched {
			kept = append(kept, []byte(p.Raw))
			continue
		}
		if p.Get("functionCall").Exists() || p.Get("function_call").Exists() {
			r.diverged = true
			return
		}
		if p.Get("thought").Bool() {
			continue
		}
		if t := p.Get("text"); t.Type == gjson.String && t.Str != "" {
			rest, ok := r.take(t.Str)
			if !ok {
				return
			}
			if r.matched && rest != "" {
				part, _ := sjson.SetBytes([]byte(p.Raw), "text", rest)
				kept = append(kept, part)
			}
		}
	}
	finish := cand.Get("finishReason").String() + cand.Get("finish_reason").String()
	if !r.matched {
		if finish != "" {
			r.diverged = true // finished before reproducing the delivered text
		}
		return
	}
	if len(kept) == 0 {
		if finish == "" {
			return // nothing new in it
		}
		kept = append(kept, []byte(`{"text":""}`))
	}
	parts := append([]byte{'['}, bytes.Join(kept, []byte{','})...)
	data, err := sjson.SetRawBytes(ev.Data, "candidates.0.content.parts", append(parts, ']'))
	if err != nil {
		r.diverged = true
		return
	}
	r.out = r.parser.append(r.out, ev.Event, data)
}

// take compares the next text of the restarted answer with the delivered
// text: it returns what t holds past the delivered text (once reproduced)
// and false when t departs from it (diverged).
func (r *restartSplice) take(t string) (string, bool) {
	want := r.delivered[r.got:]
	if len(t) < len(want) {
		if !strings.HasPrefix(want, t) {
			r.diverged = true
			return "", false
		}
		r.got += len(t)
		return "", true
	}
	if !strings.HasPrefix(t, want) {
		r.diverged = true
		return "", false
	}
	r.got, r.matched = len(r.delivered), true
	return t[len(want):], true
}
