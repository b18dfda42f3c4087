package e2e

import (
	"net/http"
	"testing"

	"omniroute/tests/fakeupstream"
)

// TestTeamServerBreakerCountsAcrossInstances: a provider breaker's failure
// threshold counts the team's failures. With the threshold at 4, one request
// through A and one through B each meet a failing upstream twice (the failure
// and its retry in place): two failures per instance, four for the team. The
// database, counting every instance's outcomes on the provider's row, opens
// it, and within a second both instances show it OPEN and skip the provider.
// (Each instance alone counted 2: before, neither opened.)
func TestTeamServerBreakerCountsAcrossInstances(t *testing.T) {
	// One request counts once toward the breaker (its retry adds nothing):
	// a threshold of 2 is met by one failing request on each instance.
	ts := newTeamServer(t, false, "OMNIROUTE_CIRCUIT_BREAKER_API_KEY_FAILURE_THRESHOLD=2",
		"OMNIROUTE_CIRCUIT_BREAKER_API_KEY_DEGRADATION_THRESHOLD=1")
	a, b := ts.a, ts.b
	a.addConn("bad", ts.upURL, "key-bad", 1)
	good := a.addConn("good", ts.upURL, "key-good", 2)
	within(t, "connections created on A routed by B", func() bool {
		resp, _ := b.chat(b.key, teamModel, false)
		return resp.StatusCode == http.StatusOK
	})
	ts.up.SetFault("key-bad", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503})
	for _, g := range []*gatewayProc{a, b} {
		before := ts.up.Hits("key-bad")
		resp, body := g.chat(g.key, teamModel, false)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != good {
			t.Fatalf("%s: %d via %q: %s", g.base, resp.StatusCode, resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), body)
		}
		// A: a failure and its retry; B: its failure may open the team's
		// breaker (A's counted already), and then its retry is refused.
		if n := ts.up.Hits("key-bad") - before; n != 2 && (g == a || n != 1) {
			t.Fatalf("%s sent the failing connection %d requests, want 2 (a failure and its retry)", g.base, n)
		}
		if n := healthCount(t, g, "circuitBreakers", "open"); n != 0 && g == a {
			t.Fatalf("A opened its breaker alone after one failing request (threshold 2): %v", decodeHealth(t, g, true))
		}
	}
	took := within(t, "the breaker opened by the team's 2 failures OPEN on A and B", func() bool {
		return healthCount(t, a, "circuitBreakers", "open") == 1 && healthCount(t, b, "circuitBreakers", "open") == 1
	})
	t.Logf("OPEN on both after %v", took)
	hits := ts.up.Hits("key-bad")
	for _, g := range []*gatewayProc{a, b} {
		resp, body := g.chat(g.key, teamModel, false)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != good ||
			resp.Header.Get("X-OmniRoute-Attempts") != "1" {
			t.Fatalf("%s: %d via %q after %s attempts, want the good connection at once: %s", g.base, resp.StatusCode,
				resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), resp.Header.Get("X-OmniRoute-Attempts"), body)
		}
	}
	if got := ts.up.Hits("key-bad"); got != hits {
		t.Fatalf("the open provider got %d more request(s)", got-hits)
	}
	a.stop()
	b.stop()
}
