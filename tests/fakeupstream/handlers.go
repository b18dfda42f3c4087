package fakeupstream

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/tidwall/gjson"
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
		model, stream := "", false
		valid := gjson.ValidBytes(body)
		if valid {
			res := gjson.GetManyBytes(body, "model", "stream")
			model, stream = res[0].String(), res[1].Bool()
		}
		f, n, _ := u.begin(key, r.Header, body, model, authed)
		defer u.end()
		switch {
		case !authed:
			u.writeError(w, http.StatusUnauthorized, missingKeyBody(format))
			return
		case f != nil && f.Mode == ModeStatus:
			u.writeStatusFault(w, format, f)
			return
		case !valid || model == "":
			u.writeError(w, http.StatusBadRequest, ErrorBody(format, http.StatusBadRequest))
			return
		}
		u.respond(w, r, u.answerFor(format, model, key, n), stream, f)
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
	f, _, models := u.begin(key, r.Header, nil, "", authed)
	defer u.end()
	switch {
	case !authed:
		u.writeError(w, http.StatusUnauthorized, missingKeyBody(format))
	case f != nil && f.Mode == ModeStatus:
		u.writeStatusFault(w, format, f)
	default:
		u.respond(w, r, models[format], false, f)
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

// respond sends a (as a stream if stream is set) under fault f, which is nil
// on the happy path.
func (u *Upstream) respond(w http.ResponseWriter, r *http.Request, a *answer, stream bool, f *Fault) {
	if f == nil {
		u.play(w, a, stream)
		return
	}
	switch f.Mode {
	case ModeResetBeforeHeaders:
		dropConn(w, f.HardReset)
		return
	case ModeStallBeforeHeaders, ModeLatency:
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
	}
	u.playFaulty(w, r, a, stream, f)
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

// playFaulty sends the answer piece by piece for the mid-stream and drip
// modes: preamble, content chunks (body pieces for a non-streaming request)
// and closing frames, each flushed.
func (u *Upstream) playFaulty(w http.ResponseWriter, r *http.Request, a *answer, stream bool, f *Fault) {
	h := w.Header()
	head, parts, tail := []byte(nil), a.parts, []byte(nil)
	if stream {
		h["Content-Type"] = u.ctSSE
		h["Cache-Control"] = u.noCache
		head, parts, tail = a.head, a.chunks, a.tail
	} else {
		h["Content-Type"] = u.ctJSON
		h["Content-Length"] = a.bodyLen
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
	// interrupt runs the fault's interruption after stopAt parts; it
	// reports whether to carry on.
	stopAt := -1
	if f.Mode == ModeStallMidStream || f.Mode == ModeResetMidStream {
		stopAt = min(f.AfterChunks, len(parts))
	}
	interrupt := func() bool {
		if f.Mode == ModeResetMidStream {
			dropConn(w, f.HardReset)
			return false
		}
		return u.survive(w, r, ms(f.StallMs), f.StallMs == 0)
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
