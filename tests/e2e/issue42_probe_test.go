package e2e

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"omniroute/tests/fakeupstream"
	"omniroute/tests/testproc"
)

// connState is one connection's state and fixes on the built binary's health model.
func connState(t *testing.T, g *gatewayProc, id string) (string, []any) {
	t.Helper()
	h := g.mustMgmt(http.StatusOK, http.MethodGet, "/api/monitoring/health", nil)
	for _, c := range h["connections"].([]any) {
		if c := c.(map[string]any); c["id"] == id {
			fixes, _ := c["fixes"].([]any)
			return c["state"].(string), fixes
		}
	}
	t.Fatalf("connection %s not in the health model: %v", id, h["connections"])
	return "", nil
}

// TestAddChecksWrongURLClosedPortAndKey (issue 42 item 1): on the built
// binary, an Add with models listed by hand runs the reach / auth /
// completion check: an anthropic-compatible base URL without /v1 is added
// as endpoint_not_found, a closed port as unreachable, a wrong key as
// key_rejected, each with a warning and its fix, never Healthy; editing the
// base URL to the right one serves.
func TestAddChecksWrongURLClosedPortAndKey(t *testing.T) {
	t.Parallel()
	up := fakeupstream.New()
	upURL := up.Start()
	t.Cleanup(up.Close)
	up.SetFault("bad-key", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 401})
	g := startGateway(t, t.TempDir(), 0)
	t.Cleanup(g.stop)
	closed := "http://127.0.0.1:" + strconv.Itoa(testproc.FreePort(t)) + "/v1"
	cases := []struct{ name, provider, key, baseURL, model, state, fix string }{
		{"no-v1", "anthropic-compatible", "key-a", upURL, "claude-sonnet-4-5", "endpoint_not_found", "edit_connection"},
		{"closed", "openai-compatible", "key-c", closed, "gpt-4o-mini", "unreachable", "edit_connection"},
		{"wrong-key", "openai-compatible", "bad-key", upURL + "/v1", "gpt-4o-mini", "key_rejected", "replace_key"},
	}
	ids := map[string]string{}
	for _, tc := range cases {
		m := g.mustMgmt(http.StatusCreated, http.MethodPost, "/api/providers", map[string]any{"provider": tc.provider,
			"name": tc.name, "apiKey": tc.key, "baseUrl": tc.baseURL, "models": []string{tc.model}})
		if w, _ := m["warning"].(string); w == "" {
			t.Errorf("%s: the create answer has no warning: %v", tc.name, m)
		}
		id := m["connection"].(map[string]any)["id"].(string)
		ids[tc.name] = id
		state, fixes := connState(t, g, id)
		hasFix := false
		for _, f := range fixes {
			hasFix = hasFix || f == tc.fix
		}
		if state != tc.state || !hasFix {
			t.Errorf("%s: state %q fixes %v, want %q with %s", tc.name, state, fixes, tc.state, tc.fix)
		}
	}
	m := g.mustMgmt(http.StatusOK, http.MethodPatch, "/api/providers/"+ids["no-v1"], map[string]any{"baseUrl": upURL + "/v1"})
	if m["warning"] != nil || !strings.Contains(m["check"].(map[string]any)["state"].(string), "serving") {
		t.Errorf("edit to the right base URL: %v", m)
	}
	if state, _ := connState(t, g, ids["no-v1"]); state != "serving" {
		t.Errorf("after the right base URL: %q, want serving", state)
	}
}
