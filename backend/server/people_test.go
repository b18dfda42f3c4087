package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"omniroute/backend/api"
)

// sendAs sends a request with a bearer token or a session cookie and
// returns the status and the error code (the body is not read past 64 KiB,
// and a stream that answered 200 is closed at once).
func (e *env) sendAs(method, path string, body any, token, session string) (int, string, []byte) {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, e.ts.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" { // as the dashboard sends it
		req.AddCookie(&http.Cookie{Name: api.SessionCookie, Value: session})
		req.Header.Set(api.CSRFHeader, "1")
	}
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp.StatusCode, "", nil
	}
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, errorCode(out), out
}

// createUser makes a local user through the API and returns its id.
func (e *env) createUser(email, role, password string) string {
	e.t.Helper()
	code, m := e.mgmt("POST", "/api/users", map[string]any{"email": email, "role": role, "password": password})
	if code != http.StatusCreated {
		e.t.Fatalf("create user: %d %v", code, m)
	}
	return m["user"].(map[string]any)["id"].(string)
}

// login signs a user in and returns the session cookie.
func (e *env) login(email, password string) *http.Cookie {
	e.t.Helper()
	resp, out := e.do("POST", "/api/login", map[string]any{"email": email, "password": password}, nil)
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("login %s: %d %s", email, resp.StatusCode, out)
	}
	for _, c := range resp.Cookies() {
		if c.Name == api.SessionCookie {
			return c
		}
	}
	e.t.Fatalf("login %s: no session cookie", email)
	return nil
}

// createToken makes a stored management token with a role and returns it.
func (e *env) createToken(name, role string) string {
	e.t.Helper()
	code, m := e.mgmt("POST", "/api/tokens", map[string]any{"name": name, "role": role})
	if code != http.StatusCreated {
		e.t.Fatalf("create token: %d %v", code, m)
	}
	return m["token"].(string)
}

func rank(role string) int {
	return map[string]int{api.RoleViewer: 1, api.RoleOperator: 2, api.RoleAdmin: 3}[role]
}

// TestEveryRouteHasARole: each route under /api and /metrics has a rule in
// the role table, so a new route cannot ship without deciding who may call it.
func TestEveryRouteHasARole(t *testing.T) {
	e := newEnv(t)
	routes := e.srv.API().Routes()
	if len(routes) < 60 {
		t.Fatalf("only %d routes enumerated: %v", len(routes), routes)
	}
	// The policy itself: viewers write nothing (a preview changes nothing),
	// operators exactly the resilience actions, and reads that reveal a
	// secret or people are admin's.
	operatorWrites := map[string]bool{"DELETE /api/monitoring/health": true, "POST /api/providers/{id}/test": true,
		"POST /api/providers/{id}/models/refresh": true, "PATCH /api/gateway": true, "POST /api/resilience/reset": true,
		"POST /api/resilience/cooldowns": true, "DELETE /api/resilience/model-cooldowns": true,
		"DELETE /api/resilience/leases/{id}": true, "POST /api/update/check": true}
	adminReads := map[string]bool{"GET /api/keys/default": true, "GET /api/agents/{id}/instructions": true,
		"GET /api/users": true, "GET /api/tokens": true}
	for _, r := range routes {
		role, ok := api.RouteRole(r)
		if !ok {
			t.Errorf("route %s has no role rule in backend/api/people.go routeRoles", r)
			continue
		}
		write := !strings.HasPrefix(r, "GET ")
		switch {
		case role == "public":
		case write && role == api.RoleViewer && r != "POST /api/rules/preview":
			t.Errorf("%s: a viewer may write", r)
		case write && (role == api.RoleOperator) != operatorWrites[r]:
			t.Errorf("%s: needs %s; operators write exactly the resilience actions", r, role)
		case adminReads[r] && role != api.RoleAdmin:
			t.Errorf("%s: needs %s, want admin", r, role)
		}
	}
}

