package gateway

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"omniroute/backend/providers"
	"omniroute/backend/resilience/verdict"
	"omniroute/backend/routing"
	"omniroute/backend/translate"
	tgemini "omniroute/backend/translate/gemini"
	"omniroute/backend/translate/sse"
)

// Safe stream continuation: when a committed stream breaks (cut, stall,
// upstream error event) after some assistant text reached the client, another
// eligible target that accepts an assistant prefill (providers.Provider.
// AssistantPrefill, per model via Provider.Prefills) is sent the original request plus the delivered text as a
// trailing assistant message, and its answer is streamed into the same client
// stream without its opening frames: the client receives one complete answer
// with one usage. When no target can continue, or the continuation is refused
// or breaks before its own first byte, the client gets the original failure
// exactly as without continuation; a continuation that breaks after writing
// ends with the original failure's error event too, never with a clean end.

// continuationOn reports whether a stream of this request could be continued
// (the setting, a plan to pick from, a client format a splice keeps valid:
// Responses clients read a stateful item sequence a spliced answer would break).
func (g *Gateway) continuationOn(req *request) bool {
	if g.resil == nil || !g.resil().Failover.StreamContinuation || !req.planned {
		return false
	}
	// A Gemini client's SSE stream splices like Chat's (each chunk whole); its
	// JSON-array framing is not SSE, which the splice filters read.
	// Ollama's NDJSON lines splice like Chat's chunks (see clientEvents).
	return req.format == translate.Chat || req.format == translate.Messages || req.format == translate.Responses ||
		req.format == translate.Gemini && req.gemini.framing == tgemini.FramingSSE ||
		req.format == translate.OllamaChat || req.format == translate.OllamaGenerate
}

// continuable reports whether this broken stream may be continued: it
// relayed text and no tool call, which no prefill can carry, and is no
// refusal (refusalEnd: a continuation would go on with a refused answer as
// if it were one the model was writing). Reasoning does
// not stop it: a Chat client's reasoning and text are separate fields, and
// a Messages client's continuation goes on in its text block (see
// clientBlocks.continuation), unless reasoning came after the text.
func (g *Gateway) continuable(s *streamState, v verdict.Verdict) bool {
	if !s.keepText || v.Kind == verdict.KindClientCanceled || s.sawToolCall || s.refused || len(bytes.TrimSpace(s.text)) == 0 {
		return false
	}
	switch s.a.req.format {
	case translate.Messages:
		_, _, ok := s.blocks.continuation()
		return ok
	case translate.Responses:
		return s.resp.continuable()
	}
	return true
}

// continueStream tries to finish a broken committed stream on another target.
// It returns true when the client received a complete answer.
func (g *Gateway) continueStream(s *streamState, broke verdict.Verdict) bool {
	if !g.continuable(s, broke) {
		return false
	}
	a := s.a
	req := a.req
	delivered := string(s.text)
	prefill := strings.TrimRightFunc(delivered, isSpace) // a prefill may not end in white space
	a.deliveredEndsInSpace, a.delivered = prefill != delivered, delivered
	body, err := withPrefill(req.format, req.body, prefill)
	if err != nil {
		return false
	}
	for _, cand := range req.plan.Candidates {
		if cand.Key() == a.cand.Key() || !g.mayPrefill(cand) {
			continue
		}
		if len(req.attempts) >= g.general().MaxAttempts || a.r.Context().Err() != nil {
			return false
		}
		ticket, x := g.engine.Admit(cand)
		if x != nil {
			continue
		}
		wrote, ok, _ := g.continueOn(a, s.rc, cand, ticket, body, len(delivered), &s.blocks, &s.resp, broke, false)
		if ok {
			return true
		}
		if wrote {
			return false // the client has part of a continuation: end with the original failure
		}
	}
	return g.restartStream(s, broke)
}

