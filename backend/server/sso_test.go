package server_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"omniroute/backend/api"
	"omniroute/backend/clock"
	"omniroute/tests/fakeissuer"
	"omniroute/tests/fakeupstream"
)

// newSSOEnv is a gateway configured for the fake issuer; the issuer's clock
// is the gateway's fake clock.
func newSSOEnv(t *testing.T, defaultRole string) (*env, *fakeissuer.Issuer) {
	t.Helper()
	iss := fakeissuer.Start()
	t.Cleanup(iss.Close)
	e := &env{t: t, dir: t.TempDir(), clk: clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), envs: map[string]string{
		"OMNIROUTE_OIDC_ISSUER": iss.URL, "OMNIROUTE_OIDC_CLIENT_ID": iss.ClientID,
		"OMNIROUTE_OIDC_CLIENT_SECRET": iss.ClientSecret, "OMNIROUTE_OIDC_ROLES": "alice@example.com=admin,@ops.example.com=operator",
		"OMNIROUTE_OIDC_DEFAULT_ROLE": defaultRole,
	}}
	e.up = fakeupstream.New()
	e.upURL = e.up.Start() + "/v1"
	t.Cleanup(e.up.Close)
	e.start()
	t.Cleanup(e.stop)
	iss.Set(func(i *fakeissuer.Issuer) { i.Now = e.clk.Now })
	return e, iss
}

// noRedirect is a client that shows redirects instead of following them.
func noRedirect() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// ssoSignIn runs a browser's sign-in: /api/oidc/login, the provider's
// authorization endpoint, then the gateway's callback (with the code and
// state the provider gave, or those edit returns). It returns the callback's
// answer.
func (e *env) ssoSignIn(edit func(q url.Values, cookie *http.Cookie)) (*http.Response, string) {
	e.t.Helper()
	c := noRedirect()
	resp, err := c.Get(e.ts.URL + "/api/oidc/login")
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		e.t.Fatalf("oidc login: %d", resp.StatusCode)
	}
	var pending *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == "omniroute_oidc" {
			pending = ck
		}
	}
	if pending == nil || !pending.HttpOnly || pending.SameSite != http.SameSiteLaxMode {
		e.t.Fatalf("pending cookie: %+v", pending)
	}
	auth, err := c.Get(resp.Header.Get("Location"))
	if err != nil {
		e.t.Fatal(err)
	}
	auth.Body.Close()
	if auth.StatusCode != http.StatusFound {
		e.t.Fatalf("authorize: %d", auth.StatusCode)
	}
	back, _ := url.Parse(auth.Header.Get("Location"))
	q := back.Query()
	if edit != nil {
		edit(q, pending)
	}
	req, _ := http.NewRequest("GET", e.ts.URL+"/api/oidc/callback?"+q.Encode(), nil)
	if pending.Value != "" {
		req.AddCookie(pending)
	}
	cb, err := c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer cb.Body.Close()
	body, _ := io.ReadAll(cb.Body)
	return cb, string(body)
}

func sessionOf(resp *http.Response) string {
	for _, c := range resp.Cookies() {
		if c.Name == api.SessionCookie {
			return c.Value
		}
	}
	return ""
}

