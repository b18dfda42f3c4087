//go:build linux

package hostile

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// okAnswer is a complete OpenAI chat answer.
const okAnswer = `{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"fine"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`

// hostileUpstream is an OpenAI-compatible upstream on loopback whose
// behaviour is chosen by the API key the gateway sends (one mode per key).
type hostileUpstream struct {
	URL      string
	srv      *http.Server
	mu       sync.Mutex
	modes    map[string]func(w http.ResponseWriter, r *http.Request)
	open     atomic.Int64 // requests being served now
	hits     atomic.Int64
	lastAuth atomic.Value // every header it got, for leak checks
}

func newUpstream(t *testing.T) *hostileUpstream {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &hostileUpstream{URL: "http://" + l.Addr().String(), modes: map[string]func(http.ResponseWriter, *http.Request){}}
	u.srv = &http.Server{Handler: u, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = u.srv.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = u.srv.Shutdown(ctx)
		_ = u.srv.Close()
	})
	return u
}

// on sets the behaviour for requests carrying key.
func (u *hostileUpstream) on(key string, h func(w http.ResponseWriter, r *http.Request)) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.modes[key] = h
}

func (u *hostileUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.hits.Add(1)
	u.open.Add(1)
	defer u.open.Add(-1)
	u.lastAuth.Store(r.Header.Clone())
	key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	u.mu.Lock()
	h := u.modes[key]
	u.mu.Unlock()
	_, _ = io.Copy(io.Discard, r.Body)
	if h == nil {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, okAnswer)
		return
	}
	h(w, r)
}

// pump writes piece until the request ends or limit passes, flushing each time.
func pump(w http.ResponseWriter, r *http.Request, head, piece []byte, limit time.Duration) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_, _ = w.Write(head)
	end := time.Now().Add(limit)
	for time.Now().Before(end) && r.Context().Err() == nil {
		if _, err := w.Write(piece); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
	}
}

// nested is n '[' bytes.
func nested(n int) []byte { return bytes.Repeat([]byte{'['}, n) }

// waitFor polls cond every 20 ms until it holds or d passes.
func waitFor(d time.Duration, cond func() bool) bool {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if cond() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cond()
}

func TestHostileUpstreamsCannotCrashOrBloat(t *testing.T) {
	u := newUpstream(t)
	// Each attack at the size the probe measured (or the size that makes the
	// unbounded code use hundreds of MiB within its time limit).
	attacks := []struct {
		name   string
		stream bool
		h      func(w http.ResponseWriter, r *http.Request)
	}{
		{"json nested 9M", false, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(nested(9 << 20))
		}},
		{"sse event nested 8M over 9000 data lines", true, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			line := append(append([]byte("data: "), nested(932)...), '\n')
			var b bytes.Buffer
			for range 9000 {
				b.Write(line)
			}
			b.WriteString("\n")
			_, _ = w.Write(b.Bytes())
		}},
		{"sse one line nested 4M", true, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write(append(append([]byte("data: "), nested(4<<20)...), "\n\n"...))
		}},
		{"endless role-only chunks", true, func(w http.ResponseWriter, r *http.Request) {
			pump(w, r, nil, bytes.Repeat([]byte(`data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant"}}]}`+"\n\n"), 64), 5*time.Second)
		}},
		{"endless comments", true, func(w http.ResponseWriter, r *http.Request) {
			pump(w, r, nil, bytes.Repeat([]byte(": keep-alive\n\n"), 512), 5*time.Second)
		}},
		{"endless data lines without a blank line", true, func(w http.ResponseWriter, r *http.Request) {
			pump(w, r, nil, bytes.Repeat([]byte("data: {\"x\":1}\n"), 512), 5*time.Second)
		}},
	}
	dir := t.TempDir()
	p := start(t, dir)
	for i, a := range attacks {
		key := "sk-hostile-" + string(rune('a'+i))
		u.on(key, a.h)
		p.addConn(a.name, u.URL, key, "m"+string(rune('a'+i)), 1)
	}
	time.Sleep(300 * time.Millisecond) // let start-up garbage settle before the idle reading
	idle, _ := p.memKB()
	for i, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			t0 := time.Now()
			resp, body := p.do(http.MethodPost, "/v1/chat/completions", chat("m"+string(rune('a'+i)), a.stream), p.auth())
			t.Logf("%s: %d in %v", a.name, resp.StatusCode, time.Since(t0).Round(time.Millisecond))
			if resp.StatusCode < 500 || resp.StatusCode == 500 {
				t.Errorf("status %d, want a gateway-side upstream error (502/503/504): %.300s", resp.StatusCode, body)
			}
			checkEnvelope(t, a.name, resp.StatusCode, resp.Header.Get("Content-Type"), body, resp.StatusCode, "")
			p.mustBeUp(a.name)
			if d := time.Since(t0); d > 8*time.Second {
				t.Errorf("took %v: the attempt was not cut short", d)
			}
		})
	}
	p.memBound(idle, 64, "hostile upstream bodies and streams")
}

// TestUpstreamRedirectIsNotFollowed: a 307 to another host must not carry
// the connection's key there; the attempt fails like any upstream error.
func TestUpstreamRedirectIsNotFollowed(t *testing.T) {
	witness := newUpstream(t)
	u := newUpstream(t)
	const secret = "sk-redirect-canary-0123456789abcdef"
	u.on(secret, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", witness.URL+"/v1/chat/completions")
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
	p := start(t, t.TempDir())
	p.addConn("redirecting", u.URL, secret, "m", 1)
	resp, body := p.do(http.MethodPost, "/v1/chat/completions", chat("m", false), p.auth())
	if resp.StatusCode < 500 {
		t.Errorf("status %d after a redirect, want an upstream error: %s", resp.StatusCode, body)
	}
	checkEnvelope(t, "redirect", resp.StatusCode, resp.Header.Get("Content-Type"), body, resp.StatusCode, "")
	if n := witness.hits.Load(); n != 0 {
		t.Fatalf("the redirect target got %d request(s): redirects are followed (and the key with them)", n)
	}
	if bytes.Contains(body, []byte(secret)) {
		t.Fatalf("the client answer holds the secret: %s", body)
	}
}
