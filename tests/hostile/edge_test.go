//go:build linux

package hostile

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawUpstream is an upstream on a raw socket: it reads one request per
// connection and hands the connection to answer, which may write anything
// (a status net/http would never send, invalid bytes) and hold it.
type rawUpstream struct {
	URL    string
	closed chan struct{} // one value per connection the gateway closed
	mu     sync.Mutex
	conns  []net.Conn
}

func newRawUpstream(t *testing.T, answer func(c net.Conn, r *http.Request)) *rawUpstream {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &rawUpstream{URL: "http://" + l.Addr().String(), closed: make(chan struct{}, 64)}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			u.mu.Lock()
			u.conns = append(u.conns, c)
			u.mu.Unlock()
			go func() {
				br := bufio.NewReader(c)
				r, err := http.ReadRequest(br)
				if err != nil {
					_ = c.Close()
					return
				}
				_, _ = io.Copy(io.Discard, r.Body)
				answer(c, r)
				// Held until the gateway closes it (or the test ends).
				_, _ = io.Copy(io.Discard, br)
				u.closed <- struct{}{}
				_ = c.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		u.mu.Lock()
		defer u.mu.Unlock()
		for _, c := range u.conns {
			_ = c.Close()
		}
	})
	return u
}

// waitClosed requires the gateway to close one of the upstream's connections within d.
func (u *rawUpstream) waitClosed(t *testing.T, what string, d time.Duration) {
	t.Helper()
	select {
	case <-u.closed:
	case <-time.After(d):
		t.Errorf("%s: the gateway still holds the upstream connection after %v", what, d)
	}
}

// post sends a chat request bounded by d, so a pinned request fails the test
// instead of hanging it.
func (p *proc) post(body []byte, d time.Duration) (*http.Response, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.base+"/v1/chat/completions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+p.key)
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp, out, err
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestUpstreamSwitchingProtocolsFailsTheAttempt: an upstream that answers 101
// Switching Protocols and then holds the socket used to pin the request (and
// its in-flight slot) until it closed, past the client's disconnect and every
// timeout. A 1xx final status is a failed attempt: the connection is closed at
// once and the next connection serves; with no other connection the client
// gets the upstream error at once, and no slot stays held.
func TestUpstreamSwitchingProtocolsFailsTheAttempt(t *testing.T) {
	raw := newRawUpstream(t, func(c net.Conn, _ *http.Request) {
		_, _ = io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
	})
	good := newUpstream(t)
	p := start(t, t.TempDir())
	p.addConn("switching", raw.URL, "sk-switching-0123456789", "m", 1)
	p.addConn("good", good.URL, "sk-good-0123456789", "m", 2)
	p.addConn("switching only", raw.URL, "sk-switching-0123456789", "only101", 1)
	for _, stream := range []bool{false, true} {
		what := map[bool]string{false: "non-stream", true: "stream"}[stream]
		t0 := time.Now()
		resp, body, err := p.post(mustJSON(t, chat("m", stream)), 10*time.Second)
		if err != nil {
			t.Fatalf("%s: %v (the 101 answer pinned the request)", what, err)
		}
		if resp.StatusCode != http.StatusOK || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") == "" {
			t.Errorf("%s: %d, want 200 from the next connection: %.300s", what, resp.StatusCode, body)
		}
		if d := time.Since(t0); d > 5*time.Second {
			t.Errorf("%s: served after %v", what, d)
		}
		raw.waitClosed(t, what, 5*time.Second)

		resp, body, err = p.post(mustJSON(t, chat("only101", stream)), 10*time.Second)
		if err != nil {
			t.Fatalf("%s, no other connection: %v (the 101 answer pinned the request)", what, err)
		}
		checkEnvelope(t, what+", no other connection", resp.StatusCode, resp.Header.Get("Content-Type"), body, http.StatusBadGateway, "ALL_ATTEMPTS_FAILED")
		if !bytes.Contains(body, []byte("101 Switching Protocols")) {
			t.Errorf("%s, no other connection: the answer does not say why: %.300s", what, body)
		}
		raw.waitClosed(t, what+", no other connection", 5*time.Second)
	}
	_, metrics := p.do(http.MethodGet, "/metrics", nil, map[string]string{"Authorization": "Bearer " + p.token})
	if !bytes.Contains(metrics, []byte("omniroute_requests_in_flight 0")) {
		t.Errorf("an in-flight slot is still held:\n%s", grepLines(metrics, "in_flight"))
	}
	_, logs := p.do(http.MethodGet, "/api/logs?limit=10", nil, map[string]string{"Authorization": "Bearer " + p.token})
	if !bytes.Contains(logs, []byte("UPSTREAM_BAD_STATUS")) {
		t.Errorf("the request log does not name the attempts' failure UPSTREAM_BAD_STATUS: %.1000s", logs)
	}
	p.mustBeUp("101 upstream")
	if strings.Contains(p.logs(), "websocket") {
		t.Errorf("the upstream's bytes reached the log:\n%s", tail(p.logs(), 2000))
	}
}

