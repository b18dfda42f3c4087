package fakeupstream

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxBodyBytes bounds a request body the fake reads.
const maxBodyBytes = 16 << 20

// readHeaderTimeout bounds header reads of the standalone server.
const readHeaderTimeout = 10 * time.Second

// apiKey extracts the caller's key: a Bearer token, or for the Anthropic
// format also x-api-key (which wins, as it does at Anthropic).
func apiKey(r *http.Request, format Format) (string, bool) {
	if format == FormatAnthropic {
		if k := r.Header.Get("X-Api-Key"); k != "" {
			return k, true
		}
	}
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		if k := strings.TrimSpace(h[7:]); k != "" {
			return k, true
		}
	}
	if strings.HasPrefix(r.URL.Path, "/openai/deployments/") {
		if k := strings.TrimSpace(r.Header.Get("Api-Key")); k != "" {
			return k, true // Azure OpenAI's api-key
		}
	}
	return "", false
}

// readBody reads the whole request body, sized by Content-Length when known.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, maxBodyBytes)
	if n := r.ContentLength; n > 0 && n <= maxBodyBytes {
		buf := make([]byte, n)
		if _, err := io.ReadFull(body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	return io.ReadAll(body)
}

func (u *Upstream) writeError(w http.ResponseWriter, status int, body string) {
	w.Header()["Content-Type"] = u.ctJSON
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// completion serves POST /v1/chat/completions and POST /v1/messages.
func (u *Upstream) completion(format Format) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		key, authed := apiKey(r, format)
		body, err := readBody(w, r)
		if err != nil {
			u.writeError(w, http.StatusBadRequest, ErrorBody(format, http.StatusBadRequest))
			return
		}
		req, valid := parseRequest(format, body, u.scriptedToolCalls())
		f, n, _ := u.beginReq(key, r.URL.Path, r.Header, body, req.model, req.shape.kind == kindToolResult, authed)
		defer u.end()
		u.modelBegin(req.model)
		defer func() { u.modelEnd(req.model, r.Context().Err() != nil) }()
		switch {
		case !authed:
			u.writeError(w, http.StatusUnauthorized, missingKeyBody(format))
			return
		case f != nil && f.Mode == ModeStatus:
			if f.gate != nil {
				select {
				case <-f.gate.arrive():
				case <-r.Context().Done():
					return
				case <-u.done:
					return
				}
			}
			if u.pause(r.Context(), ms(f.LatencyMs), false) != elapsed {
				return
			}
			u.writeStatusFault(w, format, f)
			return
		case !valid || req.model == "":
			u.writeError(w, http.StatusBadRequest, ErrorBody(format, http.StatusBadRequest))
			return
		case req.badTools:
			u.writeError(w, http.StatusBadRequest, missingToolNameBody(format))
			return
		case f != nil && f.Mode == ModeStrictFields && format == FormatOpenAI && strictFieldError(body) != "":
			u.writeError(w, http.StatusBadRequest, strictFieldError(body))
			return
		}
		if f != nil && f.Mode == ModeStrictFields {
			f = nil // a request within the schema is answered normally
		}
		if f != nil && (f.Mode == ModeReasoningDetails || f.Mode == ModeReasoningOpaque) && format == FormatOpenAI {
			opaque := f.Mode == ModeReasoningOpaque
			switch {
			case !opaque && !DetailsReplayed(body):
				u.writeError(w, http.StatusBadRequest, DetailsMissingBody)
				return
			case opaque && !OpaqueReplayed(body):
				u.writeError(w, http.StatusBadRequest, OpaqueMissingBody)
				return
			}
			text := Content(key)
			if req.shape.kind == kindToolResult {
				text = ToolResultText(req.shape.result)
			}
			u.play(w, buildDetailsAnswer(req.model, req.shape, text, n, opaque), req.stream)
			return
		}
		if f != nil && (f.Mode == ModeRestartAnswer || f.Mode == ModeRestartDiverges) {
			label := f.AnswerAs
			if label == "" {
				label = key
			}
			text := Content(label)
			if f.Mode == ModeRestartDiverges {
				text = DivergentContent(label)
			}
			req.shape.kind, req.shape.result = kindText, ""
			u.respond(w, r, format, buildAnswer(format, req.model, req.shape, text, n), req.stream, nil)
			return
		}
		if req.prefill && f != nil && f.Mode == ModeIgnorePrefill {
			req.prefill, req.shape.kind, req.shape.result, f = false, kindText, "", nil
		}
		if req.prefill && f != nil && f.Mode == ModeHonourPrefill {
			req.shape.continued = continuedAnswer{whole: req.shape.result + PrefillContinuation}
		}
		if req.prefill {
			if msg, bad := prefillRefusal(req, key, f); bad {
				u.writeError(w, http.StatusBadRequest, msg)
				return
			}
			f = nil // a continuation is answered normally
		}
		if f != nil && f.Mode == ModeReasoningOnlyHeartbeat {
			req.shape.reasoning = true
		}
		u.respond(w, r, format, u.answerFor(format, req.model, key, n, req.shape), req.stream, f)
	}
}

