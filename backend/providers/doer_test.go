package providers

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestJSONRequestIsNewRequest: the request builder makes the request
// http.NewRequest would (method, URL, host, protocol, length, a body that can
// be read again for the transport's retries) with the shared headers, the
// provider's, the call's and the executor's own, the last winning; the
// endpoint's URL is its own copy on every request.
func TestJSONRequestIsNewRequest(t *testing.T) {
	var r Requests
	target := Target{BaseURL: "http://127.0.0.1:9/v1/", Model: "gpt-4o-mini",
		Provider: Provider{ExtraHeaders: map[string]string{"X-Extra": "e", "Authorization": "provider's"}}}
	call := Call{Body: []byte(`{"model":"openai/gpt-4o-mini","stream":true}`), Stream: true,
		Header: http.Header{"Anthropic-Usage-Limit": {"u"}}}
	ctx := context.WithValue(context.Background(), struct{}{}, "v")
	for round := range 2 { // the second request comes from the cache
		req, err := r.JSON(ctx, new(target), call, "/chat/completions", "OmniRoute/test",
			Credential{Name: "Authorization", Prefix: "Bearer ", Secret: "sk-up"}, "X-Own", "o")
		if err != nil {
			t.Fatal(err)
		}
		want, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:9/v1/chat/completions", strings.NewReader("x"))
		if req.Method != want.Method || req.URL.String() != want.URL.String() || req.Host != want.Host || req.Proto != want.Proto ||
			req.ProtoMajor != 1 || req.ProtoMinor != 1 || req.Context() != ctx {
			t.Fatalf("round %d: request %s %s host %q proto %s, want %s %s host %q", round, req.Method, req.URL, req.Host, req.Proto,
				want.Method, want.URL, want.Host)
		}
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "text/event-stream",
			"User-Agent": "OmniRoute/test", "X-Extra": "e", "Anthropic-Usage-Limit": "u", "Authorization": "Bearer sk-up", "X-Own": "o"} {
			if got := req.Header.Values(k); len(got) != 1 || got[0] != v {
				t.Errorf("round %d: header %s = %q, want %q", round, k, got, v)
			}
		}
		wantBody := `{"model":"gpt-4o-mini","stream":true}`
		if req.ContentLength != int64(len(wantBody)) {
			t.Errorf("content length %d, want %d", req.ContentLength, len(wantBody))
		}
		for i, rc := range []io.ReadCloser{req.Body, mustGetBody(t, req), mustGetBody(t, req)} {
			b, _ := io.ReadAll(rc)
			if string(b) != wantBody {
				t.Errorf("round %d: body read %d = %s, want %s", round, i, b, wantBody)
			}
		}
		req.URL.Path = "/changed" // one request's URL is its own
	}
}

func mustGetBody(t *testing.T, req *http.Request) io.ReadCloser {
	t.Helper()
	rc, err := req.GetBody()
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

// TestDirectAnswersAsTheClient: Direct gives what an http.Client that follows
// no redirect gives: the 3xx itself with its body, the same *url.Error for a
// transport failure, and Basic auth from a URL's user info.
func TestDirectAnswersAsTheClient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		default:
			u, p, _ := r.BasicAuth()
			_, _ = io.WriteString(w, r.Method+" "+r.URL.Path+" "+u+":"+p)
		}
	}))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{Proxy: nil}, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	defer client.Transport.(*http.Transport).CloseIdleConnections()
	direct := Direct{Client: client}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/v1"
	ln.Close() // nothing listens there now
	userURL, _ := url.Parse(srv.URL)
	userURL.User = url.UserPassword("user", "pw")
	for _, u := range []string{srv.URL + "/ok", srv.URL + "/redirect", closed, userURL.String() + "/auth"} {
		got, gerr := do(direct, u)
		want, werr := do(client, u)
		if got != want || (gerr == nil) != (werr == nil) {
			t.Errorf("%s: direct %q %v, client %q %v", u, got, gerr, want, werr)
		}
		if werr != nil {
			var ge, we *url.Error
			if !errors.As(gerr, &ge) || !errors.As(werr, &we) || ge.Op != we.Op || ge.URL != we.URL {
				t.Errorf("%s: direct error %#v, client error %#v", u, gerr, werr)
			}
		}
	}
}

func do(d Doer, u string) (string, error) {
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader("{}"))
	if err != nil {
		return "", err
	}
	resp, err := d.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.Status + " " + resp.Header.Get("Location") + " " + string(b), nil
}

