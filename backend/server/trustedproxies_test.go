package server_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"omniroute/backend/api"
)

// TestTrustedProxies: X-Forwarded-For and X-Forwarded-Proto are ignored
// from a peer not in trustedProxies (the default: none), so the audit
// records the peer and the session cookie is not Secure; once the peer
// (here 127.0.0.1) is trusted, the audit records the forwarded client, the
// cookie is Secure behind https, and failed authentication is throttled per
// forwarded client (before, the peer was the source and the cookie Secure
// only over direct TLS). A list entry that is not an address is a 400.
func TestTrustedProxies(t *testing.T) {
	e := newEnv(t)
	e.createUser("ann@example.com", api.RoleOperator, "ann-password-1")
	login := func(proto string) *http.Cookie {
		t.Helper()
		resp, out := e.do("POST", "/api/login", map[string]any{"email": "ann@example.com", "password": "ann-password-1"},
			map[string]string{"X-Forwarded-For": "203.0.113.1, 198.51.100.7", "X-Forwarded-Proto": proto})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("login: %d %s", resp.StatusCode, out)
		}
		for _, c := range resp.Cookies() {
			if c.Name == api.SessionCookie {
				return c
			}
		}
		t.Fatal("login: no session cookie")
		return nil
	}
	lastLoginFrom := func() string {
		t.Helper()
		code, _, out := e.sendAs("GET", "/api/audit?action=login&limit=1", nil, e.token, "")
		var page struct{ Entries []struct{ Remote string } }
		if err := json.Unmarshal(out, &page); code != 200 || err != nil || len(page.Entries) != 1 {
			t.Fatalf("audit: %d %v %s", code, err, out)
		}
		return page.Entries[0].Remote
	}

	if code, m := e.mgmt("GET", "/api/settings", nil); code != 200 || m["trustedProxies"] == nil || len(m["trustedProxies"].([]any)) != 0 {
		t.Fatalf("settings: %d trustedProxies %v; want []", code, m["trustedProxies"])
	}
	if c := login("https"); c.Secure {
		t.Fatal("an untrusted peer's X-Forwarded-Proto: https made the session cookie Secure")
	}
	if from := lastLoginFrom(); from != "127.0.0.1" {
		t.Fatalf("untrusted peer: audit from %q; want the peer 127.0.0.1", from)
	}

	for _, bad := range []any{[]string{"10.0.0.0/8", "proxy.internal"}, []string{"10.0.0.0/40"}, "127.0.0.1"} {
		if code, m := e.mgmt("PATCH", "/api/settings", map[string]any{"trustedProxies": bad}); code != 400 ||
			envelopeField(m, "code") != "INVALID_SETTING" || envelopeField(m, "param") != "trustedProxies" {
			t.Fatalf("trustedProxies %v: %d %v; want 400 INVALID_SETTING naming trustedProxies", bad, code, m)
		}
	}
	if code, m := e.mgmt("PATCH", "/api/settings", map[string]any{"trustedProxies": []string{"10.0.0.0/8", "127.0.0.1"}}); code != 200 {
		t.Fatalf("trust 127.0.0.1: %d %v", code, m)
	}
	if c := login("https"); !c.Secure {
		t.Fatal("a trusted proxy's X-Forwarded-Proto: https: the session cookie is not Secure")
	}
	if from := lastLoginFrom(); from != "198.51.100.7" {
		t.Fatalf("trusted peer: audit from %q; want the right-most untrusted forwarded address 198.51.100.7", from)
	}
	if c := login("http"); c.Secure {
		t.Fatal("a trusted proxy's X-Forwarded-Proto: http made the session cookie Secure")
	}

	// The failed-auth throttle counts per forwarded client: one guesser is
	// throttled, another client behind the same proxy is not.
	wrong := func(client string) int {
		resp, _ := e.do("GET", "/api/providers", nil, map[string]string{"Authorization": "Bearer wrong-token",
			"X-Forwarded-For": client})
		return resp.StatusCode
	}
	last := 0
	for range 31 {
		last = wrong("198.51.100.66")
	}
	if last != http.StatusTooManyRequests {
		t.Fatalf("31st wrong token from one forwarded client: %d; want 429", last)
	}
	if code := wrong("198.51.100.67"); code != http.StatusUnauthorized {
		t.Fatalf("another forwarded client: %d; want 401 (not throttled)", code)
	}
}

// envelopeField is a field of an error envelope.
func envelopeField(m map[string]any, k string) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e[k].(string)
	return s
}