// listModels serves GET /v1/models, in Anthropic's format when the request
// looks like an Anthropic client's (x-api-key or anthropic-version).
func (u *Upstream) listModels(w http.ResponseWriter, r *http.Request) {
	format := FormatOpenAI
	if r.Header.Get("X-Api-Key") != "" || r.Header.Get("Anthropic-Version") != "" {
		format = FormatAnthropic
	}
	key, authed := apiKey(r, format)
	f, _, models := u.begin(key, r.URL.Path, r.Header, nil, "", authed)
	defer u.end()
	switch {
	case !authed:
		u.writeError(w, http.StatusUnauthorized, missingKeyBody(format))
	case f != nil && f.Mode == ModeStatus:
		u.writeStatusFault(w, format, f)
	default:
		a := models[format]
		if format == FormatAnthropic {
			if page := u.modelsPageAfter(r.URL.Query().Get("after_id")); page != nil {
				a = page
			}
		}
		u.respond(w, r, format, a, false, f)
	}
}

// notFound answers unknown routes the way OpenAI does.
func notFound(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write(mustJSON(openAIError{Error: openAIErrDetail{
		Message: "Invalid URL (" + r.Method + " " + r.URL.Path + ")", Type: "invalid_request_error"}}))
}

func (u *Upstream) writeStatusFault(w http.ResponseWriter, format Format, f *Fault) {
	status := f.Status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	body := f.Body
	if body == "" {
		body = ErrorBody(format, status)
	}
	h := w.Header()
	if strings.HasPrefix(strings.TrimSpace(body), "{") {
		h["Content-Type"] = u.ctJSON
	} else {
		h.Set("Content-Type", "text/plain; charset=utf-8")
	}
	for k, v := range f.Headers {
		h.Set(k, v)
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// outcome is how a pause ended.
type outcome int

const (
	elapsed    outcome = iota // the duration passed: carry on
	clientGone                // the request context ended: just return
	fakeClosed                // Close was called: drop the connection
)

// pause waits d (for ever when forever is set) unless the client goes away
// or the fake is closed first.
func (u *Upstream) pause(ctx context.Context, d time.Duration, forever bool) outcome {
	var timeout <-chan time.Time
	if !forever {
		if d <= 0 {
			return elapsed
		}
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-timeout:
		return elapsed
	case <-ctx.Done():
		return clientGone
	case <-u.done:
		return fakeClosed
	}
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// dropConn hijacks and closes the connection, with a TCP RST when hard is
// set; when the connection cannot be hijacked it aborts the handler, which
// net/http turns into a closed connection (or a reset HTTP/2 stream).
func dropConn(w http.ResponseWriter, hard bool) {
	if hj, ok := w.(http.Hijacker); ok {
		if c, _, err := hj.Hijack(); err == nil {
			if tc, ok := c.(*net.TCPConn); ok && hard {
				_ = tc.SetLinger(0)
			}
			_ = c.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// respond sends a (as a stream if stream is set) in format under fault f,
// which is nil on the happy path.
func (u *Upstream) respond(w http.ResponseWriter, r *http.Request, format Format, a *answer, stream bool, f *Fault) {
	if f == nil {
		u.play(w, a, stream)
		return
	}
	switch {
	case f.Mode == ModeResetBeforeHeaders:
		dropConn(w, f.HardReset)
		return
	case f.Mode == ModeStallBeforeHeaders, f.Mode == ModeLatency,
		f.Mode == ModeReasoningOnlyHeartbeat && !stream:
		d, forever := ms(f.StallMs), f.StallMs == 0
		if f.Mode == ModeLatency {
			d, forever = ms(f.LatencyMs), false
		}
		switch u.pause(r.Context(), d, forever) {
		case clientGone:
			return
		case fakeClosed:
			dropConn(w, false)
			return
		}
		addHeaders(w, f)
		u.play(w, a, stream)
		return
	case f.Mode == ModeNoUsage:
		addHeaders(w, f)
		if format == FormatOpenAI {
			a = withoutUsage(a)
		}
		u.play(w, a, stream)
		return
	case f.Mode == ModeNoDone && !stream:
		addHeaders(w, f)
		u.play(w, a, stream)
		return
	case f.Mode == ModeErrorEvent && !stream:
		w.Header()["Content-Type"] = u.ctJSON
		addHeaders(w, f)
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, streamErrorData(format, f))
		return
	}
	u.playFaulty(w, r, format, a, stream, f)
}

func addHeaders(w http.ResponseWriter, f *Fault) {
	for k, v := range f.Headers {
		w.Header().Set(k, v)
	}
}

// play is the happy path: the whole answer at once, or the stream with a
// flush after every frame.
func (u *Upstream) play(w http.ResponseWriter, a *answer, stream bool) {
	h := w.Header()
	if !stream {
		h["Content-Type"] = u.ctJSON
		h["Content-Length"] = a.bodyLen
		_, _ = w.Write(a.body)
		return
	}
	h["Content-Type"] = u.ctSSE
	if a.ctype != nil {
		h["Content-Type"] = a.ctype
	}
	h["Cache-Control"] = u.noCache
	fl, _ := w.(http.Flusher)
	if _, err := w.Write(a.head); err != nil {
		return
	}
	if fl != nil {
		fl.Flush()
	}
	for _, c := range a.chunks {
		if _, err := w.Write(c); err != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
	}
	_, _ = w.Write(a.tail)
}

// playFaulty sends the answer piece by piece for the mid-stream, drip and
// stream-safety modes: preamble, content events (body pieces for a
// non-streaming request) and closing frames, each flushed, with the fault's
// interruption before the event it names.
func (u *Upstream) playFaulty(w http.ResponseWriter, r *http.Request, format Format, a *answer, stream bool, f *Fault) {
	h := w.Header()
	head, parts, tail := []byte(nil), a.parts, []byte(nil)
	malformed := []byte(MalformedOpenAIData)
	switch {
	case format == FormatAnthropic:
		malformed = []byte(MalformedAnthropicData)
	case format.isGemini():
		malformed = []byte(MalformedGeminiData)
	}
	if stream {
		h["Content-Type"] = u.ctSSE
		if a.ctype != nil {
			h["Content-Type"] = a.ctype
		}
		h["Cache-Control"] = u.noCache
		head, parts, tail = a.head, a.chunks, a.tail
		if f.Mode == ModeNoDone {
			tail = tail[:len(tail)-a.done]
		}
		malformed = malformedFrame(format)
	} else {
		h["Content-Type"] = u.ctJSON
		switch f.Mode {
		case ModeCutAfterEvents:
			// No Content-Length: the short body is chunked and ends cleanly.
		case ModeMalformedEvent:
			h.Set("Content-Length", strconv.Itoa(len(a.body)+len(malformed)))
		default:
			h["Content-Length"] = a.bodyLen
		}
	}
	addHeaders(w, f)
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	send := func(b []byte) bool {
		if len(b) > 0 {
			if _, err := w.Write(b); err != nil {
				return false
			}
		}
		if fl != nil {
			fl.Flush()
		}
		return true
	}
	// interrupt runs the fault's interruption before part stopAt (after the
	// last part when stopAt is len(parts)); it reports whether to carry on.
	stopAt := -1
	switch f.Mode {
	case ModeStallMidStream, ModeResetMidStream, ModeCutAfterEvents, ModeMalformedEvent, ModeErrorEvent:
		stopAt = min(f.AfterChunks, len(parts))
	case ModeSlowFirstToken, ModeReasoningOnlyHeartbeat:
		stopAt = 0
	}
	interrupt := func() bool {
		switch f.Mode {
		case ModeResetMidStream:
			dropConn(w, f.HardReset)
			return false
		case ModeStallMidStream:
			return u.survive(w, r, ms(f.StallMs), f.StallMs == 0)
		case ModeCutAfterEvents:
			return false // the handler returns: a clean end without closing frames
		case ModeMalformedEvent:
			return send(malformed)
		case ModeErrorEvent:
			if f.LatencyMs > 0 && !u.survive(w, r, ms(f.LatencyMs), false) {
				return false
			}
			send(errorFrame(format, f))
			return false
		case ModeSlowFirstToken:
			return u.survive(w, r, ms(f.LatencyMs), false)
		case ModeReasoningOnlyHeartbeat:
			return u.heartbeat(w, r, format, a, f, send)
		}
		return true
	}
	drip := func() bool {
		return f.Mode != ModeSlowDrip || u.survive(w, r, ms(f.DripMs), false)
	}
	if !send(head) {
		return
	}
	for i, p := range parts {
		if i == stopAt && !interrupt() {
			return
		}
		if !drip() || !send(p) {
			return
		}
	}
	if stopAt == len(parts) && !interrupt() {
		return
	}
	if len(tail) > 0 && drip() {
		send(tail)
	}
}

// heartbeat runs the reasoning-then-heartbeats phase of
// ModeReasoningOnlyHeartbeat right after the preamble and reports whether
// the handler should go on with the answer.
func (u *Upstream) heartbeat(w http.ResponseWriter, r *http.Request, format Format, a *answer, f *Fault, send func([]byte) bool) bool {
	every := ms(f.DripMs)
	if f.DripMs == 0 {
		every = ms(DefaultHeartbeatMs)
	}
	for range f.AfterChunks {
		if !u.survive(w, r, every, false) || !send(a.thought) {
			return false
		}
	}
	var deadline <-chan time.Time
	if f.StallMs > 0 {
		t := time.NewTimer(ms(f.StallMs))
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	beat := heartbeatFrame(format)
	for {
		select {
		case <-deadline:
			return true
		case <-tick.C:
			if !send(beat) {
				return false
			}
		case <-r.Context().Done():
			return false
		case <-u.done:
			dropConn(w, false)
			return false
		}
	}
}

// survive pauses and reports whether the handler should go on; on Close it
// drops the connection so the client sees a broken answer, not a short one.
func (u *Upstream) survive(w http.ResponseWriter, r *http.Request, d time.Duration, forever bool) bool {
	switch u.pause(r.Context(), d, forever) {
	case clientGone:
		return false
	case fakeClosed:
		dropConn(w, false)
		return false
	}
	return true
}

// prefillRefusal is the 400 a prefill request gets: from ModeRejectPrefill,
// with thinking on or for trailing white space (as Anthropic), or when the
// prefill is not the beginning of this key's answer, so a gateway sending the
// wrong delivered text fails loudly.
func prefillRefusal(req request, key string, f *Fault) (string, bool) {
	p := req.shape.result
	switch {
	case f != nil && f.Mode == ModeRejectPrefill:
		return AnthropicPrefillRejectedBody, true
	case req.shape.reasoning:
		return AnthropicPrefillWithThinkingBody, true
	case strings.TrimRight(p, " \t\r\n") != p:
		return AnthropicTrailingWhitespaceBody, true
	case !strings.HasPrefix(req.shape.continued.text(key), p):
		return AnthropicPrefillMismatchBody, true
	}
	return "", false
}