// continueOn runs one continuation attempt. wrote reports whether any of its
// bytes reached the client; ok whether the answer completed. blocks is what
// a Messages client has of its content blocks.
//
// restart makes it a restart (see restartStream): clientBody is the original
// request, no prefill is asked for, and its text is held until it reproduced
// the delivered text; diverged reports one whose text did not (its attempt
// is logged "restart-diverged" and blames nobody).
func (g *Gateway) continueOn(prev *attemptCtx, rc *http.ResponseController, cand routing.Candidate, ticket *routing.Ticket,
	clientBody []byte, from int, blocks *clientBlocks, client *clientResponse, broke verdict.Verdict, restart bool) (wrote, ok, diverged bool) {
	req := prev.req
	a := &attemptCtx{g: g, w: prev.w, r: prev.r, req: req, cand: cand, t0: g.clk.Now(), ticket: ticket,
		codec: codecFor(req.format, &cand.Conn.Provider, cand.Model),
		rec: AttemptRecord{ConnectionID: cand.Conn.ID, Provider: cand.Conn.BreakerKey, Model: cand.Model,
			ContinuedFromChars: from}}
	a.codec.gemini = req.gemini
	if translate.IsOllama(req.format) {
		// Ollama's requests reach every upstream through chat: the prefill
		// is added there (a generate request has no messages to add it to).
		a.codec.now, a.codec.prefill = g.wall.Now, strings.TrimRightFunc(prev.delivered, isSpace)
	}
	next, found := g.executors.For(cand.Conn.Provider.FormatOf(cand.Model))
	if !found {
		ticket.Abandon()
		return false, false, false
	}
	// As any attempt: a fresh OAuth token, the first-byte deadline, the
	// connection's egress address and the Anthropic client's protocol headers.
	firstByteTimeout := time.Duration(g.general().FirstByteTimeoutMs) * time.Millisecond
	exec := credentialed{next: next, creds: g.creds, conn: cand.Conn, deadline: a.t0.Add(firstByteTimeout)}
	body, err := a.codec.request(clientBody)
	if err == nil {
		body, err = targetBody(&cand.Conn.Provider, cand.Conn.Provider.FormatOf(cand.Model), a.codec, body)
	}
	if err == nil && !restart {
		body, err = prefillFlags(body, a.codec.upstream, g.prefillStyle(cand))
	}
	if err != nil {
		ticket.Abandon()
		return false, false, false
	}
	ctx, cancel := context.WithCancelCause(prev.r.Context())
	defer cancel(nil)
	a.ctx, a.cancel = ctx, cancel
	a.startTimer(firstByteTimeout, false)
	defer a.stopTimer()
	a.target = cand.Conn.Target(cand.Model)
	resp, err := exec.Do(g.egressContext(ctx, cand), &a.target,
		providers.Call{Body: body, Stream: true, Anthropic: a.codec.anthropicHeaders(prev.r.Header)})
	if err != nil {
		a.finish(g.classifyErr(ctx, prev.r, err, cand))
		return false, false, false
	}
	defer resp.Body.Close()
	if a.req.cap != nil {
		a.captureContinuation(resp)
	}
	a.rec.Status = resp.StatusCode
	if resp.StatusCode < 200 || resp.StatusCode > 299 || !isEventStream(resp) {
		errBody, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		v := redacted(g.upstreamVerdict(resp.StatusCode, resp.Header, errBody, prev.r, cand), prev.r, cand)
		if !restart && refusesPrefill(resp.StatusCode, errBody) {
			g.learnPrefill(cand, false) // never asked again for this model
		}
		if v.OK() {
			v = verdict.Verdict{Kind: verdict.KindServer, Code: "UPSTREAM_BAD_RESPONSE", Message: "the continuation was not a stream"}
		}
		a.finish(v)
		return false, false, false
	}
	s := a.newStreamState()
	defer s.release()
	// The connection is named too (a user tells two keys of one provider
	// apart by it), quoted: an SSE comment is one line.
	note := ": omniroute continued the answer on " + cand.Conn.Provider.ID + "/" + cand.Model + " after " +
		strconv.Itoa(from) + " characters (" + broke.Code + ") via connection " + strconv.Quote(cand.Conn.Name) + "\n\n"
	if req.format == translate.Gemini || translate.IsOllama(req.format) {
		// Google's SDK reads only data events: a comment line would stall its
		// SSE reader; an NDJSON stream has no comments. The log row says the
		// answer was continued.
		note = ""
	}
	var splice *restartSplice
	guard := newRepeatGuard(req.format, prev.delivered, s)
	if restart {
		guard.decided = true // the splice checks the whole delivered text itself
		// A Gemini or Ollama client gets no comment line (above).
		if note != "" {
			note = ": omniroute restarted the answer on " + cand.Conn.Provider.ID + "/" + cand.Model + " and spliced it after " +
				strconv.Itoa(from) + " characters (" + broke.Code + ") via connection " + strconv.Quote(cand.Conn.Name) + "\n\n"
		}
		splice = newRestartSplice(req.format, prev.delivered, s)
		opening := openingFilter(req.format, false, blocks)
		if req.format == translate.Responses {
			opening = responsesSplice(client, prev.delivered, false)
		}
		s.filter = announced(note, splice.filter(opening), &wrote)
	} else {
		opening := openingFilter(req.format, prev.deliveredEndsInSpace, blocks)
		if req.format == translate.Responses {
			opening = responsesSplice(client, prev.delivered, prev.deliveredEndsInSpace)
		}
		s.filter = announced(note, guard.filter(opening), &wrote)
	}
	s.armWatchdog()
	defer s.stopWatchdog()
	s.rc, s.committed = rc, true // the client stream is already open
	readErr, gone := s.pump(resp)
	req.relayed += s.sent
	if gone {
		a.finish(verdict.Verdict{Kind: verdict.KindClientCanceled, Code: verdict.CodeClientCanceled})
		return true, false, false
	}
	if guard.restarted {
		g.learnPrefill(cand, false) // it ignored the prefill and started over
		a.finish(verdict.Verdict{Kind: verdict.KindServer, Code: "CONTINUATION_RESTARTED",
			Message: "the continuation repeated the delivered text (the endpoint ignored the assistant prefill)"})
		return wrote, false, false
	}
	if splice != nil && splice.diverged {
		a.restartDiverged(splice)
		return wrote, false, true
	}
	complete := s.streamErr == nil && readErr == io.EOF && (s.tr == nil && s.sawEnd || s.tr != nil && s.tr.Complete())
	if !complete {
		a.finish(s.failureVerdict(readErr))
		return wrote, false, false
	}
	if s.tr != nil {
		s.pending = s.tr.End(s.pending)
	}
	guard.final = true // what it still holds is decided on now
	s.pending = s.filter(s.pending)
	if splice != nil && !splice.matched {
		splice.diverged = true // it ended before reproducing the delivered text
		a.restartDiverged(splice)
		return wrote, false, true
	}
	if guard.restarted {
		g.learnPrefill(cand, false) // it ignored the prefill and started over
		a.finish(verdict.Verdict{Kind: verdict.KindServer, Code: "CONTINUATION_RESTARTED",
			Message: "the continuation repeated the delivered text (the endpoint ignored the assistant prefill)"})
		return wrote, false, false
	}
	_ = a.send(rc, s.pending)
	s.recordUsage()
	req.log.ConnectionID, req.log.Provider, req.log.ErrorCode = cand.Conn.ID, cand.Conn.BreakerKey, ""
	if restart {
		a.rec.Splice = spliceRestarted
		req.relayed -= min(splice.got, s.sent) // the reproduced text was the client's already
	}
	a.finish(verdict.Verdict{Kind: verdict.KindSuccess, Status: resp.StatusCode})
	if !restart {
		g.learnPrefill(cand, true) // it honoured the prefill
	}
	return true, true, false
}

