package api

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"omniroute/backend/clock"
	"omniroute/backend/config"
	"omniroute/backend/gateway"
	"omniroute/backend/keyring"
	"omniroute/backend/providers/registry"
	"omniroute/backend/routing"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
)

// memKV is an in-memory settings store.
type memKV map[string]string

func (m memKV) GetValue(ns, key string) (string, bool, error) {
	v, ok := m[ns+"/"+key]
	return v, ok, nil
}

func (m memKV) SetValue(ns, key, value string) error {
	m[ns+"/"+key] = value
	return nil
}

// edgeAPI builds the API over a gateway with no connections (every model is
// MODEL_NOT_FOUND), one inference key and one key without the inference scope.
func edgeAPI(t *testing.T, kv memKV, muxOnly bool) (*API, http.Handler) {
	t.Helper()
	settings, err := config.NewHolder(kv, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	keys := keyring.New()
	keys.Load([]store.APIKey{
		{ID: "k-good", KeyHash: secrets.Hash("sk-good"), Scopes: `["inference"]`},
		{ID: "k-mgmt", KeyHash: secrets.Hash("sk-noscope"), Scopes: `["management"]`},
	})
	clk := clock.Real{}
	engine := routing.NewEngine(routing.EngineDeps{Registry: routing.NewRegistry(registry.Catalog(nil)), Clock: clk})
	gw := gateway.New(gateway.Deps{Engine: engine, Clock: clk, General: settings.GeneralRef})
	a := New(Deps{Gateway: gw, Settings: settings, Keys: keys, Clock: clk, Token: "mgmt-token",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Engine: engine,
		Dashboard: fstest.MapFS{"index.html": {Data: []byte("<!doctype html>")}}})
	a.muxOnly = muxOnly
	return a, a.Handler()
}

// TestHotRoutesAnswerAsTheRouter: the exact-path fast path of the three
// inference routes gives every request the answer gorilla/mux gives it —
// Host allowlist, cross-origin rule, pause, key and scope checks, body
// limits and validation, method and path mismatches — status, headers that
// matter and body alike.
func TestHotRoutesAnswerAsTheRouter(t *testing.T) {
	const chat = `{"model":"nope-model","messages":[{"role":"user","content":"hi"}]}`
	big := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", 2048) + `"}]}`
	type req struct {
		name, method, path, body string
		header                   map[string]string
		host                     string
		want                     string // what the answer says (an error code), unpaused
		beforePause              bool   // decided before the pause check (edge or router)
	}
	good := map[string]string{"Authorization": "Bearer sk-good", "Content-Type": "application/json"}
	with := func(kv ...string) map[string]string {
		h := map[string]string{}
		for k, v := range good {
			h[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			h[kv[i]] = kv[i+1]
		}
		return h
	}
	cases := []req{
		{name: "routed to the gateway", method: "POST", path: "/v1/chat/completions", body: chat, header: good, want: "MODEL_NOT_FOUND"},
		{name: "messages", method: "POST", path: "/v1/messages", body: chat, header: good, want: "MODEL_NOT_FOUND"},
		{name: "responses", method: "POST", path: "/v1/responses", body: `{"model":"nope-model","input":"hi"}`, header: good, want: "MODEL_NOT_FOUND"},
		{name: "foreign host", method: "POST", path: "/v1/chat/completions", body: chat, header: good, host: "evil.example:20128", want: "HOST_NOT_ALLOWED", beforePause: true},
		{name: "cross origin", method: "POST", path: "/v1/messages", body: chat, header: with("Origin", "https://evil.example"), want: "ORIGIN_NOT_ALLOWED", beforePause: true},
		{name: "no key", method: "POST", path: "/v1/chat/completions", body: chat, header: map[string]string{"Content-Type": "application/json"}, want: "API_KEY_REQUIRED"},
		{name: "wrong key", method: "POST", path: "/v1/messages", body: chat, header: with("Authorization", "Bearer sk-bad"), want: "API_KEY_INVALID"},
		{name: "x-api-key", method: "POST", path: "/v1/messages", body: chat, header: map[string]string{"X-Api-Key": "sk-good"}, want: "MODEL_NOT_FOUND"},
		{name: "no inference scope", method: "POST", path: "/v1/responses", body: chat, header: with("Authorization", "Bearer sk-noscope"), want: "SCOPE_REQUIRED"},
		{name: "invalid JSON", method: "POST", path: "/v1/chat/completions", body: `{"model":`, header: good, want: "INVALID_JSON"},
		{name: "model missing", method: "POST", path: "/v1/chat/completions", body: `{"messages":[]}`, header: good, want: "MODEL_REQUIRED"},
		{name: "too large", method: "POST", path: "/v1/chat/completions", body: big, header: good, want: "REQUEST_TOO_LARGE"},
		{name: "GET on a POST route", method: "GET", path: "/v1/chat/completions", header: good, want: "METHOD_NOT_ALLOWED", beforePause: true},
		{name: "trailing slash", method: "POST", path: "/v1/chat/completions/", body: chat, header: good, want: "ROUTE_NOT_FOUND", beforePause: true},
		{name: "unclean path", method: "POST", path: "/v1//chat/completions", body: chat, header: good, want: "", beforePause: true},
		{name: "other case", method: "POST", path: "/V1/chat/completions", body: chat, header: good, want: "ROUTE_NOT_FOUND", beforePause: true},
		{name: "neighbour route", method: "POST", path: "/v1/messages/count_tokens", body: chat, header: good, want: "input_tokens"},
	}
	kv := memKV{"settings/general": `{"maxBodyBytes":1024}`}
	fastAPI, fast := edgeAPI(t, kv, false)
	routerAPI, router := edgeAPI(t, kv, true)
	run := func(h http.Handler, c req) *httptest.ResponseRecorder {
		r := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
		r.Host = "127.0.0.1:20128"
		if c.host != "" {
			r.Host = c.host
		}
		for k, v := range c.header {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	for _, paused := range []bool{false, true} {
		fastAPI.SetPaused(paused)
		routerAPI.SetPaused(paused)
		for _, c := range cases {
			got, want := run(fast, c), run(router, c)
			name := c.name
			if paused {
				name += " (paused)"
			}
			if got.Code != want.Code || got.Body.String() != want.Body.String() {
				t.Errorf("%s: fast path %d %s, router %d %s", name, got.Code, got.Body, want.Code, want.Body)
			}
			for _, h := range []string{"Allow", "Connection", "Content-Type", "Retry-After"} {
				if got.Header().Get(h) != want.Header().Get(h) {
					t.Errorf("%s: header %s: fast path %q, router %q", name, h, got.Header().Get(h), want.Header().Get(h))
				}
			}
			says := c.want
			if paused && !c.beforePause {
				says = "GATEWAY_PAUSED"
			}
			if !strings.Contains(got.Body.String(), says) {
				t.Errorf("%s: %d %s, want %s", name, got.Code, got.Body, says)
			}
		}
	}
}

// TestHotRoutesTakeOnlyExactPosts: only POST on the three exact paths skips
// the router; everything else reaches it.
func TestHotRoutesTakeOnlyExactPosts(t *testing.T) {
	var routed, hot int
	h := &hotRoutes{router: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { routed++ }),
		chat:      func(http.ResponseWriter, *http.Request) { hot++ },
		messages:  func(http.ResponseWriter, *http.Request) { hot++ },
		responses: func(http.ResponseWriter, *http.Request) { hot++ }}
	for _, c := range []struct {
		method, path string
		fast         bool
	}{
		{"POST", "/v1/chat/completions", true},
		{"POST", "/v1/messages", true},
		{"POST", "/v1/responses", true},
		{"GET", "/v1/chat/completions", false},
		{"PUT", "/v1/messages", false},
		{"POST", "/v1/messages/count_tokens", false},
		{"POST", "/v1/models", false},
		{"POST", "/v1/chat/completions/", false},
		{"POST", "/api/providers", false},
	} {
		routed, hot = 0, 0
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(c.method, c.path, bytes.NewReader(nil)))
		if (hot == 1) != c.fast || hot+routed != 1 {
			t.Errorf("%s %s: fast path %d, router %d; want fast=%v", c.method, c.path, hot, routed, c.fast)
		}
	}
}

// TestReadBodyIsHandedBack: a body read to its end and closed is handed back
// to its request (the server then sees it consumed and does not drain it
// through the wrapper); a body closed before its end stays wrapped, so an
// error answer still closes the connection.
func TestReadBodyIsHandedBack(t *testing.T) {
	for _, full := range []bool{true, false} {
		r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(`{"model":"m"}`))
		orig := r.Body
		e := (&API{}).edge(httptest.NewRecorder(), r)
		buf := make([]byte, 4)
		if full {
			buf = make([]byte, 64)
		}
		_, _ = io.ReadFull(r.Body, buf)
		_ = r.Body.Close()
		if handed := r.Body == orig; handed != full {
			t.Errorf("read to the end %v: body handed back %v", full, handed)
		}
		if e.body.complete() != full {
			t.Errorf("read to the end %v: complete %v", full, e.body.complete())
		}
	}
}
