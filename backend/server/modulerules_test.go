package server_test

import (
	"testing"

	"omniroute/backend/providers/registry"
)

// TestModuleRulesAreBuiltin: the wiring place hands the provider modules'
// error rules to the rules engine, so GET /api/rules lists each of them as
// a built-in rule of its provider.
func TestModuleRulesAreBuiltin(t *testing.T) {
	want := registry.Catalog(nil).Rules()
	if len(want) == 0 {
		t.Fatal("no provider module has built-in rules")
	}
	e := newEnv(t)
	code, m := e.mgmt("GET", "/api/rules", nil)
	if code != 200 {
		t.Fatalf("rules: %d %v", code, m)
	}
	listed := map[string]string{}
	for _, it := range m["items"].([]any) {
		r := it.(map[string]any)
		if r["source"] == "builtin" && r["kind"] == "rule" {
			listed[r["id"].(string)], _ = r["provider"].(string)
		}
	}
	for _, r := range want {
		if p, ok := listed[r.ID]; !ok || p != r.Provider {
			t.Errorf("module rule %s (%s) not listed as built-in: %v", r.ID, r.Provider, listed)
		}
	}
}
