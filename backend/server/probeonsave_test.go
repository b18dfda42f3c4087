package server_test

import (
	"net/http"
	"strings"
	"testing"

	"omniroute/tests/fakeupstream"
)

// closedPortURL is a loopback base URL nothing listens on.
func closedPortURL(t *testing.T) string {
	t.Helper()
	u, err := fakeupstream.ClosedURL()
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestSaveRunsTheCheck: a create with models listed by hand (no verify
// field) and an edit of the base URL always run the reach / auth / one-token
// completion check, and the connection takes a state named for its outcome on
// the health model and the Cooldown Manager, with the fix that fits: a base
// URL answering 404 is endpoint_not_found (edit_connection), a closed port
// unreachable (edit_connection), a wrong key key_rejected (replace_key);
// each create answer warns. Editing the base URL to the right one serves.
func TestSaveRunsTheCheck(t *testing.T) {
	e := newEnv(t)
	e.up.SetFault("bad-key", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 401})
	cases := []struct {
		name, provider, key, baseURL, model, state, fix, warning string
	}{
		{"no-v1", "anthropic-compatible", "key-a", strings.TrimSuffix(e.upURL, "/v1"), "claude-sonnet-4-5",
			"endpoint_not_found", "edit_connection", "this URL answers 404: check the base URL"},
		{"closed", "openai-compatible", "key-c", closedPortURL(t), "gpt-4o-mini",
			"unreachable", "edit_connection", "the upstream could not be reached"},
		{"wrong-key", "openai-compatible", "bad-key", e.upURL, "gpt-4o-mini",
			"key_rejected", "replace_key", "the provider rejected this key (401"},
	}
	ids := map[string]string{}
	for _, tc := range cases {
		code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": tc.provider, "name": tc.name,
			"apiKey": tc.key, "baseUrl": tc.baseURL, "models": []string{tc.model}})
		if code != http.StatusCreated {
			t.Fatalf("%s: create %d %v", tc.name, code, m)
		}
		if w, _ := m["warning"].(string); !strings.Contains(w, tc.warning) {
			t.Fatalf("%s: create answer warning %q, want %q: %v", tc.name, w, tc.warning, m)
		}
		if ch, _ := m["check"].(map[string]any); ch == nil || ch["ok"] != false || ch["state"] != tc.state {
			t.Fatalf("%s: check %v", tc.name, m["check"])
		}
		ids[tc.name] = m["connection"].(map[string]any)["id"].(string)
	}
	assertStates := func(when string) {
		t.Helper()
		h := e.health()
		_, cd := e.mgmt("GET", "/api/resilience/cooldowns", nil)
		for _, tc := range cases {
			c := e.connHealth(h, ids[tc.name])
			if c["state"] != tc.state || c["serving"] != false || !hasFix(c, tc.fix) || hasFix(c, "unlock_models") {
				t.Fatalf("%s %s: health %v", when, tc.name, c)
			}
			for _, x := range cd["connections"].([]any) {
				if x := x.(map[string]any); x["id"] == ids[tc.name] && x["status"] != tc.state {
					t.Fatalf("%s %s: cooldown manager says %v", when, tc.name, x["status"])
				}
			}
		}
		if h["status"] != "unhealthy" {
			t.Fatalf("%s: no connection serves, status %v", when, h["status"])
		}
	}
	assertStates("after create")
	// endpoint_not_found and key_rejected are stored; unreachable is seen again
	// by the next attempt, so only the stored ones are checked after a restart.
	e.restart()
	for _, name := range []string{"no-v1", "wrong-key"} {
		if c := e.connHealth(e.health(), ids[name]); c["state"] != map[string]string{"no-v1": "endpoint_not_found", "wrong-key": "key_rejected"}[name] {
			t.Fatalf("after a restart %s: %v", name, c)
		}
	}

	// The right base URL (an edit without a verify field) is checked and serves.
	code, m := e.mgmt("PATCH", "/api/providers/"+ids["no-v1"], map[string]any{"baseUrl": e.upURL})
	if code != 200 || m["warning"] != nil || m["check"] == nil || m["check"].(map[string]any)["ok"] != true {
		t.Fatalf("edit to the right URL: %d %v", code, m)
	}
	if c := e.connHealth(e.health(), ids["no-v1"]); c["state"] != "serving" {
		t.Fatalf("after the right URL: %v", c)
	}
	// An edit of the base URL to a wrong one is checked too.
	code, m = e.mgmt("PATCH", "/api/providers/"+ids["no-v1"], map[string]any{"baseUrl": strings.TrimSuffix(e.upURL, "/v1")})
	if code != 200 || m["check"] == nil || m["check"].(map[string]any)["state"] != "endpoint_not_found" {
		t.Fatalf("edit to a wrong URL: %d %v", code, m)
	}
	if c := e.connHealth(e.health(), ids["no-v1"]); c["state"] != "endpoint_not_found" {
		t.Fatalf("after the wrong URL: %v", c)
	}
}

// TestModelNotServedIsNotAWrongURL: an upstream that lists its models but
// answers 404 to a hand-listed model it does not serve keeps its base URL
// (the model is wrong, not the URL): no endpoint_not_found.
func TestModelNotServedIsNotAWrongURL(t *testing.T) {
	e := newEnv(t)
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "openai-compatible", "name": "typo",
		"apiKey": "key-t", "baseUrl": e.upURL, "models": []string{"no-such-model-xyz"}})
	if code != http.StatusCreated {
		t.Fatalf("create %d %v", code, m)
	}
	id := m["connection"].(map[string]any)["id"].(string)
	if c := e.connHealth(e.health(), id); c["state"] == "endpoint_not_found" {
		t.Fatalf("a listed upstream's 404 is the model's: %v", c)
	}
}
