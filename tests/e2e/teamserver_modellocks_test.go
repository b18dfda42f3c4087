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

// TestTeamServerSharesModelLocks: a model the upstream rate-limited (429,
// Retry-After 30) through A is cooled on A — the model, not the connection —
// and within a second B lists that model cooldown and skips the connection
// for the model (never sending it the request); clearing it on B (the Model
// Cooldowns page's DELETE) releases it on A within a second, and A routes to
// that connection again.
func TestTeamServerSharesModelLocks(t *testing.T) {
	ts := newTeamServer(t, false)
	bad, good, hits := failOnA(t, ts, fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429,
		Headers: map[string]string{"Retry-After": "30"}})
	onA := modelLocks(t, ts.a)
	if len(onA) != 1 || onA[0]["connectionId"] != bad || onA[0]["layer"] != "model_cooldown" {
		t.Fatalf("A lists %v, want one model cooldown on %s", onA, bad)
	}
	if n := healthCount(t, ts.a, "connectionHealth", "coolingDown"); n != 0 {
		t.Fatalf("A cooled %v connection(s); this test needs the model cooldown alone", n)
	}
	took := within(t, "the model cooldown A set listed by B", func() bool {
		onB := modelLocks(t, ts.b)
		return len(onB) == 1 && onB[0]["connectionId"] == bad && onB[0]["model"] == onA[0]["model"]
	})
	t.Logf("model cooldown on B after %v", took)
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
