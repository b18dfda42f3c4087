package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"omniroute/backend/api"
)

// TestTokensAnswerToTheirCreator: a token's effective role is at most its
// creator's current one (a token minted by a token answers to the same
// person); demoting the creator demotes their tokens at once, promoting
// them back restores them; deleting the creator revokes their tokens and
// sessions. Tokens minted with the instance's own token keep their role.
func TestTokensAnswerToTheirCreator(t *testing.T) {
	e := newEnv(t)
	uid := e.createUser("mint@example.com", api.RoleAdmin, "mint-password-1")
	sess := e.login("mint@example.com", "mint-password-1").Value
	code, _, out := e.sendAs("POST", "/api/tokens", map[string]any{"name": "by-mint", "role": "admin"}, "", sess)
	if code != 201 {
		t.Fatalf("mint a token: %d %s", code, out)
	}
	tok := jsonField(t, out, "token")
	code, _, out = e.sendAs("POST", "/api/tokens", map[string]any{"name": "by-token", "role": "admin"}, tok, "")
	if code != 201 {
		t.Fatalf("a token mints a token: %d %s", code, out)
	}
	child := jsonField(t, out, "token")
	instanceMinted := e.createToken("by-instance", api.RoleAdmin)

	createsAdmin := func(who, email string) int {
		code, _, _ := e.sendAs("POST", "/api/users", map[string]any{"email": email, "role": "admin"}, who, "")
		return code
	}
	if c := createsAdmin(tok, "one@example.com"); c != 201 {
		t.Fatalf("the admin's token creates a user: %d", c)
	}
	// Demoted: every token the person minted, directly or through a token,
	// acts as a viewer at most.
	if code, m := e.mgmt("PATCH", "/api/users/"+uid, map[string]any{"role": "viewer"}); code != 200 {
		t.Fatalf("demote: %d %v", code, m)
	}
	for name, who := range map[string]string{"token": tok, "token's token": child} {
		if c := createsAdmin(who, "two@example.com"); c != http.StatusForbidden {
			t.Errorf("%s of a demoted admin creates an admin: %d", name, c)
		}
		if code, _, out := e.sendAs("GET", "/api/session", nil, who, ""); code != 200 || !strings.Contains(string(out), `"role":"viewer"`) {
			t.Errorf("%s of a demoted admin: %d %s", name, code, out)
		}
	}
	if c := createsAdmin(instanceMinted, "three@example.com"); c != 201 {
		t.Fatalf("a token minted with the instance token keeps its role: %d", c)
	}
	if code, _ := e.mgmt("PATCH", "/api/users/"+uid, map[string]any{"role": "admin"}); code != 200 {
		t.Fatal("promote back")
	}
	if c := createsAdmin(tok, "four@example.com"); c != 201 {
		t.Fatalf("promoted back: %d", c)
	}
	// Deleted: the tokens and the sessions go with the person.
	if code, m := e.mgmt("DELETE", "/api/users/"+uid, nil); code != 200 {
		t.Fatalf("delete: %d %v", code, m)
	}
	for name, who := range map[string]string{"token": tok, "token's token": child} {
		if code, ecode, _ := e.sendAs("GET", "/api/providers", nil, who, ""); code != 401 || ecode != "MANAGEMENT_AUTH_REQUIRED" {
			t.Errorf("%s of a deleted user: %d %s", name, code, ecode)
		}
	}
	if code, _, _ := e.sendAs("GET", "/api/session", nil, "", sess); code != 401 {
		t.Fatalf("a deleted user's session: %d", code)
	}
	_, _, out = e.sendAs("GET", "/api/tokens", nil, e.token, "")
	if strings.Contains(string(out), "by-mint") || strings.Contains(string(out), "by-token") || !strings.Contains(string(out), "by-instance") {
		t.Fatalf("tokens after the deletion: %s", out)
	}
	// A new user with the same email is someone else: the old tokens stay dead.
	e.createUser("mint@example.com", api.RoleAdmin, "mint-password-2")
	if code, _, _ := e.sendAs("GET", "/api/providers", nil, tok, ""); code != 401 {
		t.Fatalf("an old token revived by a namesake: %d", code)
	}
}

// jsonField reads one top-level string field of a JSON answer.
func jsonField(t *testing.T, body []byte, name string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	s, _ := m[name].(string)
	if s == "" {
		t.Fatalf("no %s in %s", name, body)
	}
	return s
}
