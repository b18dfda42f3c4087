//go:build linux

package hostile

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"omniroute/tests/fakeissuer"
)

// signIn signs a user in and returns the session cookie's "name=value".
func (p *proc) signIn(email, password string) string {
	p.t.Helper()
	resp, out := p.do(http.MethodPost, "/api/login", map[string]any{"email": email, "password": password}, nil)
	if resp.StatusCode != http.StatusOK {
		p.t.Fatalf("login %s: %d %s", email, resp.StatusCode, out)
	}
	for _, c := range resp.Cookies() {
		if c.Name == "omniroute_session" {
			return c.Name + "=" + c.Value
		}
	}
	p.t.Fatalf("login %s: no session cookie", email)
	return ""
}

// TestCrossPortCSRFRefused (issue 39, High): with a signed-in admin's
// session cookie, raw requests as a page on another loopback port sends
// them (its Origin, Sec-Fetch-Site same-site, a text/plain or typeless
// body) try to create an admin user, an admin token and a top-priority
// connection: every one is refused in the error envelope and nothing is
// created; the dashboard's own request (its CSRF header) still writes.
func TestCrossPortCSRFRefused(t *testing.T) {
	p := start(t, t.TempDir())
	p.mgmt(http.StatusCreated, http.MethodPost, "/api/users", map[string]any{"email": "ada@example.com", "role": "admin", "password": "ada-password-1"})
	cookie := p.signIn("ada@example.com", "ada-password-1")
	host := strings.TrimPrefix(p.base, "http://")
	bodies := map[string]string{
		"/api/users":     `{"email":"mallory@evil.example","role":"admin","password":"mallory-pass-1"}`,
		"/api/tokens":    `{"name":"mallory","role":"admin"}`,
		"/api/providers": `{"provider":"openai-compatible","name":"mallory","apiKey":"x","baseUrl":"http://127.0.0.1:9/v1","priority":1,"models":["gpt-4o-mini"]}`,
	}
	attacks := []struct {
		name, headers, code string
		status              int
	}{
		{"fetch from another port", "Origin: http://127.0.0.1:5173\r\nSec-Fetch-Site: same-site\r\nContent-Type: application/json\r\n", "CSRF_REFUSED", 403},
		{"Origin on another port, no Sec-Fetch-Site", "Origin: http://127.0.0.1:5173\r\nContent-Type: application/json\r\n", "CSRF_REFUSED", 403},
		{"localhost on another port", "Origin: http://localhost:3000\r\nContent-Type: text/plain;charset=UTF-8\r\n", "CSRF_REFUSED", 403},
		{"form post, text/plain", "Origin: http://127.0.0.1:5173\r\nSec-Fetch-Site: same-site\r\nContent-Type: text/plain\r\n", "CSRF_REFUSED", 403},
		{"no Origin, no type", "", "CSRF_REFUSED", 403},
		{"same-origin but typeless body", "Sec-Fetch-Site: same-origin\r\n", "CONTENT_TYPE_REQUIRED", 415},
		{"same-origin but text/plain", "Sec-Fetch-Site: same-origin\r\nContent-Type: text/plain\r\n", "CONTENT_TYPE_REQUIRED", 415},
	}
	for _, a := range attacks {
		for path, body := range bodies {
			raw := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nCookie: %s\r\n%sContent-Length: %d\r\nConnection: close\r\n\r\n%s",
				path, host, cookie, a.headers, len(body), body)
			resp, out := rawExchange(t, p.base, []byte(raw), 10*time.Second)
			checkEnvelope(t, a.name+" "+path, resp.StatusCode, resp.Header.Get("Content-Type"), out, a.status, a.code)
		}
	}
	users := p.mgmt(http.StatusOK, http.MethodGet, "/api/users", nil)
	tokens := p.mgmt(http.StatusOK, http.MethodGet, "/api/tokens", nil)
	conns := p.mgmt(http.StatusOK, http.MethodGet, "/api/providers", nil)
	for what, v := range map[string]any{"users": users, "tokens": tokens, "connections": conns} {
		if b, _ := json.Marshal(v); strings.Contains(string(b), "mallory") {
			t.Errorf("a forged request created %s: %s", what, b)
		}
	}
	// The dashboard's own request, same cookie.
	resp, out := p.do(http.MethodPost, "/api/tokens", map[string]any{"name": "dash", "role": "viewer"},
		map[string]string{"Cookie": cookie, "X-OmniRoute-CSRF": "1"})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("the dashboard's write: %d %s", resp.StatusCode, out)
	}
}