// TestSessionGivesTheRouteRoles: GET /api/session carries the role table
// itself (every management route with its least role, no public route), so
// the dashboard gates its buttons by the server's rules, never a copy.
func TestSessionGivesTheRouteRoles(t *testing.T) {
	e := newEnv(t)
	e.createUser("vic@example.com", api.RoleViewer, "correct horse viewer")
	c := e.login("vic@example.com", "correct horse viewer")
	code, _, out := e.sendAs("GET", "/api/session", nil, "", c.Value)
	var s struct {
		Role   string            `json:"role"`
		Routes map[string]string `json:"routes"`
	}
	if err := json.Unmarshal(out, &s); code != 200 || err != nil || s.Role != api.RoleViewer {
		t.Fatalf("session: %d %v %s", code, err, out)
	}
	want := 0
	for _, r := range e.srv.API().Routes() {
		role, _ := api.RouteRole(r)
		if role == "public" {
			if _, ok := s.Routes[r]; ok {
				t.Errorf("public route %s in the session's table", r)
			}
			continue
		}
		want++
		if s.Routes[r] != role {
			t.Errorf("session routes[%q] = %q, want %q", r, s.Routes[r], role)
		}
	}
	if len(s.Routes) != want {
		t.Errorf("session lists %d routes, the router serves %d management routes", len(s.Routes), want)
	}
	for _, k := range []string{"POST /api/providers", "POST /api/combos", "PATCH /api/resilience"} {
		if s.Routes[k] != api.RoleAdmin {
			t.Errorf("routes[%q] = %q, want admin", k, s.Routes[k])
		}
	}
}

// TestRolesOnEveryRoute sends every management route as each role, through a
// scoped token and through a signed-in user's session: a role below the
// route's is 403 ROLE_FORBIDDEN, one at or above it reaches the handler.
func TestRolesOnEveryRoute(t *testing.T) {
	e := newEnv(t)
	e.addConn("c1", "sk-up", 1)
	type cred struct{ token, session string }
	creds := map[string][]cred{}
	for _, role := range []string{api.RoleViewer, api.RoleOperator, api.RoleAdmin} {
		e.createUser(role+"@example.com", role, "correct horse "+role)
		creds[role] = []cred{{token: e.createToken("t-"+role, role)}, {session: e.login(role+"@example.com", "correct horse "+role).Value}}
	}
	// audited counts the audit entries of a route.
	audited := func(route string) int {
		_, _, out := e.sendAs("GET", "/api/audit?limit=500&action="+url.QueryEscape(route), nil, e.token, "")
		var page struct{ Entries []struct{ Action string } }
		_ = json.Unmarshal(out, &page)
		n := 0
		for _, en := range page.Entries {
			if en.Action == route {
				n++
			}
		}
		return n
	}
	for _, route := range e.srv.API().Routes() {
		need, _ := api.RouteRole(route)
		if need == "public" {
			continue
		}
		method, tmpl, _ := strings.Cut(route, " ")
		path := strings.NewReplacer("{id}", "no-such-id").Replace(tmpl)
		var body any
		if method != http.MethodGet {
			body = map[string]any{}
		}
		wantAudited, refused, before := 0, 0, audited(route)
		for role, cs := range creds {
			for _, c := range cs {
				code, ecode, out := e.sendAs(method, path, body, c.token, c.session)
				allowed := rank(role) >= rank(need)
				if allowed {
					wantAudited++
				} else {
					refused++
				}
				switch {
				case allowed && (ecode == "ROLE_FORBIDDEN" || code == http.StatusUnauthorized):
					t.Errorf("%s as %s (session %v): %d %s, want the handler (needs %s)", route, role, c.session != "", code, out, need)
				case !allowed && (code != http.StatusForbidden || ecode != "ROLE_FORBIDDEN"):
					t.Errorf("%s as %s (session %v): %d %s, want 403 ROLE_FORBIDDEN (needs %s)", route, role, c.session != "", code, out, need)
				}
			}
		}
		if code, ecode, _ := e.sendAs(method, path, body, "", ""); code != http.StatusUnauthorized || ecode != "MANAGEMENT_AUTH_REQUIRED" {
			t.Errorf("%s without credentials: %d %s", route, code, ecode)
		}
		// The audit trail of each write: one entry per request that reached
		// the handler and one per write refused for its role (issue 39),
		// none for a read; a preview or a playground request only when refused.
		if method == http.MethodGet {
			wantAudited, refused = 0, 0
		}
		if route == "POST /api/rules/preview" || route == "POST /api/playground/" {
			wantAudited = 0
		}
		wantAudited += refused
		if got := audited(route) - before; got != wantAudited {
			t.Errorf("%s: %d audit entries, want %d", route, got, wantAudited)
		}
	}
}

