package gateway

import (
	"io"
	"net/http"

	"omniroute/backend/capture"
)

// Capture keeps request and response bodies on demand (backend/capture).
type Capture interface {
	// Begin starts capturing a request (nil: not captured, at no cost).
	Begin(keyID, model string, private bool, clientFormat string, body []byte) *capture.Request
	// Finish keeps a captured request's bodies under its request id.
	Finish(requestID string, r *capture.Request) error
}

// beginCapture starts the request's capture when the settings want it.
//
//go:noinline
func (g *Gateway) beginCapture(req *request) bool {
	c := g.capture.Begin(req.client.KeyID, req.model, req.client.access().Private, string(req.format), req.body)
	if c == nil {
		return false
	}
	c.Stream = req.stream
	req.cap = c
	return true
}

// runCaptured serves a captured request through a writer that also keeps
// what the client is sent. Out of line, as the capture path: the frames
// under an uncaptured stream stay as small as they were.
//
//go:noinline
func (g *Gateway) runCaptured(w http.ResponseWriter, r *http.Request, req *request) {
	for _, sec := range clientSecrets(r) { // the client's key, echoed anywhere, by value
		req.cap.AddSecret(sec)
	}
	cw := &captureWriter{ResponseWriter: w, buf: &req.cap.ClientResponse}
	g.end(cw, req, g.runWithFallback(cw, r, req))
}

// finishCapture hands the request's captured bodies over under its id; a
// failure to keep them is logged, never the request's.
//
//go:noinline
func (g *Gateway) finishCapture(requestID string, req *request) {
	if err := g.capture.Finish(requestID, req.cap); err != nil && g.log != nil {
		g.log.Warn("body capture: could not keep the bodies", "request", requestID, "err", err)
	}
	req.cap = nil
}

// captureUpstream records what an attempt sends upstream.
//
//go:noinline
func (a *attemptCtx) captureUpstream(body []byte) {
	a.req.cap.Upstream(body, string(a.cand.Conn.Provider.Format), a.target.Secret)
	a.req.cap.AddSecret(a.target.AWS.SecretAccessKey) // an AWS-signed connection's
	a.req.cap.AddSecret(a.target.AWS.SessionToken)
}

// captureAnswer tees the upstream's answer (a stream as received) into the capture.
//
//go:noinline
func (a *attemptCtx) captureAnswer(resp *http.Response) {
	resp.Body = &teeBody{ReadCloser: resp.Body, buf: &a.req.cap.UpstreamResponse}
}

// captureContinuation appends a continuation's answer to the captured
// upstream answer (the stream reassembled) and removes its connection's
// secret too.
//
//go:noinline
func (a *attemptCtx) captureContinuation(resp *http.Response) {
	a.req.cap.AddSecret(a.target.Secret)
	a.captureAnswer(resp)
}

// captureWriter keeps what the client is sent; ResponseController reaches
// the writer underneath (flush, deadlines) through Unwrap.
type captureWriter struct {
	http.ResponseWriter
	buf *capture.Buffer
}

func (c *captureWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	_, _ = c.buf.Write(p[:n])
	return n, err
}

// Unwrap is the writer underneath.
func (c *captureWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// teeBody keeps what is read from an upstream answer.
type teeBody struct {
	io.ReadCloser
	buf *capture.Buffer
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	_, _ = t.buf.Write(p[:n])
	return n, err
}