// announced prefixes the first non-empty output of filter with note (the SSE
// comment saying the answer was continued) and records that it was written,
// so a continuation that fails before its first frame leaves no trace.
func announced(note string, filter func([]byte) []byte, wrote *bool) func([]byte) []byte {
	return func(in []byte) []byte {
		out := filter(in)
		if *wrote || len(out) == 0 {
			return out
		}
		*wrote = true
		return append([]byte(note), out...)
	}
}

func isSpace(r rune) bool { return r == ' ' || r == '\n' || r == '\t' || r == '\r' }

// withPrefill appends the delivered text as a trailing assistant message to
// the client's request, in the client's own format; the codec translates it to
// the continuing target's format like any other assistant turn. The request's
// reasoning options go: Anthropic refuses a prefill with thinking on, and the
// continuation only finishes text already begun.
func withPrefill(f translate.Format, body []byte, text string) ([]byte, error) {
	if translate.IsOllama(f) {
		// The prefill goes in at the chat hub (codec.prefill); the thinking goes.
		return sjson.DeleteBytes(body, "think")
	}
	if f == translate.Gemini {
		// A trailing model turn; the thinking options go; the stream flag is the URL's.
		out, err := sjson.SetBytes(body, "contents.-1", map[string]any{"role": "model", "parts": []any{map[string]any{"text": text}}})
		if err != nil {
			return nil, err
		}
		return withoutReasoning(f, out)
	}
	var out []byte
	var err error
	if f == translate.Responses {
		out, err = responsesInputWithPrefill(body, text)
	} else {
		out, err = sjson.SetBytes(body, "messages.-1", map[string]any{"role": "assistant", "content": text})
	}
	if err != nil {
		return nil, err
	}
	return withoutReasoning(f, out)
}

