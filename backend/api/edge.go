package api

import (
	"bytes"
	"io"
	"net/http"
	"time"

	"omniroute/backend/httpx"
)

// edgeWriter closes the connection after an error answer to a request that
// carried a body, without reading (draining) what is left of it: a refused
// client (no key, wrong Host, unknown route, too large, too slow) cannot keep
// the connection — and its file descriptor — by trickling a body nobody reads.
type edgeWriter struct {
	http.ResponseWriter
	body    *trackedBody // nil: the request has no body; else &tracked
	tracked trackedBody  // allocated with the writer: one allocation per request, not two
	wrote   bool
}

func (e *edgeWriter) WriteHeader(code int) {
	if !e.wrote {
		e.wrote = true
		if code >= 400 && e.body != nil && !e.body.complete() {
			httpx.Abandon(e.ResponseWriter)
		}
	}
	e.ResponseWriter.WriteHeader(code)
}

// trackedBody notes whether a request body was read to its end.
type trackedBody struct {
	io.ReadCloser
	req      *http.Request // whose Body it is
	declared int64         // Content-Length, or -1
	n        int64
	eof      bool
}

// Close closes the body. A body read to its end is then handed back to its
// request: the server sees its own body consumed and closed, and skips the
// drain it would otherwise attempt through the wrapper after the handler.
func (b *trackedBody) Close() error {
	if b.complete() && b.req.Body == b {
		b.req.Body = b.ReadCloser
	}
	return b.ReadCloser.Close()
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

func (b *trackedBody) complete() bool { return b.eof || b.declared >= 0 && b.n >= b.declared }

// edge wraps w and r.Body for the refusal rule above, in a writer from the
// API's pool (see releaseEdge).
func (a *API) edge(w http.ResponseWriter, r *http.Request) *edgeWriter {
	e, _ := a.edges.Get().(*edgeWriter)
	if e == nil {
		e = new(edgeWriter)
	}
	*e = edgeWriter{ResponseWriter: w}
	if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
		e.tracked = trackedBody{ReadCloser: r.Body, req: r, declared: r.ContentLength}
		e.body = &e.tracked
		r.Body = e.body
	}
	return e
}

func (e *edgeWriter) Write(p []byte) (int, error) {
	if !e.wrote {
		e.WriteHeader(http.StatusOK)
	}
	return e.ResponseWriter.Write(p)
}

// Flush keeps streaming handlers working through the wrapper.
func (e *edgeWriter) Flush() {
	if f, ok := e.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// FlushError reports a failed flush (a client that stopped reading past its
// write deadline) to http.ResponseController.
func (e *edgeWriter) FlushError() error {
	if f, ok := e.ResponseWriter.(interface{ FlushError() error }); ok {
		return f.FlushError()
	}
	e.Flush()
	return nil
}

// Unwrap lets http.ResponseController reach the connection (deadlines).
func (e *edgeWriter) Unwrap() http.ResponseWriter { return e.ResponseWriter }

// readManagementBody reads an authenticated management request's body under
// the body deadline and size limit before the handler runs, so no management
// handler waits on a slow sender; the handler reads it from memory.
func (a *API) readManagementBody(w http.ResponseWriter, r *http.Request) bool {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return true
	}
	timeout := time.Duration(a.Settings.General().BodyReadTimeoutMs) * time.Millisecond
	body, release, err := httpx.ReadBodyLimited(w, r, httpx.BodyLimits{Max: managementBodyLimit, Timeout: timeout})
	release()
	if err == nil && len(body) > 0 {
		err = httpx.CheckJSON(body) // every management body is JSON; refuse hostile nesting early
	}
	if err != nil {
		httpx.WriteError(w, err)
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return true
}

// releaseEdge gives e back to the pool once the handler has returned, unless
// the request still reads its body through it (a body not read to its end:
// the server may drain it through r.Body after the handler). Nothing else
// keeps a writer past its handler.
func (a *API) releaseEdge(e *edgeWriter, r *http.Request) {
	if e.body != nil && r.Body == e.body {
		return
	}
	*e = edgeWriter{}
	a.edges.Put(e)
}