// TestLocalUsersAndSessions: a local account signs in with its password and
// gets an HttpOnly, SameSite=Strict session cookie; a wrong password is 401
// LOGIN_FAILED; sign-out and a password change end sessions; a deleted user's
// session stops working; the instance's own token keeps working as admin.
func TestLocalUsersAndSessions(t *testing.T) {
	e := newEnv(t)
	if code, _, out := e.sendAs("GET", "/api/auth", nil, "", ""); code != 200 || !strings.Contains(string(out), `"users":false`) {
		t.Fatalf("auth info before users: %d %s", code, out)
	}
	id := e.createUser("Op@Example.com", api.RoleOperator, "password-one")
	if code, _, out := e.sendAs("GET", "/api/auth", nil, "", ""); code != 200 || !strings.Contains(string(out), `"users":true`) {
		t.Fatalf("auth info with a user: %d %s", code, out)
	}
	c := e.login("op@example.com", "password-one")
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
		t.Fatalf("cookie attributes: %+v", c)
	}
	code, _, out := e.sendAs("GET", "/api/session", nil, "", c.Value)
	if code != 200 || !strings.Contains(string(out), `"role":"operator"`) || !strings.Contains(string(out), `"name":"op@example.com"`) {
		t.Fatalf("session: %d %s", code, out)
	}
	for _, bad := range []map[string]any{{"email": "op@example.com", "password": "password-two"}, {"email": "nobody@example.com", "password": "password-one"}} {
		resp, out := e.do("POST", "/api/login", bad, nil)
		if resp.StatusCode != 401 || errorCode(out) != "LOGIN_FAILED" {
			t.Fatalf("wrong login %v: %d %s", bad, resp.StatusCode, out)
		}
	}
	if resp, out := e.do("POST", "/api/login", map[string]any{"email": "op@example.com"}, nil); resp.StatusCode != 400 {
		t.Fatalf("login without password: %d %s", resp.StatusCode, out)
	}
	// Sign-out ends that session only.
	c2 := e.login("op@example.com", "password-one")
	resp, _ := e.do("POST", "/api/logout", nil, map[string]string{"Cookie": api.SessionCookie + "=" + c.Value})
	if resp.StatusCode != 200 {
		t.Fatalf("logout: %d", resp.StatusCode)
	}
	if code, ecode, _ := e.sendAs("GET", "/api/session", nil, "", c.Value); code != 401 || ecode != "MANAGEMENT_AUTH_REQUIRED" {
		t.Fatalf("after logout: %d %s", code, ecode)
	}
	if code, _, _ := e.sendAs("GET", "/api/session", nil, "", c2.Value); code != 200 {
		t.Fatalf("the other session after logout: %d", code)
	}
	// A new password signs the user out everywhere; a role change applies at once.
	if code, m := e.mgmt("PATCH", "/api/users/"+id, map[string]any{"password": "password-new!", "role": "viewer"}); code != 200 {
		t.Fatalf("patch user: %d %v", code, m)
	}
	if code, _, _ := e.sendAs("GET", "/api/session", nil, "", c2.Value); code != 401 {
		t.Fatalf("session after password change: %d", code)
	}
	c3 := e.login("op@example.com", "password-new!")
	if code, ecode, _ := e.sendAs("POST", "/api/resilience/reset", map[string]any{}, "", c3.Value); code != 403 || ecode != "ROLE_FORBIDDEN" {
		t.Fatalf("viewer resets breakers: %d %s", code, ecode)
	}
	// Bad input is a clear 4xx.
	for _, bad := range []map[string]any{
		{"email": "no-at-sign", "role": "viewer"}, {"email": "x@example.com", "role": "root"},
		{"email": "y@example.com", "role": "viewer", "password": "short"}, {"email": "op@example.com", "role": "viewer"},
		{"role": "viewer"}, {"email": "z@example.com"},
	} {
		if code, m := e.mgmt("POST", "/api/users", bad); code < 400 || code >= 500 {
			t.Errorf("create user %v: %d %v", bad, code, m)
		}
	}
	if code, m := e.mgmt("DELETE", "/api/users/"+id, nil); code != 200 {
		t.Fatalf("delete user: %d %v", code, m)
	}
	if code, _, _ := e.sendAs("GET", "/api/session", nil, "", c3.Value); code != 401 {
		t.Fatalf("deleted user's session: %d", code)
	}
	if code, _ := e.mgmt("GET", "/api/users", nil); code != 200 {
		t.Fatalf("the instance token as admin: %d", code)
	}
}

