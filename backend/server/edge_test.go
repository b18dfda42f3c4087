package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestDashboardCannotBeFramed: the dashboard forbids every frame
// (clickjacking); the desktop window loads it as its top-level document.
func TestDashboardCannotBeFramed(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/dashboard/", "/dashboard/settings"} {
		resp, _ := e.do(http.MethodGet, path, nil, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("GET %s: Content-Security-Policy %q has no frame-ancestors 'none'", path, csp)
		}
		if xfo := resp.Header.Get("X-Frame-Options"); xfo != "DENY" {
			t.Errorf("GET %s: X-Frame-Options %q, want DENY", path, xfo)
		}
	}
}

// TestKeylessV1RefusesCrossOriginBrowsers: with requireApiKey off, a page of
// any other origin (another local port included) could spend quota through a
// text/plain POST, which a browser sends without asking. A request a browser
// sent for another origin (Sec-Fetch-Site, else Origin) is refused 403 in the
// envelope unless it carries a key; same-origin and non-browser clients go on
// without one.
func TestKeylessV1RefusesCrossOriginBrowsers(t *testing.T) {
	e := newEnv(t)
	e.addConn("up", "up-key", 1)
	e.patchSettings(map[string]any{"requireApiKey": false})
	own := e.ts.URL
	body := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`
	for _, c := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"no browser headers (CLI, SDK)", nil, 200},
		{"Sec-Fetch-Site cross-site", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}, 403},
		{"Sec-Fetch-Site same-site (another local port)", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:3000"}, 403},
		{"Origin of another local port", map[string]string{"Origin": "http://127.0.0.1:3000"}, 403},
		{"Origin of another local name", map[string]string{"Origin": strings.Replace(own, "127.0.0.1", "localhost", 1)}, 403},
		{"opaque origin", map[string]string{"Origin": "null"}, 403},
		{"Origin https of the same host", map[string]string{"Origin": strings.Replace(own, "http:", "https:", 1)}, 403},
		{"own Origin", map[string]string{"Origin": own}, 200},
		{"Sec-Fetch-Site same-origin", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": own}, 200},
		{"Sec-Fetch-Site none (typed by the user)", map[string]string{"Sec-Fetch-Site": "none"}, 200},
		{"desktop window origin", map[string]string{"Origin": "wails://wails.localhost"}, 200},
		{"cross-site with a key", map[string]string{"Sec-Fetch-Site": "cross-site", "Authorization": "Bearer " + e.key}, 200},
	} {
		hdr := map[string]string{"Content-Type": "text/plain"}
		for k, v := range c.hdr {
			hdr[k] = v
		}
		resp, out := e.do(http.MethodPost, "/v1/chat/completions", body, hdr)
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d, want %d: %s", c.name, resp.StatusCode, c.want, out)
			continue
		}
		if c.want == 403 && errorCode(out) != "ORIGIN_NOT_ALLOWED" {
			t.Errorf("%s: code %q, want ORIGIN_NOT_ALLOWED: %s", c.name, errorCode(out), out)
		}
	}
	// Anthropic clients get their shape; GET routes are refused the same way.
	resp, out := e.do(http.MethodPost, "/v1/messages", `{"model":"gpt-4o-mini","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`,
		map[string]string{"Sec-Fetch-Site": "cross-site"})
	if resp.StatusCode != 403 || !strings.Contains(string(out), `"type":"error"`) || errorCode(out) != "ORIGIN_NOT_ALLOWED" {
		t.Errorf("/v1/messages cross-site: %d %s", resp.StatusCode, out)
	}
	if resp, out = e.do(http.MethodGet, "/v1/models", nil, map[string]string{"Sec-Fetch-Site": "cross-site"}); resp.StatusCode != 403 {
		t.Errorf("/v1/models cross-site: %d %s", resp.StatusCode, out)
	}
	// With keys required nothing changes: no key is a 401 wherever it comes from.
	e.patchSettings(map[string]any{"requireApiKey": true})
	if resp, out = e.do(http.MethodPost, "/v1/chat/completions", body, map[string]string{"Sec-Fetch-Site": "cross-site"}); resp.StatusCode != 401 {
		t.Errorf("keys on, cross-site without a key: %d %s", resp.StatusCode, out)
	}
}

