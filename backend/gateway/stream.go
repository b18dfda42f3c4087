package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"omniroute/backend/resilience/verdict"
	"omniroute/backend/routing"
)

// streamBufSize is the read size for relaying an upstream stream.
const streamBufSize = 32 << 10

// doneMarker ends every complete OpenAI stream.
var doneMarker = []byte("[DONE]")

// relayStream relays an SSE response. Until the first bytes arrive, a failure is
// a failover like any other; once bytes are committed the stream ends either
// complete or with an SSE error event the client can see, never with a clean end
// after a truncated answer.
func (g *Gateway) relayStream(w http.ResponseWriter, r *http.Request, req *request, cand routing.Candidate,
	ctx context.Context, cancel context.CancelCauseFunc, firstByte *time.Timer, resp *http.Response,
	finish func(verdict.Verdict)) (*failure, bool) {
	bufp := g.bufs.Get().(*[]byte)
	defer g.bufs.Put(bufp)
	buf := *bufp

	n, err := readSome(resp.Body, buf)
	if n == 0 {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		v := g.classifyErr(ctx, r, err, cand)
		finish(v)
		return &failure{v: v, clientGone: v.Kind == verdict.KindClientCanceled}, false
	}
	firstByte.Stop()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	setServedHeaders(h, cand, len(req.attempts)+1)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	req.log.Status = http.StatusOK
	req.log.ConnectionID = cand.Conn.ID
	req.log.Provider = cand.Conn.BreakerKey

	idle := time.Duration(g.general().StreamIdleTimeoutMs) * time.Millisecond
	stall := time.AfterFunc(idle, func() { cancel(verdict.ErrStall) })
	defer stall.Stop()

	var tail [64]byte
	tailLen := 0
	for {
		if n > 0 {
			tailLen = keepTail(&tail, tailLen, buf[:n])
			if _, werr := w.Write(buf[:n]); werr != nil {
				finish(verdict.Verdict{Kind: verdict.KindClientCanceled, Code: "CLIENT_CANCELED"})
				return &failure{clientGone: true}, true
			}
			_ = rc.Flush()
			stall.Reset(idle)
		}
		if err != nil {
			break
		}
		n, err = resp.Body.Read(buf)
	}
	if err == io.EOF && bytes.Contains(tail[:tailLen], doneMarker) {
		finish(verdict.Verdict{Kind: verdict.KindSuccess, Status: http.StatusOK})
		return nil, true
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	v := g.classifyErr(ctx, r, err, cand)
	finish(v)
	if v.Kind == verdict.KindClientCanceled {
		return &failure{v: v, clientGone: true}, true
	}
	req.log.ErrorCode = v.Code
	writeSSEError(w, v)
	_ = rc.Flush()
	return nil, true
}

// readSome reads until it gets at least one byte or an error.
func readSome(r io.Reader, buf []byte) (int, error) {
	for {
		n, err := r.Read(buf)
		if n > 0 || err != nil {
			return n, err
		}
	}
}

func keepTail(tail *[64]byte, have int, b []byte) int {
	if len(b) >= len(tail) {
		return copy(tail[:], b[len(b)-len(tail):])
	}
	keep := len(tail) - len(b)
	if have < keep {
		keep = have
	}
	copy(tail[:], tail[have-keep:have])
	copy(tail[keep:], b)
	return keep + len(b)
}

// writeSSEError tells a streaming client, in-band, that its stream failed.
func writeSSEError(w io.Writer, v verdict.Verdict) {
	msg := v.Message
	if msg == "" {
		msg = "the upstream stream failed before completing"
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": "stream interrupted: " + msg, "type": "upstream_error", "code": v.Code,
	}})
	_, _ = io.WriteString(w, "event: error\ndata: ")
	_, _ = w.Write(b)
	_, _ = io.WriteString(w, "\n\n")
}