// TestJSONRequestCredential: the credential header is Prefix+Secret whatever
// its length (kept in the request's storage or not), absent without a secret,
// and replaces a provider header of the same name.
func TestJSONRequestCredential(t *testing.T) {
	var r Requests
	target := Target{BaseURL: "http://127.0.0.1:9/v1", Model: "m",
		Provider: Provider{ExtraHeaders: map[string]string{"X-Api-Key": "provider's"}}}
	for _, secret := range []string{"", "sk-short", strings.Repeat("t", 300)} {
		req, err := r.JSON(context.Background(), new(target), Call{Body: []byte(`{"model":"m"}`)}, "/messages", "ua",
			Credential{Name: "X-Api-Key", Secret: secret})
		if err != nil {
			t.Fatal(err)
		}
		want := secret
		if secret == "" {
			want = "provider's"
		}
		if got := req.Header.Values("X-Api-Key"); len(got) != 1 || got[0] != want {
			t.Errorf("secret of %d bytes: X-Api-Key %q, want %q", len(secret), got, want)
		}
	}
}

// TestDirectGzipAsTheTransport: NewDirect asks for gzip itself and hands back
// what the transport's own gzip handling would: the decompressed body,
// without Content-Encoding and Content-Length; an uncompressed answer and a
// caller's own Accept-Encoding are left alone.
func TestDirectGzipAsTheTransport(t *testing.T) {
	const text = `{"choices":[{"message":{"content":"hello, compressed world"}}]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "gzip" || r.URL.Path == "/plain" {
			_, _ = io.WriteString(w, text)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		_, _ = io.WriteString(zw, text)
		_ = zw.Close()
	}))
	defer srv.Close()
	tr := &http.Transport{Proxy: nil}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, path := range []string{"/gzip", "/plain"} {
		for name, d := range map[string]Doer{"direct": NewDirect(client), "client": client} {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader("{}"))
			resp, err := d.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || string(b) != text {
				t.Errorf("%s %s: body %q, err %v", name, path, b, err)
			}
			if resp.Header.Get("Content-Encoding") != "" || path == "/gzip" && (!resp.Uncompressed || resp.ContentLength != -1) {
				t.Errorf("%s %s: Content-Encoding %q, uncompressed %v, length %d", name, path,
					resp.Header.Get("Content-Encoding"), resp.Uncompressed, resp.ContentLength)
			}
		}
	}
	// A caller that asks for an encoding itself gets the answer as sent.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/gzip", strings.NewReader("{}"))
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := NewDirect(client).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("caller's own Accept-Encoding: answer decoded anyway")
	}
}

// TestDirectRefusesInterimFinalStatus: an upstream answering 101 Switching
// Protocols (the one 1xx net/http hands back as the answer, with the raw
// connection as its body and out of reach of the request's context) is an
// error, and its connection is closed at once, through either path of Direct.
func TestDirectRefusesInterimFinalStatus(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	closed := make(chan struct{}, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				if _, err := c.Read(buf); err != nil {
					return
				}
				_, _ = io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n")
				for { // hold the socket until the client closes it
					if _, err := c.Read(buf); err != nil {
						closed <- struct{}{}
						return
					}
				}
			}()
		}
	}()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	d := NewDirect(&http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }})
	for _, u := range []string{"http://" + l.Addr().String() + "/v1", "http://user:pw@" + l.Addr().String() + "/v1"} {
		req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader("{}"))
		resp, err := d.Do(req)
		var ie *InterimStatusError
		if err == nil || !errors.As(err, &ie) || ie.Status != http.StatusSwitchingProtocols {
			if resp != nil {
				resp.Body.Close()
			}
			t.Fatalf("%s: err %v, want an InterimStatusError for 101", u, err)
		}
		if _, ok := err.(*url.Error); !ok {
			t.Errorf("%s: err %T, want a *url.Error as the client gives", u, err)
		}
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the 101 connection is still open", u)
		}
	}
}

// TestRefuseInterim: only a status below 200 is refused.
func TestRefuseInterim(t *testing.T) {
	for _, tc := range []struct {
		status int
		refuse bool
	}{{100, true}, {101, true}, {199, true}, {200, false}, {204, false}, {301, false}, {500, false}} {
		body := &closeSpy{}
		err := RefuseInterim(&http.Response{StatusCode: tc.status, Body: body})
		if (err != nil) != tc.refuse || body.closed != tc.refuse {
			t.Errorf("status %d: err %v, body closed %v; want refused %v", tc.status, err, body.closed, tc.refuse)
		}
	}
	if RefuseInterim(nil) != nil {
		t.Error("a nil answer is not refused")
	}
}

type closeSpy struct{ closed bool }

func (c *closeSpy) Read([]byte) (int, error) { return 0, io.EOF }
func (c *closeSpy) Close() error             { c.closed = true; return nil }
