package server_test

import (
	"net/http"
	"strings"
	"testing"

	"omniroute/backend/api"
	"omniroute/tests/fakeissuer"
)

// TestOIDCBindsTheIdentityNotTheEmail: a single sign-on user is the
// provider's (issuer, sub); another sub with the same email is refused; a
// bound identity signs in whatever email it now claims; an email the
// provider does not vouch for (email_verified missing or false) links and
// creates nothing; a password account is never taken over; an account an
// admin made without a password is bound on its first sign-in.
func TestOIDCBindsTheIdentityNotTheEmail(t *testing.T) {
	e, iss := newSSOEnv(t, "viewer")
	set := func(email, sub, verified string) {
		iss.Set(func(i *fakeissuer.Issuer) { i.Email, i.Subject, i.EmailVerified = email, sub, verified })
	}
	signIn := func(name string, wantStatus int, wantCode string) string {
		t.Helper()
		resp, body := e.ssoSignIn(nil)
		if resp.StatusCode != wantStatus || (wantCode != "" && errorCode([]byte(body)) != wantCode) {
			t.Fatalf("%s: %d %s, want %d %s", name, resp.StatusCode, body, wantStatus, wantCode)
		}
		if wantStatus != http.StatusFound && sessionOf(resp) != "" {
			t.Fatalf("%s: a refused sign-in set a session", name)
		}
		return sessionOf(resp)
	}
	whoIs := func(sess string) string {
		_, _, out := e.sendAs("GET", "/api/session", nil, "", sess)
		return string(out)
	}

	set("alice@example.com", "alice-sub", "")
	if s := signIn("first sign-in", http.StatusFound, ""); !strings.Contains(whoIs(s), `"role":"admin"`) {
		t.Fatalf("alice: %s", whoIs(s))
	}
	set("alice@example.com", "mallory-sub", "")
	signIn("another sub, same email", http.StatusForbidden, "OIDC_IDENTITY_MISMATCH")
	set("alice.new@example.com", "alice-sub", "omit")
	if s := signIn("the bound identity with another, unverified email", http.StatusFound, ""); !strings.Contains(whoIs(s), `"name":"alice@example.com"`) {
		t.Fatalf("bound identity: %s", whoIs(s))
	}

	// A password admin: never taken over, even with a verified email.
	e.createUser("root@example.com", api.RoleAdmin, "root-password-1")
	set("root@example.com", "root-at-idp", "")
	signIn("a password account", http.StatusForbidden, "OIDC_LINK_REFUSED")
	e.login("root@example.com", "root-password-1") // still the person's own

	// Unverified emails create and link nothing.
	for _, v := range []string{"omit", "false"} {
		set("carol@example.com", "carol-sub", v)
		signIn("email_verified "+v, http.StatusUnauthorized, "OIDC_EMAIL_REQUIRED")
	}
	code, _, out := e.sendAs("GET", "/api/users", nil, e.token, "")
	if code != 200 || strings.Contains(string(out), "carol@") {
		t.Fatalf("an unverified email made a user: %s", out)
	}

	// An account made for single sign-on (no password) is bound once.
	if code, m := e.mgmt("POST", "/api/users", map[string]any{"email": "dave@example.com", "role": "operator"}); code != 201 {
		t.Fatalf("create dave: %d %v", code, m)
	}
	set("dave@example.com", "dave-sub", "")
	if s := signIn("a pre-made account", http.StatusFound, ""); !strings.Contains(whoIs(s), `"role":"operator"`) {
		t.Fatalf("dave: %s", whoIs(s))
	}
	set("dave@example.com", "dave-other-sub", "")
	signIn("dave's email under another sub", http.StatusForbidden, "OIDC_IDENTITY_MISMATCH")
}
