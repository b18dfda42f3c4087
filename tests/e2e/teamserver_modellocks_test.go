package e2e

import (
	"net/http"
	"testing"

	"omniroute/tests/fakeupstream"
)

// modelLocks lists an instance's active model lockouts and model cooldowns
// (the Model Cooldowns page's GET /api/resilience/model-cooldowns).
func modelLocks(t *testing.T, g *gatewayProc) []map[string]any {
	t.Helper()
	m := g.mustMgmt(http.StatusOK, http.MethodGet, "/api/resilience/model-cooldowns", nil)
	items, _ := m["items"].([]any)
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		if x, ok := it.(map[string]any); ok {
			out = append(out, x)
		}
	}
	return out
}

// TestTeamServerSharesModelLocks: a model locked through A — a model
// cooldown after a 429 with Retry-After 30, or with the model lockout enabled
// a model lockout after a 404 — is locked on A (the model, not the
// connection), and within a second B lists that lock and skips the connection
// for the model (never sending it the request); clearing it on B (the Model
// Cooldowns page's DELETE) releases it on A within a second, and A routes to
// that connection again.
func TestTeamServerSharesModelLocks(t *testing.T) {
	for _, tc := range []struct {
		layer   string
		lockout bool
		fault   fakeupstream.Fault
	}{
		{"model_cooldown", false, fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429,
			Headers: map[string]string{"Retry-After": "30"}}},
		{"model_lockout", true, fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 404}},
	} {
		t.Run(tc.layer, func(t *testing.T) { sharesModelLock(t, tc.lockout, tc.fault, tc.layer) })
	}
}

func sharesModelLock(t *testing.T, lockoutOn bool, fault fakeupstream.Fault, layer string) {
	ts := newTeamServer(t, false)
	if lockoutOn {
		ts.a.mustMgmt(http.StatusOK, http.MethodPatch, "/api/resilience", map[string]any{"modelLockout": map[string]any{"enabled": true}})
		within(t, "the lockout switch set on A seen by B", func() bool {
			m := ts.b.mustMgmt(http.StatusOK, http.MethodGet, "/api/resilience", nil)
			ml, _ := m["modelLockout"].(map[string]any)
			return ml["enabled"] == true
		})
	}
	bad, good, hits := failOnA(t, ts, fault)
	onA := modelLocks(t, ts.a)
	if len(onA) != 1 || onA[0]["connectionId"] != bad || onA[0]["layer"] != layer {
		t.Fatalf("A lists %v, want one %s on %s", onA, layer, bad)
	}
	if n := healthCount(t, ts.a, "connectionHealth", "coolingDown"); n != 0 {
		t.Fatalf("A cooled %v connection(s); this test needs the model lock alone", n)
	}
	took := within(t, "the model lock A set listed by B", func() bool {
		onB := modelLocks(t, ts.b)
		return len(onB) == 1 && onB[0]["connectionId"] == bad && onB[0]["model"] == onA[0]["model"] && onB[0]["layer"] == layer
	})
	t.Logf("%s on B after %v", layer, took)
	skipsBad(t, ts, good, hits)

	cleared := ts.b.mustMgmt(http.StatusOK, http.MethodDelete, "/api/resilience/model-cooldowns",
		map[string]any{"connectionId": bad, "model": onA[0]["model"]})
	if cleared["removed"] != float64(1) {
		t.Fatalf("B's clear: %v", cleared)
	}
	took = within(t, "the clear on B releasing the model on A", func() bool { return len(modelLocks(t, ts.a)) == 0 })
	t.Logf("cleared on A after %v", took)
	ts.up.ClearFault("key-bad")
	resp, body := ts.a.chat(ts.a.key, teamModel, false)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != bad {
		t.Fatalf("A after the clear: %d via %q, want the released connection %s: %s", resp.StatusCode,
			resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), bad, body)
	}
	if n := len(modelLocks(t, ts.b)); n != 0 {
		t.Fatalf("B lists %d model locks after its clear", n)
	}
	ts.a.stop()
	ts.b.stop()
}
