package httpx

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"omniroute/backend/errs"
)

// serve runs h on a loopback server behind EnvelopeListener and returns its address.
func serve(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, MaxHeaderBytes: 4096, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(EnvelopeListener(l)) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}

func exchange(t *testing.T, addr, raw string) (*http.Response, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func codeOf(t *testing.T, b []byte) string {
	t.Helper()
	var env struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(b, &env); err != nil || env.Error.Code == "" || env.Error.Message == "" {
		t.Fatalf("not the envelope: %q", b)
	}
	return env.Error.Code
}

func TestCannedErrorsBecomeTheEnvelope(t *testing.T) {
	addr := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Connection", "close")
		_, _ = io.WriteString(w, "a handler's own text/plain answer")
	})
	cases := []struct {
		name, raw string
		status    int
		code      string
	}{
		{"431", "GET / HTTP/1.1\r\nHost: x\r\nX: " + strings.Repeat("a", 10000) + "\r\n\r\n", 431, "REQUEST_HEADERS_TOO_LARGE"},
		{"missing Host", "GET / HTTP/1.1\r\n\r\n", 400, "BAD_REQUEST"},
		{"malformed header", "GET / HTTP/1.1\r\nHost: x\r\nno colon\r\n\r\n", 400, "BAD_REQUEST"},
		{"bad version", "GET / HTTP/9.9\r\nHost: x\r\n\r\n", 505, "HTTP_VERSION_NOT_SUPPORTED"},
		{"bad transfer encoding", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "NOT_IMPLEMENTED"},
	}
	for _, c := range cases {
		resp, b := exchange(t, addr, c.raw)
		if resp.StatusCode != c.status || resp.Header.Get("Content-Type") != "application/json" || codeOf(t, b) != c.code {
			t.Errorf("%s: %d %q %s, want %d %s", c.name, resp.StatusCode, resp.Header.Get("Content-Type"), b, c.status, c.code)
		}
	}
	// A handler's answer, even text/plain with Connection: close, is untouched.
	resp, b := exchange(t, addr, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp.StatusCode != 200 || string(b) != "a handler's own text/plain answer" {
		t.Fatalf("a handler answer was rewritten: %d %q", resp.StatusCode, b)
	}
}