// withoutThinkingEdits drops, from a Messages request's context_management,
// the edits that clear thinking blocks (clear_thinking_*), which only a
// request with thinking on may carry; context_management goes when nothing
// is left in it.
func withoutThinkingEdits(body []byte) ([]byte, error) {
	edits := gjson.GetBytes(body, "context_management.edits")
	if !edits.IsArray() {
		return body, nil
	}
	var kept []byte
	n, dropped := 0, false
	for _, e := range edits.Array() {
		if strings.HasPrefix(e.Get("type").String(), "clear_thinking") {
			dropped = true
			continue
		}
		if n > 0 {
			kept = append(kept, ',')
		}
		kept, n = append(kept, e.Raw...), n+1
	}
	switch {
	case !dropped:
		return body, nil
	case n > 0:
		return sjson.SetRawBytes(body, "context_management.edits", append(append([]byte{'['}, kept...), ']'))
	}
	body, err := sjson.DeleteBytes(body, "context_management.edits")
	if err != nil || len(gjson.GetBytes(body, "context_management").Map()) != 0 {
		return body, err
	}
	return sjson.DeleteBytes(body, "context_management")
}

// reasoningOptions are the top-level fields of a request in format f that
// turn the model's reasoning on (Chat's reasoning_effort becomes Anthropic's
// thinking in translation).
func reasoningOptions(f translate.Format) []string {
	if f == translate.Messages {
		return []string{"thinking"}
	}
	return []string{"reasoning_effort", "reasoning"}
}

// openingFilter returns the filter that drops, from a continuation's client
// bytes, the frames that open an answer the client already has: the OpenAI
// role-only chunk; Anthropic's message_start, ping and the text block start.
// When the delivered text ended in white space (cut from the prefill), the
// white space the continuation starts with is dropped too, so the client's
// text does not repeat it. A Messages continuation's blocks are numbered
// on from the client's (blocks): its text goes on in the client's open text
// block, or in a new block after a closed one (its start then kept).
func openingFilter(f translate.Format, trimLead bool, blocks *clientBlocks) func([]byte) []byte {
	parser := clientEvents{ndjson: translate.IsOllama(f)}
	var out []byte
	path := textPath(f)
	offset, keepStart := 0, false
	if f == translate.Messages {
		offset, keepStart, _ = blocks.continuation()
	}
	var startUsage gjson.Result // the dropped message_start's usage
	return func(in []byte) []byte {
		out = out[:0]
		_ = parser.Feed(in, func(ev sse.Event) bool {
			name := ev.Event
			if f == translate.Messages {
				name = messagesEventName(ev.Event, ev.Data)
			}
			if name == "message_start" && f == translate.Messages {
				startUsage = gjson.GetBytes(ev.Data, "message.usage")
			}
			if ev.Comment || (!keepStart || name != "content_block_start") && dropOpening(f, name, ev) {
				return true
			}
			data := ev.Data
			if name == "message_delta" && startUsage.IsObject() {
				data = withInputUsage(data, startUsage)
			}
			if offset > 0 && strings.HasPrefix(name, "content_block_") {
				if i := gjson.GetBytes(data, "index"); i.Type == gjson.Number {
					data, _ = sjson.SetBytes(data, "index", i.Int()+int64(offset))
				}
			}
			if trimLead {
				if t := gjson.GetBytes(data, path); t.Type == gjson.String && t.Str != "" {
					trimLead = false
					if trimmed := strings.TrimLeftFunc(t.Str, isSpace); trimmed != t.Str {
						data, _ = sjson.SetBytes(data, path, trimmed)
					}
				}
			}
			out = parser.append(out, ev.Event, data)
			return true
		})
		return append(in[:0], out...)
	}
}