// TestScopedTokens: a stored token acts with its role until revoked; the list
// never shows a value.
func TestScopedTokens(t *testing.T) {
	e := newEnv(t)
	tok := e.createToken("ci", api.RoleViewer)
	if !strings.HasPrefix(tok, api.TokenPrefix) {
		t.Fatalf("token %q lacks the prefix", tok)
	}
	if code, _, _ := e.sendAs("GET", "/api/providers", nil, tok, ""); code != 200 {
		t.Fatalf("viewer token reads: %d", code)
	}
	if code, ecode, _ := e.sendAs("POST", "/api/keys", map[string]any{"name": "x"}, tok, ""); code != 403 || ecode != "ROLE_FORBIDDEN" {
		t.Fatalf("viewer token writes: %d %s", code, ecode)
	}
	code, _, out := e.sendAs("GET", "/api/tokens", nil, e.token, "")
	if code != 200 || strings.Contains(string(out), tok) || !strings.Contains(string(out), `"name":"ci"`) {
		t.Fatalf("list: %d %s", code, out)
	}
	var list struct {
		Tokens []struct{ ID, Name string }
	}
	_ = json.Unmarshal(out, &list)
	if code, m := e.mgmt("DELETE", "/api/tokens/"+list.Tokens[0].ID, nil); code != 200 {
		t.Fatalf("revoke: %d %v", code, m)
	}
	if code, ecode, _ := e.sendAs("GET", "/api/providers", nil, tok, ""); code != 401 || ecode != "MANAGEMENT_AUTH_REQUIRED" {
		t.Fatalf("revoked token: %d %s", code, ecode)
	}
	for _, bad := range []map[string]any{{"name": "x", "role": "root"}, {"role": "viewer"}, {"name": "", "role": "viewer"}} {
		if code, m := e.mgmt("POST", "/api/tokens", bad); code != 400 {
			t.Errorf("create token %v: %d %v", bad, code, m)
		}
	}
}

// TestAuditTrail: each management write is recorded with who, when, from
// where and what, secrets replaced; reads are not; the filters and paging
// select entries.
func TestAuditTrail(t *testing.T) {
	e := newEnv(t)
	e.addConn("c1", "sk-upstream-SECRET-123", 1)
	e.createUser("ann@example.com", api.RoleOperator, "ann-password-1")
	c := e.login("ann@example.com", "ann-password-1")
	if code, _, out := e.sendAs("POST", "/api/resilience/reset", map[string]any{}, "", c.Value); code != 200 {
		t.Fatalf("reset: %d %s", code, out)
	}
	e.mgmt("GET", "/api/providers", nil) // a read: not recorded
	code, _, out := e.sendAs("GET", "/api/audit", nil, e.token, "")
	if code != 200 {
		t.Fatalf("audit: %d %s", code, out)
	}
	if strings.Contains(string(out), "SECRET-123") || strings.Contains(string(out), "ann-password-1") {
		t.Fatalf("a secret reached the audit log: %s", out)
	}
	var page struct {
		Entries []struct {
			ID                                 int64
			At, Actor, ActorKind, Role, Remote string
			Action, Target                     string
			Status                             int
			Detail                             map[string]any
		}
		NextBefore int64
	}
	if err := json.Unmarshal(out, &page); err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, en := range page.Entries {
		actions = append(actions, en.Actor+" "+en.Action)
	}
	want := []string{"ann@example.com POST /api/resilience/reset", "ann@example.com POST /api/login",
		"management token POST /api/users", "management token POST /api/providers"}
	if strings.Join(actions, "|") != strings.Join(want, "|") {
		t.Fatalf("entries %q, want %q", actions, want)
	}
	conn := page.Entries[3]
	if conn.Remote != "127.0.0.1" || conn.Status != 201 || conn.At == "" || conn.ActorKind != "management-token" || conn.Role != "admin" {
		t.Fatalf("entry: %+v", conn)
	}
	body, _ := conn.Detail["body"].(map[string]any)
	if body["apiKey"] != "[redacted]" || body["name"] != "c1" {
		t.Fatalf("detail: %v", conn.Detail)
	}
	for q, n := range map[string]int{
		"?actor=ANN@":                 2,
		"?action=resilience":          1,
		"?actor=ann&action=login":     1,
		"?limit=1":                    1,
		"?since=2026-01-01T00:00:00Z": 4,
		"?until=2026-01-01T00:00:00Z": 0,
		"?actor=nobody":               0,
		"?before=" + strconv.FormatInt(page.Entries[1].ID, 10): 2,
	} {
		code, _, out := e.sendAs("GET", "/api/audit"+q, nil, e.token, "")
		var p struct{ Entries []any }
		_ = json.Unmarshal(out, &p)
		if code != 200 || len(p.Entries) != n {
			t.Errorf("audit%s: %d, %d entries, want %d: %s", q, code, len(p.Entries), n, out)
		}
	}
	code, _, out = e.sendAs("GET", "/api/audit?limit=2", nil, e.token, "")
	if code != 200 || !strings.Contains(string(out), `"nextBefore":`) {
		t.Fatalf("a full page names the next: %s", out)
	}
	for _, q := range []string{"?limit=0", "?limit=501", "?since=yesterday", "?before=x"} {
		if code, ecode, _ := e.sendAs("GET", "/api/audit"+q, nil, e.token, ""); code != 400 || ecode != "INVALID_QUERY" {
			t.Errorf("audit%s: %d %s", q, code, ecode)
		}
	}
	if code, ecode, _ := e.sendAs("GET", "/api/audit", nil, e.createToken("v", api.RoleViewer), ""); code != 403 || ecode != "ROLE_FORBIDDEN" {
		t.Fatalf("viewer reads the audit log: %d %s", code, ecode)
	}
}

