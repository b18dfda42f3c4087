package e2e

import (
	"net/http"
	"testing"
	"time"
)

// TestTeamServerPeopleChangesReachEveryInstance: three instances, each
// caching its people checks. A user signed in on A and a scoped token are
// honoured by all three (the caches warm); then, each change made through
// one instance is refused by every instance within a second (polled with a
// deadline): the user demoted from admin to viewer on A (an admin route
// answers 403 on A, B and C), the token revoked on B (401 everywhere), the
// user signing out on C (401 everywhere).
func TestTeamServerPeopleChangesReachEveryInstance(t *testing.T) {
	ts := newTeamServer(t, false)
	a, b := ts.a, ts.b
	c := ts.third(t)
	gws := []*gatewayProc{a, b, c}
	u := a.mustMgmt(http.StatusCreated, http.MethodPost, "/api/users", map[string]any{
		"email": "ops@example.com", "role": "admin", "password": "correct-horse-battery"})
	userID := u["user"].(map[string]any)["id"].(string)
	resp, body := a.do(http.MethodPost, "/api/login", map[string]any{"email": "ops@example.com", "password": "correct-horse-battery"}, nil)
	var cookie string
	for _, ck := range resp.Cookies() {
		if ck.Name == "omniroute_session" {
			cookie = ck.Name + "=" + ck.Value
		}
	}
	if resp.StatusCode != http.StatusOK || cookie == "" {
		t.Fatalf("sign-in: %d %s", resp.StatusCode, body)
	}
	tk := a.mustMgmt(http.StatusCreated, http.MethodPost, "/api/tokens", map[string]any{"name": "ci", "role": "admin"})
	token, tokenID := tk["token"].(string), tk["id"].(string)
	status := func(g *gatewayProc, path string, hdr map[string]string) int {
		resp, _ := g.do(http.MethodGet, path, nil, hdr)
		return resp.StatusCode
	}
	asUser := map[string]string{"Cookie": cookie}
	asToken := map[string]string{"Authorization": "Bearer " + token}
	for range 3 { // warm every instance's cache
		for _, g := range gws {
			if s := status(g, "/api/users", asUser); s != http.StatusOK {
				t.Fatalf("%s: the admin user's GET /api/users = %d", g.base, s)
			}
			if s := status(g, "/api/users", asToken); s != http.StatusOK {
				t.Fatalf("%s: the admin token's GET /api/users = %d", g.base, s)
			}
		}
	}
	everywhere := func(what, path string, hdr map[string]string, want int) {
		t.Helper()
		for _, g := range gws {
			took := within(t, what+" on "+g.base, func() bool { return status(g, path, hdr) == want })
			t.Logf("%s on %s after %v", what, g.base, took)
		}
	}
	a.mustMgmt(http.StatusOK, http.MethodPatch, "/api/users/"+userID, map[string]any{"role": "viewer"})
	everywhere("the demoted user refused an admin route", "/api/users", asUser, http.StatusForbidden)
	everywhere("the demoted user still reads as a viewer", "/api/session", asUser, http.StatusOK)

	b.mustMgmt(http.StatusOK, http.MethodDelete, "/api/tokens/"+tokenID, nil)
	everywhere("the revoked token refused", "/api/session", asToken, http.StatusUnauthorized)

	if resp, body := c.do(http.MethodPost, "/api/logout", nil, asUser); resp.StatusCode != http.StatusOK {
		t.Fatalf("sign-out on C: %d %s", resp.StatusCode, body)
	}
	start := time.Now()
	everywhere("the signed-out session refused", "/api/session", asUser, http.StatusUnauthorized)
	t.Logf("sign-out honoured everywhere %v after it", time.Since(start))
	for _, g := range gws {
		g.stop()
	}
}
