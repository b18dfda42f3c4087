package server_test

import "testing"

// TestInstancesOnSQLite: a desktop (SQLite) instance lists itself alone, not
// shared, and adds no X-OmniRoute-Instance header.
func TestInstancesOnSQLite(t *testing.T) {
	e := newEnv(t)
	code, m := e.mgmt("GET", "/api/instances", nil)
	list, _ := m["instances"].([]any)
	if code != 200 || m["shared"] != false || len(list) != 1 {
		t.Fatalf("GET /api/instances: %d %v", code, m)
	}
	self, _ := list[0].(map[string]any)
	if self["self"] != true || self["live"] != true || self["name"] != m["self"] {
		t.Fatalf("self row %v", self)
	}
	resp, _ := e.do("GET", "/api/monitoring/health", nil, nil)
	if h := resp.Header.Get("X-OmniRoute-Instance"); h != "" {
		t.Fatalf("X-OmniRoute-Instance %q on a desktop instance", h)
	}
}