// sseHead starts a raw SSE answer that ends when the connection closes.
const sseHead = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"

func chunk(content string) string {
	return `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"` + content + `"}}]}` + "\n\n"
}

const finishChunk = `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` +
	"\n\ndata: [DONE]\n\n"

// TestInvalidStreamEventsFailTheAttempt: an SSE event whose data is not valid
// JSON (a raw NUL, invalid UTF-8) used to be dropped, so a stream of them was
// a 200 with finish_reason "stop" and no content. It fails the attempt: the
// next connection serves; with none, the client gets the upstream error; after
// the client has bytes, the stream ends with the in-band error, never with a
// clean end.
func TestInvalidStreamEventsFailTheAttempt(t *testing.T) {
	raw := newRawUpstream(t, func(c net.Conn, r *http.Request) {
		defer c.Close()
		_, _ = io.WriteString(c, sseHead)
		switch strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") {
		case "sk-nul-0123456789":
			_, _ = io.WriteString(c, chunk("a\x00b")+finishChunk)
		case "sk-utf8-0123456789":
			_, _ = io.WriteString(c, chunk("a\xff\xfeb")+finishChunk)
		case "sk-after-0123456789":
			_, _ = io.WriteString(c, chunk("hello"))
			time.Sleep(300 * time.Millisecond) // committed to the client by now
			_, _ = io.WriteString(c, chunk("a\x00b")+finishChunk)
		}
	})
	good := newUpstream(t)
	p := start(t, t.TempDir())
	p.addConn("nul", raw.URL, "sk-nul-0123456789", "mnul", 1)
	p.addConn("utf8", raw.URL, "sk-utf8-0123456789", "mutf8", 1)
	p.addConn("after", raw.URL, "sk-after-0123456789", "mafter", 1)
	p.addConn("nul first", raw.URL, "sk-nul-0123456789", "mfail", 1)
	p.addConn("good", good.URL, "sk-good-0123456789", "mfail", 2)
	for _, model := range []string{"mnul", "mutf8"} {
		resp, body, err := p.post(mustJSON(t, chat(model, true)), 10*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		checkEnvelope(t, model, resp.StatusCode, resp.Header.Get("Content-Type"), body, http.StatusBadGateway, "")
		if !bytes.Contains(body, []byte("not valid JSON")) {
			t.Errorf("%s: the answer does not say why: %.300s", model, body)
		}
	}
	resp, body, err := p.post(mustJSON(t, chat("mfail", true)), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("fine")) {
		t.Errorf("failover: %d, want 200 with the next connection's answer: %.300s", resp.StatusCode, body)
	}
	resp, body, err = p.post(mustJSON(t, chat("mafter", true)), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("hello")) || !bytes.Contains(body, []byte("stream interrupted")) ||
		bytes.Contains(body, []byte(`"finish_reason":"stop"`)) {
		t.Errorf("after commit: %d, want the text then the in-band error and no clean end:\n%s", resp.StatusCode, body)
	}
	p.mustBeUp("invalid events")
}