// clientEvents reads a client stream's bytes event by event: SSE, or for
// Ollama's NDJSON each line as an event's data (ndjson).
type clientEvents struct {
	ndjson bool
	sse    sse.Parser
	rest   []byte // an NDJSON line not ended yet
}

// Feed calls fn with each whole event in, as sse.Parser.Feed does.
func (p *clientEvents) Feed(in []byte, fn func(sse.Event) bool) error {
	if !p.ndjson {
		return p.sse.Feed(in, fn)
	}
	p.rest = append(p.rest, in...)
	start := 0
	for {
		i := bytes.IndexByte(p.rest[start:], '\n')
		if i < 0 {
			break
		}
		line := p.rest[start : start+i]
		start += i + 1
		if len(bytes.TrimSpace(line)) > 0 && !fn(sse.Event{Data: line}) {
			break
		}
	}
	p.rest = append(p.rest[:0], p.rest[start:]...)
	return nil
}

// append writes one event back in the stream's framing.
func (p *clientEvents) append(dst []byte, event string, data []byte) []byte {
	if p.ndjson {
		return append(append(dst, data...), '\n')
	}
	return sse.Append(dst, event, data)
}

// withInputUsage gives a continuation's message_delta the input counts of
// its message_start, which the client never got (its own message_start came
// from the broken attempt): the usage members the delta lacks or counts as 0
// (input_tokens, cache_read_input_tokens, cache_creation_input_tokens), as
// Anthropic's own message_delta carries them.
func withInputUsage(data []byte, start gjson.Result) []byte {
	for _, k := range [...]string{"input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"} {
		v := start.Get(k)
		if v.Type != gjson.Number || v.Int() <= 0 || gjson.GetBytes(data, "usage."+k).Int() > 0 {
			continue
		}
		if out, err := sjson.SetRawBytes(data, "usage."+k, []byte(v.Raw)); err == nil {
			data = out
		}
	}
	return data
}

// dropOpening reports whether ev (named name: its event, else its type)
// opens an answer: see openingFilter.
func dropOpening(f translate.Format, name string, ev sse.Event) bool {
	if f == translate.Gemini || translate.IsOllama(f) {
		return false // every Gemini chunk and Ollama line is content: none opens the answer
	}
	if f == translate.Messages {
		switch name {
		case "message_start", "ping":
			return true
		case "content_block_start":
			return gjson.GetBytes(ev.Data, "content_block.type").String() == "text"
		}
		return false
	}
	if ev.IsDone() {
		return false
	}
	d := gjson.GetBytes(ev.Data, "choices.0.delta")
	return d.Get("role").Exists() && d.Get("content").String() == "" && !d.Get("tool_calls").Exists() &&
		gjson.GetBytes(ev.Data, "choices.0.finish_reason").Type == gjson.Null
}

// textPath is where a client event of format f carries answer text.
func textPath(f translate.Format) string {
	switch f {
	case translate.Messages:
		return "delta.text"
	case translate.Responses:
		return "delta" // of response.output_text.delta events
	case translate.Gemini:
		return "candidates.0.content.parts.0.text"
	case translate.OllamaChat:
		return "message.content"
	case translate.OllamaGenerate:
		return "response"
	}
	return "choices.0.delta.content"
}