// TestKeyOwner: a client key can belong to a user; an unknown user is 400;
// deleting the user leaves the key without owner.
func TestKeyOwner(t *testing.T) {
	e := newEnv(t)
	uid := e.createUser("kim@example.com", api.RoleViewer, "kim-password")
	code, m := e.mgmt("POST", "/api/keys", map[string]any{"name": "kim's", "ownerUserId": uid})
	if code != 201 || m["ownerUserId"] != uid {
		t.Fatalf("create: %d %v", code, m)
	}
	kid := m["id"].(string)
	code, _, out := e.sendAs("GET", "/api/keys", nil, e.token, "")
	if code != 200 || !strings.Contains(string(out), `"owner":"kim@example.com"`) {
		t.Fatalf("list: %d %s", code, out)
	}
	if code, m := e.mgmt("PATCH", "/api/keys/"+kid, map[string]any{"ownerUserId": "nobody"}); code != 400 || m["error"].(map[string]any)["code"] != "UNKNOWN_USER" {
		t.Fatalf("unknown owner: %d %v", code, m)
	}
	e.mgmt("DELETE", "/api/users/"+uid, nil)
	_, _, out = e.sendAs("GET", "/api/keys", nil, e.token, "")
	if strings.Contains(string(out), uid) {
		t.Fatalf("owner kept after the user was deleted: %s", out)
	}
}

// TestTeamSharesPeople: on a team server every instance accepts each
// instance's management token, the stored tokens and the sessions (all in
// the database); a revocation on one applies on the other at once; the audit
// log holds both instances' writes.
func TestTeamSharesPeople(t *testing.T) {
	a, b := newTeam(t)
	if code, _, out := b.sendAs("GET", "/api/providers", nil, a.token, ""); code != 200 {
		t.Fatalf("a's token on b: %d %s", code, out)
	}
	if code, _, out := a.sendAs("GET", "/api/providers", nil, b.token, ""); code != 200 {
		t.Fatalf("b's token on a: %d %s", code, out)
	}
	op := a.createToken("ops-bot", api.RoleOperator)
	if code, _, out := b.sendAs("POST", "/api/resilience/reset", map[string]any{}, op, ""); code != 200 {
		t.Fatalf("a's stored token on b: %d %s", code, out)
	}
	a.createUser("dana@example.com", api.RoleViewer, "dana-password")
	sess := a.login("dana@example.com", "dana-password").Value
	if code, _, out := b.sendAs("GET", "/api/session", nil, "", sess); code != 200 || !strings.Contains(string(out), "dana@example.com") {
		t.Fatalf("a's session on b: %d %s", code, out)
	}
	resp, _ := b.do("POST", "/api/logout", nil, map[string]string{"Cookie": api.SessionCookie + "=" + sess})
	if resp.StatusCode != 200 {
		t.Fatalf("logout on b: %d", resp.StatusCode)
	}
	if code, _, _ := a.sendAs("GET", "/api/session", nil, "", sess); code != 401 {
		t.Fatalf("a session signed out on b still works on a: %d", code)
	}
	_, _, out := a.sendAs("GET", "/api/tokens", nil, a.token, "")
	var list struct{ Tokens []struct{ ID, Name string } }
	_ = json.Unmarshal(out, &list)
	for _, tk := range list.Tokens {
		if tk.Name == "ops-bot" {
			a.mgmt("DELETE", "/api/tokens/"+tk.ID, nil)
		}
	}
	if code, _, _ := b.sendAs("GET", "/api/providers", nil, op, ""); code != 401 {
		t.Fatalf("a token revoked on a still works on b: %d", code)
	}
	_, _, out = b.sendAs("GET", "/api/audit?action=resilience/reset", nil, a.token, "")
	if !strings.Contains(string(out), `"actor":"token:ops-bot"`) {
		t.Fatalf("b's write in the audit log: %s", out)
	}
}