// TestOIDCSignIn: the authorization code flow with PKCE against a fake
// issuer (discovery, JWKS, code + S256 verifier) signs a person in with the
// role mapped to their email, creating the user once; a bad signature, an
// expired token, a wrong nonce, a wrong or missing state and a code bound to
// another verifier are refused.
func TestOIDCSignIn(t *testing.T) {
	e, iss := newSSOEnv(t, "viewer")
	if code, _, out := e.sendAs("GET", "/api/auth", nil, "", ""); code != 200 || !strings.Contains(string(out), `"sso":true`) {
		t.Fatalf("auth info: %d %s", code, out)
	}
	resp, body := e.ssoSignIn(nil)
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/dashboard/" {
		t.Fatalf("callback: %d %s", resp.StatusCode, body)
	}
	sess := sessionOf(resp)
	code, _, out := e.sendAs("GET", "/api/session", nil, "", sess)
	if code != 200 || !strings.Contains(string(out), `"name":"alice@example.com"`) || !strings.Contains(string(out), `"role":"admin"`) {
		t.Fatalf("session: %d %s", code, out)
	}
	var methods []string
	iss.Set(func(i *fakeissuer.Issuer) { methods = append(methods, i.Challenges...) })
	if len(methods) != 1 || methods[0] != "S256" {
		t.Fatalf("challenge methods: %v", methods)
	}
	// Again: the same user, not a second one.
	if resp, body := e.ssoSignIn(nil); resp.StatusCode != http.StatusFound {
		t.Fatalf("second sign-in: %d %s", resp.StatusCode, body)
	}
	// Domain mapping and the default role.
	for email, role := range map[string]string{"bob@ops.example.com": "operator", "carol@else.org": "viewer"} {
		iss.Set(func(i *fakeissuer.Issuer) { i.Email = email })
		resp, body := e.ssoSignIn(nil)
		if resp.StatusCode != http.StatusFound {
			t.Fatalf("%s: %d %s", email, resp.StatusCode, body)
		}
		if _, _, out := e.sendAs("GET", "/api/session", nil, "", sessionOf(resp)); !strings.Contains(string(out), `"role":"`+role+`"`) {
			t.Fatalf("%s: %s, want %s", email, out, role)
		}
	}
	code, m := e.mgmt("GET", "/api/users", nil)
	if code != 200 || len(m["users"].([]any)) != 3 {
		t.Fatalf("users: %d %v", code, m)
	}
	iss.Set(func(i *fakeissuer.Issuer) { i.Email = "alice@example.com" })

	cases := []struct {
		name  string
		knob  func(*fakeissuer.Issuer)
		edit  func(q url.Values, c *http.Cookie)
		code  string
		reset func(*fakeissuer.Issuer)
	}{
		{name: "bad signature", knob: func(i *fakeissuer.Issuer) { i.BadSignature = true }, code: "OIDC_TOKEN_INVALID",
			reset: func(i *fakeissuer.Issuer) { i.BadSignature = false }},
		{name: "expired a second ago", knob: func(i *fakeissuer.Issuer) { i.TTL = -time.Second }, code: "OIDC_TOKEN_INVALID",
			reset: func(i *fakeissuer.Issuer) { i.TTL = 5 * time.Minute }},
		{name: "wrong nonce", knob: func(i *fakeissuer.Issuer) { i.Nonce = "another-nonce" }, code: "OIDC_NONCE_MISMATCH",
			reset: func(i *fakeissuer.Issuer) { i.Nonce = "" }},
		{name: "wrong state", edit: func(q url.Values, _ *http.Cookie) { q.Set("state", "forged") }, code: "OIDC_STATE_MISMATCH"},
		{name: "no pending cookie", edit: func(_ url.Values, c *http.Cookie) { c.Value = "" }, code: "OIDC_STATE_MISMATCH"},
		{name: "forged pending cookie", edit: func(_ url.Values, c *http.Cookie) { c.Value = "not-sealed" }, code: "OIDC_STATE_MISMATCH"},
		{name: "code bound to another verifier", edit: func(q url.Values, _ *http.Cookie) {
			// A code the provider issued for another challenge (an attacker's).
			a, _ := url.Parse(iss.URL + "/authorize")
			aq := url.Values{"client_id": {iss.ClientID}, "response_type": {"code"}, "redirect_uri": {"http://127.0.0.1:0/api/oidc/callback"},
				"state": {"x"}, "nonce": {"n"}, "code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"}, "code_challenge_method": {"S256"}}
			a.RawQuery = aq.Encode()
			r, err := noRedirect().Get(a.String())
			if err != nil {
				t.Fatal(err)
			}
			r.Body.Close()
			loc, _ := url.Parse(r.Header.Get("Location"))
			q.Set("code", loc.Query().Get("code"))
		}, code: "OIDC_EXCHANGE_FAILED"},
	}
	for _, tc := range cases {
		if tc.knob != nil {
			iss.Set(tc.knob)
		}
		resp, body := e.ssoSignIn(tc.edit)
		if tc.reset != nil {
			iss.Set(tc.reset)
		}
		if resp.StatusCode != http.StatusUnauthorized || errorCode([]byte(body)) != tc.code || sessionOf(resp) != "" {
			t.Errorf("%s: %d %s, want 401 %s and no session", tc.name, resp.StatusCode, body, tc.code)
		}
	}
	// The boundary: a token expiring in one second is still good.
	iss.Set(func(i *fakeissuer.Issuer) { i.TTL = time.Second })
	if resp, body := e.ssoSignIn(nil); resp.StatusCode != http.StatusFound {
		t.Fatalf("token valid one more second: %d %s", resp.StatusCode, body)
	}
}

// TestOIDCUnmappedRefused: without a default role, an email no mapping
// names is refused (403 OIDC_NO_ROLE) and no user is made.
func TestOIDCUnmappedRefused(t *testing.T) {
	e, iss := newSSOEnv(t, "none")
	iss.Set(func(i *fakeissuer.Issuer) { i.Email = "mallory@evil.example" })
	resp, body := e.ssoSignIn(nil)
	if resp.StatusCode != http.StatusForbidden || errorCode([]byte(body)) != "OIDC_NO_ROLE" {
		t.Fatalf("unmapped: %d %s", resp.StatusCode, body)
	}
	if code, m := e.mgmt("GET", "/api/users", nil); code != 200 || len(m["users"].([]any)) != 0 {
		t.Fatalf("users: %v", m)
	}
}

// TestOIDCNotConfigured: without an issuer the SSO routes are 404
// OIDC_NOT_CONFIGURED and the desktop's answer says so.
func TestOIDCNotConfigured(t *testing.T) {
	e := newEnv(t)
	if code, ecode, _ := e.sendAs("GET", "/api/oidc/login", nil, "", ""); code != 404 || ecode != "OIDC_NOT_CONFIGURED" {
		t.Fatalf("login: %d %s", code, ecode)
	}
	if code, _, out := e.sendAs("GET", "/api/auth", nil, "", ""); code != 200 || !strings.Contains(string(out), `"sso":false`) {
		t.Fatalf("auth: %d %s", code, out)
	}
}