// TestOversizedStreamLineSaysSo: a stream line past the 8 MiB limit fails the
// attempt with a plain message (it used to read "short buffer").
func TestOversizedStreamLineSaysSo(t *testing.T) {
	raw := newRawUpstream(t, func(c net.Conn, r *http.Request) {
		defer c.Close()
		_, _ = io.WriteString(c, sseHead+"data: ")
		_, _ = c.Write(bytes.Repeat([]byte("a"), 9<<20))
	})
	p := start(t, t.TempDir())
	p.addConn("long", raw.URL, "sk-long-0123456789", "m", 1)
	resp, body, err := p.post(mustJSON(t, chat("m", true)), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	checkEnvelope(t, "long line", resp.StatusCode, resp.Header.Get("Content-Type"), body, http.StatusBadGateway, "")
	if bytes.Contains(body, []byte("short buffer")) || !bytes.Contains(body, []byte("8 MiB limit")) {
		t.Errorf("the answer does not say what happened: %.400s", body)
	}
}

// TestBrowserAttacksOnTheEdge: the dashboard cannot be framed; with keys off
// a page of another local origin cannot spend quota through a text/plain
// POST (a simple request, sent without a preflight); guessing keys or the
// management token is throttled per address and counted, and the valid key
// keeps working.
func TestBrowserAttacksOnTheEdge(t *testing.T) {
	u := newUpstream(t)
	p := start(t, t.TempDir())
	p.addConn("up", u.URL, "sk-up-0123456789", "m", 1)

	resp, _ := p.do(http.MethodGet, "/dashboard/", nil, nil)
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("the dashboard may be framed: CSP %q, X-Frame-Options %q", csp, resp.Header.Get("X-Frame-Options"))
	}

	p.settings(map[string]any{"requireApiKey": false})
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"spend"}]}`)
	other := strings.Replace(p.base, strings.TrimPrefix(p.base, "http://127.0.0.1:"), "3000", 1)
	for _, hdr := range []map[string]string{
		{"Content-Type": "text/plain", "Origin": other, "Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "no-cors"},
		{"Content-Type": "text/plain", "Origin": other}, // a browser without Sec-Fetch-*
		{"Content-Type": "text/plain", "Origin": "null"},
	} {
		resp, out := p.do(http.MethodPost, "/v1/chat/completions", body, hdr)
		checkEnvelope(t, "cross-origin keyless POST "+hdr["Origin"], resp.StatusCode, resp.Header.Get("Content-Type"), out, 403, "ORIGIN_NOT_ALLOWED")
	}
	if n := u.hits.Load(); n != 0 {
		t.Fatalf("a cross-origin page reached the upstream %d time(s)", n)
	}
	if resp, out := p.do(http.MethodPost, "/v1/chat/completions", body, nil); resp.StatusCode != 200 {
		t.Fatalf("keyless CLI request with keys off: %d %s", resp.StatusCode, out)
	}
	p.settings(map[string]any{"requireApiKey": true})

	// 200 guesses as fast as they go: at most the burst (30) plus one a
	// second are answered 401; the rest are 429 with Retry-After (from loopback a
	// valid key would still be served: see docs/HARDENING.md).
	t0 := time.Now()
	refused, throttled := 0, 0
	for i := range 200 {
		hdr := map[string]string{"Authorization": "Bearer sk-omni-guess" + strings.Repeat("0", i%7)}
		path := "/v1/models"
		if i%2 == 1 {
			path = "/api/keys"
		}
		resp, out := p.do(http.MethodGet, path, nil, hdr)
		switch resp.StatusCode {
		case 401:
			refused++
		case 429:
			throttled++
			checkEnvelope(t, "throttled guess", resp.StatusCode, resp.Header.Get("Content-Type"), out, 429, "AUTH_RATE_LIMITED")
			if resp.Header.Get("Retry-After") == "" {
				t.Fatalf("429 without Retry-After")
			}
		default:
			t.Fatalf("guess %d: %d %s", i, resp.StatusCode, out)
		}
	}
	if limit := 30 + int(time.Since(t0).Seconds()) + 1; refused > limit {
		t.Errorf("%d of 200 guesses were answered 401 in %v, want at most %d", refused, time.Since(t0), limit)
	}
	t.Logf("200 guesses: %d answered 401, %d throttled (429) in %v", refused, throttled, time.Since(t0))
	// A valid credential from loopback still works (every local client shares the address).
	if resp, out := p.do(http.MethodGet, "/v1/models", nil, p.auth()); resp.StatusCode != 200 {
		t.Errorf("the valid key while guesses are throttled: %d %s", resp.StatusCode, out)
	}
	_, metrics := p.do(http.MethodGet, "/metrics", nil, map[string]string{"Authorization": "Bearer " + p.token})
	if !bytes.Contains(metrics, []byte(`omniroute_auth_failures_total{result="throttled"`)) ||
		!bytes.Contains(metrics, []byte(`omniroute_auth_failures_total{result="refused"`)) {
		t.Errorf("/metrics does not count the failures:\n%s", grepLines(metrics, "auth_failures"))
	}
	if !strings.Contains(p.logs(), "failed authentication throttled") {
		t.Errorf("the throttling is not in the log:\n%s", tail(p.logs(), 2000))
	}
	if strings.Contains(p.logs(), "sk-omni-guess") {
		t.Errorf("a guessed key reached the log")
	}
}

// TestUnsolicitedUpstreamBytesAreNotLogged: bytes an upstream sends on an
// idle keep-alive connection made net/http's transport log "Unsolicited
// response received on idle HTTP channel starting with …" with the bytes
// quoted. The line is kept, the bytes are not.
func TestUnsolicitedUpstreamBytesAreNotLogged(t *testing.T) {
	const canary = "sk-unsolicited-canary-0123456789"
	raw := newRawUpstream(t, func(c net.Conn, _ *http.Request) {
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "+
			strconv.Itoa(len(okAnswer))+"\r\n\r\n"+okAnswer)
		time.Sleep(200 * time.Millisecond) // the connection is idle in the pool by now
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Echo: "+canary+"\r\n\r\n")
	})
	p := start(t, t.TempDir())
	p.addConn("chatty", raw.URL, "sk-chatty-0123456789", "m", 1)
	if resp, out := p.do(http.MethodPost, "/v1/chat/completions", chat("m", false), p.auth()); resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, out)
	}
	if !waitFor(5*time.Second, func() bool { return strings.Contains(p.logs(), "Unsolicited response") }) {
		t.Fatalf("the transport did not log the unsolicited bytes (the attack did not happen):\n%s", tail(p.logs(), 2000))
	}
	if strings.Contains(p.logs(), canary) || strings.Contains(p.logs(), "X-Echo") {
		t.Fatalf("the upstream's bytes reached the log:\n%s", tail(p.logs(), 2000))
	}
	t.Logf("logged: %s", grepLines([]byte(p.stderr.String()), "Unsolicited"))
}

// TestUncleanPathsAreRefusedInTheEnvelope: a path gorilla/mux would clean
// (//v1/…, dot segments) used to get a bare 301 outside the envelope; it is
// 404 ROUTE_NOT_FOUND in the envelope, and nothing reaches the upstream.
func TestUncleanPathsAreRefusedInTheEnvelope(t *testing.T) {
	u := newUpstream(t)
	p := start(t, t.TempDir())
	p.addConn("up", u.URL, "sk-up-0123456789", "m", 1)
	host := strings.TrimPrefix(p.base, "http://")
	for _, path := range []string{"//v1/chat/completions", "/v1/../v1/chat/completions", "/v1/./chat/completions"} {
		body := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
		resp, out := rawExchange(t, p.base, []byte("POST "+path+" HTTP/1.1\r\nHost: "+host+"\r\nAuthorization: Bearer "+p.key+
			"\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\nConnection: close\r\n\r\n"+body), 5*time.Second)
		checkEnvelope(t, path, resp.StatusCode, resp.Header.Get("Content-Type"), out, 404, "ROUTE_NOT_FOUND")
		if resp.Header.Get("Location") != "" {
			t.Errorf("%s: still redirects to %s", path, resp.Header.Get("Location"))
		}
	}
	if n := u.hits.Load(); n != 0 {
		t.Fatalf("the upstream got %d request(s)", n)
	}
}
