package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"omniroute/tests/fakeupstream"
)

// TestBadInputGetsClearErrors: clients and scripts that send garbage, come
// from the wrong place or forget credentials get a 4xx with the one error
// envelope and a stable code, never a 500, and the gateway keeps working.
func TestBadInputGetsClearErrors(t *testing.T) {
	t.Parallel()
	up := fakeupstream.New()
	upURL := up.Start()
	t.Cleanup(up.Close)
	g := startGateway(t, t.TempDir(), 0)
	conn := g.addConn("primary", upURL, "key-a", 1)

	client := map[string]string{"Authorization": "Bearer " + g.key}
	mgmt := map[string]string{"Authorization": "Bearer " + g.token}
	with := func(base map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	chat := "/v1/chat/completions"
	okChat := chatBody("openai-compatible/gpt-4o-mini", false)

	cases := []struct {
		name       string
		method     string
		path       string
		body       any
		hdr        map[string]string
		wantStatus int
		wantCode   string // "" = any UPPER_SNAKE code
	}{
		// Client API.
		{"malformed JSON", "POST", chat, `{"model": "openai-compatible/gpt-4o-mini",`, client, 400, "INVALID_JSON"},
		{"JSON array body", "POST", chat, `[1,2,3]`, client, 400, "INVALID_JSON"},
		{"empty body", "POST", chat, ``, client, 400, "INVALID_JSON"},
		{"missing model", "POST", chat, `{"messages":[{"role":"user","content":"hi"}]}`, client, 400, "MODEL_REQUIRED"},
		{"model not a string", "POST", chat, `{"model":42,"messages":[]}`, client, 400, "MODEL_REQUIRED"},
		{"unknown bare model", "POST", chat, chatBody("no-such-model", false), client, 404, "MODEL_NOT_FOUND"},
		{"unknown provider prefix", "POST", chat, chatBody("nosuchprovider/gpt-4o-mini", false), client, 404, "MODEL_NOT_FOUND"},
		{"known provider without connection", "POST", chat, chatBody("anthropic/claude-sonnet-4-5", false), client, 404, "MODEL_NOT_FOUND"},
		{"no key", "POST", chat, okChat, nil, 401, "API_KEY_REQUIRED"},
		{"wrong key", "POST", chat, okChat, map[string]string{"Authorization": "Bearer sk-omni-wrongwrongwrongwrong"}, 401, "API_KEY_INVALID"},
		{"management token is not a client key", "POST", chat, okChat, mgmt, 401, "API_KEY_INVALID"},
		{"models without key", "GET", "/v1/models", nil, nil, 401, "API_KEY_REQUIRED"},
		{"foreign Host with valid key", "POST", chat, okChat, with(client, "Host", "evil.example"), 403, "HOST_NOT_ALLOWED"},
		{"foreign Host with port and valid key", "GET", "/v1/models", nil, with(client, "Host", "evil.example:20128"), 403, "HOST_NOT_ALLOWED"},
		{"unknown client route", "POST", "/v1/nope", okChat, client, 404, ""},

		// Management API.
		{"foreign Host with valid token", "GET", "/api/providers", nil, with(mgmt, "Host", "evil.example"), 403, "HOST_NOT_ALLOWED"},
		{"foreign Host on health", "GET", "/api/monitoring/health", nil, map[string]string{"Host": "evil.example"}, 403, "HOST_NOT_ALLOWED"},
		{"cross-origin POST", "POST", "/api/providers", map[string]any{"provider": "openai-compatible", "name": "evil",
			"apiKey": "x", "baseUrl": upURL + "/v1"}, with(mgmt, "Origin", "https://evil.example"), 403, "ORIGIN_NOT_ALLOWED"},
		{"cross-origin PATCH settings", "PATCH", "/api/settings", map[string]any{"requireApiKey": false},
			with(mgmt, "Origin", "https://evil.example"), 403, "ORIGIN_NOT_ALLOWED"},
		{"cross-origin DELETE", "DELETE", "/api/providers/" + conn, nil, with(mgmt, "Origin", "http://evil.example:8080"), 403, "ORIGIN_NOT_ALLOWED"},
		{"null origin DELETE", "DELETE", "/api/providers/" + conn, nil, with(mgmt, "Origin", "null"), 403, "ORIGIN_NOT_ALLOWED"},
		{"management without token", "GET", "/api/providers", nil, nil, 401, ""},
		{"management write without token", "POST", "/api/keys", map[string]any{"name": "x"}, nil, 401, ""},
		{"management with client key", "GET", "/api/settings", nil, client, 401, ""},
		{"management with wrong token", "GET", "/api/keys", nil, map[string]string{"Authorization": "Bearer omt_wrong"}, 401, ""},
		{"management malformed JSON", "POST", "/api/providers", `{"provider":`, mgmt, 400, "INVALID_JSON"},
		{"management wrong types", "POST", "/api/providers", `{"provider":"openai","priority":"high"}`, mgmt, 400, ""},
		{"management unknown field", "POST", "/api/keys", `{"name":"x","bogus":true}`, mgmt, 400, ""},
		{"unknown provider", "POST", "/api/providers", map[string]any{"provider": "no-such-provider", "apiKey": "x"}, mgmt, 400, "UNKNOWN_PROVIDER"},
		{"maxAttempts 0", "PATCH", "/api/settings", `{"maxAttempts":0}`, mgmt, 400, "INVALID_SETTING"},
		{"maxAttempts wrong type", "PATCH", "/api/settings", `{"maxAttempts":"four"}`, mgmt, 400, ""},
		{"settings unknown field", "PATCH", "/api/settings", `{"noSuchSetting":1}`, mgmt, 400, ""},
		{"settings not an object", "PATCH", "/api/settings", `[]`, mgmt, 400, ""},
		{"unknown connection", "GET", "/api/providers/does-not-exist", nil, mgmt, 404, ""},
		{"unknown management route", "GET", "/api/nope", nil, mgmt, 404, ""},
		{"unknown top-level route", "GET", "/nope", nil, nil, 404, ""},
	}
	for _, c := range cases {
		resp, body := g.do(c.method, c.path, c.body, c.hdr)
		checkError(t, c.name+fmt.Sprintf(" (%s %s)", c.method, c.path), resp, body, c.wantStatus, c.wantCode)
	}

	// A known route with the wrong method is a 405 naming the allowed methods
	// (RFC 9110 §15.5.6), not a 404 that makes the route look absent.
	t.Run("wrong method", func(t *testing.T) {
		for _, c := range []struct {
			method, path string
			hdr          map[string]string
			allow        []string
		}{
			{"GET", chat, client, []string{"POST"}},
			{"POST", "/v1/models", client, []string{"GET"}},
			{"DELETE", "/api/settings", mgmt, []string{"GET", "PATCH"}},
			{"PUT", "/api/keys", mgmt, []string{"GET", "POST"}},
		} {
			resp, body := g.do(c.method, c.path, nil, c.hdr)
			checkError(t, c.method+" "+c.path, resp, body, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
			if resp.StatusCode == http.StatusMethodNotAllowed {
				allow := resp.Header.Get("Allow")
				for _, m := range c.allow {
					if !strings.Contains(allow, m) {
						t.Errorf("%s %s: Allow %q does not list %s", c.method, c.path, allow, m)
					}
				}
			}
		}
	})

	// Same-machine origins may change state (the dashboard does).
	if resp, body := g.do("PATCH", "/api/settings", `{"requireApiKey":true}`, with(mgmt, "Origin", g.base)); resp.StatusCode != http.StatusOK {
		t.Errorf("same-origin PATCH /api/settings: %d %s", resp.StatusCode, body)
	}
	// The rejected settings patches left the stored value alone.
	if s := getJSON(t, g, "/api/settings"); s["maxAttempts"] != float64(6) || s["requireApiKey"] != true {
		t.Errorf("settings after rejected patches: %v, want maxAttempts 6 (default) and requireApiKey true", s)
	}

	// Oversized bodies: lower the limit, then send 4 KiB, with and without Content-Length.
	g.mustMgmt(http.StatusOK, http.MethodPatch, "/api/settings", map[string]any{"maxBodyBytes": 2048})
	big := fmt.Sprintf(`{"model":"openai-compatible/gpt-4o-mini","messages":[{"role":"user","content":%q}]}`, strings.Repeat("x", 4096))
	for _, chunked := range []bool{false, true} {
		resp, body := g.do("POST", chat, rawBody{data: []byte(big), chunked: chunked}, client)
		checkError(t, fmt.Sprintf("4 KiB body over a 2 KiB limit (chunked=%v)", chunked), resp, body, 413, "REQUEST_TOO_LARGE")
	}
	if n := up.Hits("key-a"); n != 0 {
		t.Errorf("rejected requests reached the upstream %d times", n)
	}

	// After all that the gateway still serves, with its state intact.
	resp, body := g.chat(g.key, "openai-compatible/gpt-4o-mini", false)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != conn {
		t.Errorf("normal request after bad input: %d via %q: %s", resp.StatusCode, resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), body)
	} else if got := jsonContent(t, body); got != fakeupstream.Content("key-a") {
		t.Errorf("normal request answer %q", got)
	}
	conns, _ := getJSON(t, g, "/api/providers")["connections"].([]any)
	if len(conns) != 1 {
		t.Errorf("connections after bad input: %d, want 1 (nothing created or deleted by rejected requests): %v", len(conns), conns)
	}
	if s := getJSON(t, g, "/api/settings"); s["maxBodyBytes"] != float64(2048) || s["maxAttempts"] != float64(6) {
		t.Errorf("settings after bad input: %v", s)
	}
	if g.hasExited() {
		t.Fatalf("gateway exited\nstderr:\n%s", g.stderr.String())
	}
	if logs := g.stderr.String(); strings.Contains(logs, "panic") {
		t.Errorf("gateway logged a panic:\n%s", logs)
	}
	g.stop()
}