// FuzzRewriteCanned: every byte the server writes passes through the
// rewriter; it must never panic and only ever touch net/http's canned shape.
func FuzzRewriteCanned(f *testing.F) {
	f.Add([]byte("HTTP/1.1 431 Request Header Fields Too Large" + cannedHeaders + "431 Request Header Fields Too Large"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nhi"))
	f.Add([]byte("data: {}\n\n"))
	f.Fuzz(func(t *testing.T, p []byte) {
		out, ok := RewriteCanned(p)
		if !ok {
			return
		}
		if !bytes.Contains(p, []byte(cannedHeaders)) {
			t.Fatalf("rewrote a non-canned write: %q", p)
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(out)), nil)
		if err != nil {
			t.Fatalf("rewritten answer does not parse: %v\n%q", err, out)
		}
		b, _ := io.ReadAll(resp.Body)
		if !json.Valid(b) {
			t.Fatalf("rewritten body is not JSON: %q", b)
		}
	})
}

func TestReadBodyLimited(t *testing.T) {
	budget := NewBudget(func() int64 { return 100 })
	type result struct {
		body []byte
		err  error
	}
	results := make(chan result, 1)
	hold := make(chan struct{})
	addr := serve(t, func(w http.ResponseWriter, r *http.Request) {
		b, release, err := ReadBodyLimited(w, r, BodyLimits{Max: 80, Timeout: 300 * time.Millisecond, Budget: budget})
		if r.Header.Get("X-Hold") != "" {
			<-hold
		}
		release()
		results <- result{b, err}
		if err != nil {
			WriteError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	post := func(body string, hdr string) (int, string) {
		resp, b := exchange(t, addr, "POST / HTTP/1.1\r\nHost: x\r\n"+hdr+"Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
		if resp.StatusCode == 204 {
			return 204, ""
		}
		return resp.StatusCode, codeOf(t, b)
	}
	if s, _ := post(strings.Repeat("a", 80), ""); s != 204 {
		t.Fatalf("80 bytes at the limit: %d", s)
	}
	if r := <-results; len(r.body) != 80 || budget.Used() != 0 {
		t.Fatalf("read %d bytes, budget in use %d after release", len(r.body), budget.Used())
	}
	if s, c := post(strings.Repeat("a", 81), ""); s != 413 || c != "REQUEST_TOO_LARGE" {
		t.Fatalf("81 bytes: %d %s", s, c)
	}
	<-results

	// The budget: one 60-byte body held, a second 60-byte body does not fit.
	go func() { _, _ = post(strings.Repeat("a", 60), "X-Hold: 1\r\n") }()
	for budget.Used() != 60 {
		time.Sleep(time.Millisecond)
	}
	if s, c := post(strings.Repeat("b", 60), ""); s != 503 || c != "GATEWAY_SATURATED" {
		t.Fatalf("over budget: %d %s", s, c)
	}
	if r := <-results; r.err == nil || errs.As(r.err).Code != "GATEWAY_SATURATED" {
		t.Fatalf("over budget err = %v", r.err)
	}
	if s, _ := post(strings.Repeat("c", 40), ""); s != 204 {
		t.Fatalf("40 bytes within what is left: %d", s)
	}
	<-results
	close(hold)
	<-results
	if budget.Used() != 0 {
		t.Fatalf("budget in use %d after every release", budget.Used())
	}

	// 408: a body that does not arrive in time; the connection is closed unread.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	_, _ = io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\nabc")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 408 || codeOf(t, b) != "REQUEST_TIMEOUT" {
		t.Fatalf("slow body: %d %s", resp.StatusCode, b)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("connection still open after the 408: %v", err)
	}
	<-results

	// Chunked (no declared length) is reserved as it grows and bounded too.
	resp, b = exchange(t, addr, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
	if resp.StatusCode != 204 {
		t.Fatalf("chunked: %d %s", resp.StatusCode, b)
	}
	if r := <-results; string(r.body) != "hello" {
		t.Fatalf("chunked body %q", r.body)
	}
}

// TestSlowSenderReservesOnlyWhatItSent: a body declared large but trickled
// holds one growth step of the budget, not its declared length, so a few slow
// senders cannot starve everyone of the budget for the body deadline.
func TestSlowSenderReservesOnlyWhatItSent(t *testing.T) {
	budget := NewBudget(func() int64 { return 200 << 10 })
	done := make(chan int, 2)
	addr := serve(t, func(w http.ResponseWriter, r *http.Request) {
		b, release, err := ReadBodyLimited(w, r, BodyLimits{Max: 1 << 20, Timeout: 5 * time.Second, Budget: budget})
		release()
		if err != nil {
			WriteError(w, err)
			done <- -1
			return
		}
		w.WriteHeader(http.StatusNoContent)
		done <- len(b)
	})
	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	_, _ = io.WriteString(slow, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 153600\r\n\r\n0123456789")
	for budget.Used() == 0 {
		time.Sleep(time.Millisecond)
	}
	if u := budget.Used(); u != chunk {
		t.Fatalf("a slow sender of a declared 150 KiB holds %d bytes of the budget, want one %d-byte step", u, chunk)
	}
	body := strings.Repeat("a", 100<<10)
	resp, b := exchange(t, addr, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
	if resp.StatusCode != 204 {
		t.Fatalf("a 100 KiB body beside the slow sender: %d %s", resp.StatusCode, b)
	}
	if n := <-done; n != len(body) {
		t.Fatalf("read %d bytes", n)
	}
	_ = slow.Close()
	<-done
	if budget.Used() != 0 {
		t.Fatalf("budget in use %d after both ended", budget.Used())
	}
}

// deadlineWriter records the write deadline it was given.
type deadlineWriter struct {
	http.ResponseWriter
	at time.Time
}

func (d *deadlineWriter) SetWriteDeadline(t time.Time) error { d.at = t; return nil }

// unwrapper wraps a writer as middleware does.
type unwrapper struct{ http.ResponseWriter }

func (u unwrapper) Unwrap() http.ResponseWriter { return u.ResponseWriter }

// TestSetWriteDeadlineFindsTheConnection: the deadline reaches the first
// writer in the Unwrap chain that takes one, as http.ResponseController does;
// a chain without one reports http.ErrNotSupported.
func TestSetWriteDeadlineFindsTheConnection(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := &deadlineWriter{ResponseWriter: httptest.NewRecorder()}
	if err := SetWriteDeadline(unwrapper{unwrapper{d}}, at); err != nil || !d.at.Equal(at) {
		t.Fatalf("err %v, deadline %v", err, d.at)
	}
	if err := SetWriteDeadline(unwrapper{httptest.NewRecorder()}, at); !errors.Is(err, http.ErrNotSupported) {
		t.Fatalf("err %v, want ErrNotSupported", err)
	}
}

// TestRedactQuoted: every quoted string (escaped quotes inside included) is
// replaced by its unquoted length; an unterminated one redacts the rest of the
// line; a line without quotes is unchanged.
func TestRedactQuoted(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`no quotes here`, `no quotes here`},
		{`Unsolicited response received on idle HTTP channel starting with "HTTP/1.1 200 OK\r\nX-Key: sk-secret\r\n"; err=<nil>`,
			`Unsolicited response received on idle HTTP channel starting with "[35 bytes redacted]"; err=<nil>`},
		{`a "x\"y" b "" c`, `a "[3 bytes redacted]" b "[0 bytes redacted]" c`},
		{`bogus greeting "sk-sec`, `bogus greeting "[6 bytes redacted]"`},
	} {
		if got := RedactQuoted(c.in); got != c.want {
			t.Errorf("RedactQuoted(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// TestPeerBytesLogger: a line written to the logger reaches the handler at
// the level given, redacted.
func TestPeerBytesLogger(t *testing.T) {
	var buf bytes.Buffer
	l := PeerBytesLogger(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}), slog.LevelWarn)
	l.Printf("Unsolicited response received on idle HTTP channel starting with %q; err=%v", "HTTP/1.1 200 OK\r\nsk-canary", nil)
	out := buf.String()
	if strings.Contains(out, "sk-canary") || !strings.Contains(out, "level=WARN") || !strings.Contains(out, "bytes redacted") {
		t.Fatalf("logged %q", out)
	}
}

// TestWriteJSONNeverAnswers200WithoutItsBody: a value JSON cannot encode
// (+Inf, NaN) is a 500 in the error envelope, not the status asked for with
// an empty body; an encodable one is written whole.
func TestWriteJSONNeverAnswers200WithoutItsBody(t *testing.T) {
	for _, c := range []struct {
		name   string
		v      any
		status int
		code   string
	}{
		{"+Inf", map[string]any{"usd": math.Inf(1)}, http.StatusInternalServerError, "ENCODING_FAILED"},
		{"NaN in a struct", struct{ USD float64 }{math.NaN()}, http.StatusInternalServerError, "ENCODING_FAILED"},
		{"a channel", map[string]any{"c": make(chan int)}, http.StatusInternalServerError, "ENCODING_FAILED"},
		{"a number", map[string]any{"usd": 1.5}, http.StatusOK, ""},
	} {
		rec := httptest.NewRecorder()
		WriteJSON(rec, http.StatusOK, c.v)
		if rec.Code != c.status {
			t.Errorf("%s: status %d, want %d", c.name, rec.Code, c.status)
		}
		var m map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil || len(m) == 0 {
			t.Errorf("%s: body %q is not a JSON object", c.name, rec.Body.String())
			continue
		}
		if c.code != "" {
			e, _ := m["error"].(map[string]any)
			if e == nil || e["code"] != c.code || e["message"] == "" || e["type"] != "server_error" {
				t.Errorf("%s: %q, want the envelope with %s", c.name, rec.Body.String(), c.code)
			}
		}
	}
}
