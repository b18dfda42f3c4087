package httpx

import (
	"bytes"
	"net"
	"net/http"
	"strconv"

	"omniroute/backend/errs"
)

// EnvelopeListener wraps l so the few answers net/http writes by itself, before
// any handler runs — 431 (headers over MaxHeaderBytes), 400 (a malformed
// request line or header, a missing or malformed Host), 501 (an unsupported
// transfer encoding), 505 (an unsupported protocol version) — carry the same
// JSON error envelope as every other error instead of net/http's plain text.
//
// net/http writes those answers in one Write on the raw connection, as a
// status line followed by exactly "Content-Type: text/plain; charset=utf-8"
// then "Connection: close"; a handler's response never has that shape
// (net/http sorts its headers, so Connection would come first, and always adds
// Date), so the match is unambiguous.
func EnvelopeListener(l net.Listener) net.Listener { return envelopeListener{l} }

type envelopeListener struct{ net.Listener }

func (l envelopeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &envelopeConn{Conn: c}, nil
}

// envelopeConn rewrites net/http's own plain-text error answers.
type envelopeConn struct{ net.Conn }

const cannedHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

func (c *envelopeConn) Write(p []byte) (int, error) {
	if out, ok := RewriteCanned(p); ok {
		if _, err := c.Conn.Write(out); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// CloseWrite keeps net/http's graceful close (it half-closes TCP connections
// after an error answer so the client reads it).
func (c *envelopeConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// RewriteCanned turns one of net/http's canned error answers into the JSON
// envelope; ok is false for anything else.
func RewriteCanned(p []byte) (out []byte, ok bool) {
	if len(p) < 13 || string(p[:9]) != "HTTP/1.1 " {
		return nil, false
	}
	eol := bytes.IndexByte(p, '\r')
	if eol < 0 || !bytes.HasPrefix(p[eol:], []byte(cannedHeaders)) {
		return nil, false
	}
	status, err := strconv.Atoi(string(p[9:12]))
	if err != nil || status < 400 || status > 599 {
		return nil, false
	}
	detail := string(p[eol+len(cannedHeaders):])
	code := "BAD_REQUEST"
	msg := "the request could not be parsed: " + detail
	switch status {
	case http.StatusRequestHeaderFieldsTooLarge:
		code, msg = "REQUEST_HEADERS_TOO_LARGE", "the request headers exceed the server's limit"
	case http.StatusNotImplemented:
		code = "NOT_IMPLEMENTED"
	case http.StatusHTTPVersionNotSupported:
		code = "HTTP_VERSION_NOT_SUPPORTED"
	}
	e := errs.New(errs.Invalid, code, "%s", truncateBytes(msg, 200))
	var body bytes.Buffer
	rec := &bufferWriter{h: http.Header{}, b: &body}
	WriteErrorStatus(rec, status, e)
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\n")
	b.WriteString("Content-Type: application/json\r\nCache-Control: no-store\r\nConnection: close\r\n")
	b.WriteString("Content-Length: " + strconv.Itoa(body.Len()) + "\r\n\r\n")
	b.Write(body.Bytes())
	return b.Bytes(), true
}

func truncateBytes(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// bufferWriter is the smallest http.ResponseWriter: the envelope's body only.
type bufferWriter struct {
	h http.Header
	b *bytes.Buffer
}

func (w *bufferWriter) Header() http.Header         { return w.h }
func (w *bufferWriter) Write(p []byte) (int, error) { return w.b.Write(p) }
func (w *bufferWriter) WriteHeader(int)             {}