// TestFailedAuthIsThrottled: wrong credentials from one address take tokens
// from its bucket (30, refilled one a second on the gateway's clock); once it
// is empty each wrong credential is 429 AUTH_RATE_LIMITED with Retry-After in
// the header and the envelope, until a token is back. Valid credentials from
// loopback keep working meanwhile (every local client shares the address;
// backend/api covers a remote address, whose credentials are then not
// checked at all). /metrics counts both kinds of failure.
func TestFailedAuthIsThrottled(t *testing.T) {
	e := newEnv(t)
	wrong := map[string]string{"Authorization": "Bearer sk-omni-wrong"}
	good := map[string]string{"Authorization": "Bearer " + e.key}
	mgmt := map[string]string{"Authorization": "Bearer " + e.token}
	for i := range 30 {
		path := "/v1/models"
		if i%3 == 0 {
			path = "/api/keys" // the management token's guesses share the bucket
		}
		if resp, out := e.do(http.MethodGet, path, nil, wrong); resp.StatusCode != 401 {
			t.Fatalf("failure %d: %d, want 401: %s", i+1, resp.StatusCode, out)
		}
	}
	throttled := func(what string, hdr map[string]string, path string) {
		t.Helper()
		resp, out := e.do(http.MethodGet, path, nil, hdr)
		if resp.StatusCode != 429 || errorCode(out) != "AUTH_RATE_LIMITED" || resp.Header.Get("Retry-After") != "1" {
			t.Fatalf("%s: %d Retry-After %q, want 429 AUTH_RATE_LIMITED with Retry-After 1: %s", what, resp.StatusCode,
				resp.Header.Get("Retry-After"), out)
		}
		var env struct {
			Error struct {
				RetryAfter int `json:"retry_after"`
			} `json:"error"`
		}
		if json.Unmarshal(out, &env) != nil || env.Error.RetryAfter != 1 {
			t.Fatalf("%s: no retry_after in the envelope: %s", what, out)
		}
	}
	throttled("31st wrong key", wrong, "/v1/models")
	throttled("wrong management token", wrong, "/api/keys")
	if resp, out := e.do(http.MethodGet, "/v1/models", nil, good); resp.StatusCode != 200 {
		t.Fatalf("valid key from loopback while throttled: %d %s", resp.StatusCode, out)
	}
	if resp, out := e.do(http.MethodGet, "/api/keys", nil, mgmt); resp.StatusCode != 200 {
		t.Fatalf("valid token from loopback while throttled: %d %s", resp.StatusCode, out)
	}
	e.clk.Advance(999 * time.Millisecond) // one token is back at 1 s exactly, not before
	throttled("after 999 ms", wrong, "/v1/models")
	e.clk.Advance(time.Millisecond)
	if resp, out := e.do(http.MethodGet, "/v1/models", nil, wrong); resp.StatusCode != 401 { // takes the token back
		t.Fatalf("after 1 s, wrong key: %d %s", resp.StatusCode, out)
	}
	throttled("the refilled token spent", wrong, "/v1/models")
	resp, out := e.do(http.MethodGet, "/metrics", nil, mgmt)
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %d %s", resp.StatusCode, out)
	}
	for _, want := range []string{
		`omniroute_auth_failures_total{result="refused",route="client"} 21`,
		`omniroute_auth_failures_total{result="refused",route="management"} 10`,
		`omniroute_auth_failures_total{result="throttled",route="client"} 3`,
		`omniroute_auth_failures_total{result="throttled",route="management"} 1`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("/metrics lacks %s:\n%s", want, grepLines(string(out), "auth_failures"))
		}
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestUncleanPathsAnswerInTheEnvelope: gorilla/mux used to answer a path it
// would clean (repeated slashes, dot segments) with a bare 301 outside the
// envelope, turning a POST into a GET at the client. Such a path is 404
// ROUTE_NOT_FOUND in the envelope, naming the clean path; nothing behind it
// runs.
func TestUncleanPathsAnswerInTheEnvelope(t *testing.T) {
	e := newEnv(t)
	mgmt := map[string]string{"Authorization": "Bearer " + e.token}
	for _, c := range []struct {
		method, path, clean string
		hdr                 map[string]string
	}{
		{http.MethodGet, "//v1/models", "/v1/models", map[string]string{"Authorization": "Bearer " + e.key}},
		{http.MethodPost, "//v1/chat/completions", "/v1/chat/completions", map[string]string{"Authorization": "Bearer " + e.key}},
		{http.MethodPost, "/v1/./chat/completions", "/v1/chat/completions", nil},
		{http.MethodGet, "/v1/../api/keys", "/api/keys", mgmt},
		{http.MethodGet, "/api//keys", "/api/keys", mgmt},
	} {
		var body any
		if c.method == http.MethodPost {
			body = map[string]any{"model": "gpt-4o-mini", "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
		}
		resp, out := e.do(c.method, c.path, body, c.hdr)
		if resp.StatusCode != http.StatusNotFound || errorCode(out) != "ROUTE_NOT_FOUND" || resp.Header.Get("Location") != "" ||
			!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%s %s: %d Location %q: %s", c.method, c.path, resp.StatusCode, resp.Header.Get("Location"), out)
			continue
		}
		if !strings.Contains(string(out), "did you mean "+c.clean+"?") {
			t.Errorf("%s %s: the answer does not name %s: %s", c.method, c.path, c.clean, out)
		}
	}
}