// errContinuationRestarted stops a continuation that started the answer over.
var errContinuationRestarted = errors.New("the continuation repeated the delivered text")

// repeatProbe is how much of the delivered text (white space trimmed) a
// continuation's first text is compared with: an endpoint that ignores the
// prefill starts the answer over, and its first words are the delivered
// ones. A delivered text shorter than minRepeatProbe is not checked (a
// continuation of a few characters may begin with them by chance).
const (
	repeatProbe    = 32
	minRepeatProbe = 4
)

// repeatGuard holds a continuation's client bytes back until its first
// repeatProbe bytes of text are known, and stops it (restarted) when they
// repeat the delivered text: the client then gets the clean error, never the
// answer twice as one "complete" answer.
type repeatGuard struct {
	format  translate.Format
	probe   string // the delivered text's first bytes, "" when too short to judge
	s       *streamState
	parser  clientEvents
	text    []byte // the continuation's text so far, up to len(probe)
	held    []byte
	decided bool
	// final makes the next filter call decide with what it has (the stream ended).
	final     bool
	restarted bool
}

func newRepeatGuard(f translate.Format, delivered string, s *streamState) *repeatGuard {
	d := strings.TrimLeftFunc(delivered, isSpace)
	g := &repeatGuard{format: f, s: s, parser: clientEvents{ndjson: translate.IsOllama(f)}}
	if len(d) >= minRepeatProbe {
		n := min(len(d), repeatProbe)
		for n > 0 && n < len(d) && !utf8.RuneStart(d[n]) {
			n--
		}
		g.probe = d[:n]
	}
	g.decided = g.probe == ""
	return g
}

// filter wraps next: bytes pass through it once the continuation is judged.
func (g *repeatGuard) filter(next func([]byte) []byte) func([]byte) []byte {
	return func(in []byte) []byte {
		if g.decided {
			return next(in)
		}
		if g.restarted {
			return in[:0]
		}
		g.held = append(g.held, in...)
		path := textPath(g.format)
		_ = g.parser.Feed(in, func(ev sse.Event) bool {
			if g.format == translate.Responses && gjson.GetBytes(ev.Data, "type").String() != "response.output_text.delta" {
				return true
			}
			if t := gjson.GetBytes(ev.Data, path); t.Type == gjson.String {
				g.text = append(g.text, t.Str...)
			}
			return true
		})
		got := strings.TrimLeftFunc(string(g.text), isSpace)
		if len(got) < len(g.probe) && !g.final {
			return in[:0] // not enough text yet to judge
		}
		if got != "" && strings.HasPrefix(g.probe, got[:min(len(got), len(g.probe))]) &&
			len(got) >= min(len(g.probe), minRepeatProbe) {
			g.restarted = true
			g.s.streamErr = errContinuationRestarted // stops the relay
			return in[:0]
		}
		g.decided = true
		held := g.held
		g.held = nil
		return next(append(in[:0], held...))
	}
}

// prefillFlags marks a Chat upstream body's trailing assistant message for
// continuation as the connection's declared mode asks: vLLM's
// continue_final_message (with no new generation prompt), DeepSeek's
// "prefix": true on the message. Other wires and modes take it as it is.
func prefillFlags(body []byte, upstream translate.Format, mode routing.PrefillMode) ([]byte, error) {
	if upstream != translate.Chat {
		return body, nil
	}
	switch mode {
	case prefillBoth:
		body, err := prefillFlags(body, upstream, routing.PrefillVLLM)
		if err != nil {
			return nil, err
		}
		return prefillFlags(body, upstream, routing.PrefillDeepSeek)
	case routing.PrefillVLLM:
		body, err := sjson.SetBytes(body, "continue_final_message", true)
		if err != nil {
			return nil, err
		}
		return sjson.SetBytes(body, "add_generation_prompt", false)
	case routing.PrefillDeepSeek:
		n := gjson.GetBytes(body, "messages.#").Int()
		if n == 0 {
			return body, nil
		}
		return sjson.SetBytes(body, "messages."+strconv.FormatInt(n-1, 10)+".prefix", true)
	}
	return body, nil
}