// TestTokensDieWithTheirCreator (issue 39, Medium 5): an admin token minted
// by a signed-in admin acts as a viewer once its creator is demoted, and
// stops working once its creator is deleted.
func TestTokensDieWithTheirCreator(t *testing.T) {
	p := start(t, t.TempDir())
	u := p.mgmt(http.StatusCreated, http.MethodPost, "/api/users", map[string]any{"email": "eve@example.com", "role": "admin", "password": "eve-password-1"})
	uid := u["user"].(map[string]any)["id"].(string)
	cookie := p.signIn("eve@example.com", "eve-password-1")
	resp, out := p.do(http.MethodPost, "/api/tokens", map[string]any{"name": "eve-bot", "role": "admin"},
		map[string]string{"Cookie": cookie, "X-OmniRoute-CSRF": "1"})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("mint: %d %s", resp.StatusCode, out)
	}
	var minted struct{ Token string }
	_ = json.Unmarshal(out, &minted)
	bearer := map[string]string{"Authorization": "Bearer " + minted.Token}
	p.mgmt(http.StatusOK, http.MethodPatch, "/api/users/"+uid, map[string]any{"role": "viewer"})
	resp, out = p.do(http.MethodPost, "/api/users", map[string]any{"email": "eve2@example.com", "role": "admin"}, bearer)
	checkEnvelope(t, "a demoted admin's token creates an admin", resp.StatusCode, resp.Header.Get("Content-Type"), out, 403, "ROLE_FORBIDDEN")
	p.mgmt(http.StatusOK, http.MethodDelete, "/api/users/"+uid, nil)
	resp, out = p.do(http.MethodGet, "/api/providers", nil, bearer)
	checkEnvelope(t, "a deleted admin's token", resp.StatusCode, resp.Header.Get("Content-Type"), out, 401, "MANAGEMENT_AUTH_REQUIRED")
	resp, out = p.do(http.MethodGet, "/api/session", nil, map[string]string{"Cookie": cookie})
	checkEnvelope(t, "a deleted admin's session", resp.StatusCode, resp.Header.Get("Content-Type"), out, 401, "MANAGEMENT_AUTH_REQUIRED")
}

// ssoSignIn runs a browser's single sign-on against the binary and the fake
// issuer; it returns the callback's status, error code and session cookie.
func (p *proc) ssoSignIn() (int, string, string) {
	p.t.Helper()
	c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(p.base + "/api/oidc/login")
	if err != nil {
		p.t.Fatal(err)
	}
	resp.Body.Close()
	var pending *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == "omniroute_oidc" {
			pending = ck
		}
	}
	if resp.StatusCode != http.StatusFound || pending == nil {
		p.t.Fatalf("oidc login: %d", resp.StatusCode)
	}
	auth, err := c.Get(resp.Header.Get("Location"))
	if err != nil {
		p.t.Fatal(err)
	}
	auth.Body.Close()
	req, _ := http.NewRequest(http.MethodGet, auth.Header.Get("Location"), nil)
	req.AddCookie(pending)
	cb, err := c.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer cb.Body.Close()
	body, _ := io.ReadAll(cb.Body)
	var env envelope
	_ = json.Unmarshal(body, &env)
	code := ""
	if env.Error != nil {
		code = env.Error.Code
	}
	for _, ck := range cb.Cookies() {
		if ck.Name == "omniroute_session" && ck.Value != "" {
			return cb.StatusCode, code, ck.Value
		}
	}
	return cb.StatusCode, code, ""
}

// TestSSOCannotTakeOverAccounts (issue 39, Medium 6), against the binary
// and a fake OpenID provider: another sub with a signed-in user's email, an
// email the provider does not vouch for, and the email of a local password
// admin are all refused without a session; the bound identity signs in.
func TestSSOCannotTakeOverAccounts(t *testing.T) {
	iss := fakeissuer.Start()
	t.Cleanup(iss.Close)
	p := startEnv(t, t.TempDir(), []string{"OMNIROUTE_OIDC_ISSUER=" + iss.URL, "OMNIROUTE_OIDC_CLIENT_ID=" + iss.ClientID,
		"OMNIROUTE_OIDC_CLIENT_SECRET=" + iss.ClientSecret, "OMNIROUTE_OIDC_DEFAULT_ROLE=viewer"})
	p.mgmt(http.StatusCreated, http.MethodPost, "/api/users", map[string]any{"email": "root@example.com", "role": "admin", "password": "root-password-1"})
	cases := []struct {
		name, email, sub, verified string
		status                     int
		code                       string
	}{
		{"first sign-in", "alice@example.com", "alice-sub", "", http.StatusFound, ""},
		{"another sub, same email", "alice@example.com", "mallory-sub", "", http.StatusForbidden, "OIDC_IDENTITY_MISMATCH"},
		{"email_verified missing", "bob@example.com", "bob-sub", "omit", http.StatusUnauthorized, "OIDC_EMAIL_REQUIRED"},
		{"email_verified false", "bob@example.com", "bob-sub", "false", http.StatusUnauthorized, "OIDC_EMAIL_REQUIRED"},
		{"a local password admin", "root@example.com", "root-at-idp", "", http.StatusForbidden, "OIDC_LINK_REFUSED"},
		{"the bound identity again", "alice@example.com", "alice-sub", "omit", http.StatusFound, ""},
	}
	for _, c := range cases {
		iss.Set(func(i *fakeissuer.Issuer) { i.Email, i.Subject, i.EmailVerified = c.email, c.sub, c.verified })
		status, code, sess := p.ssoSignIn()
		if status != c.status || code != c.code || (c.status != http.StatusFound) != (sess == "") {
			t.Errorf("%s: %d %s (session %v), want %d %s", c.name, status, code, sess != "", c.status, c.code)
		}
	}
	users := p.mgmt(http.StatusOK, http.MethodGet, "/api/users", nil)
	if b, _ := json.Marshal(users); strings.Contains(string(b), "bob@") || strings.Count(string(b), `"email"`) != 2 {
		t.Fatalf("users after the attempts: %s", b)
	}
}
