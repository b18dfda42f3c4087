package e2e

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
)

// TestTeamServerKeyRPMAcrossInstances: a client key limited to 4 requests
// per minute, 15 requests at once through three instances (5 through
// each): exactly 4 served in that minute, the rest refused with 429
// KEY_RATE_LIMITED and a Retry-After, none reaching the upstream. Before the
// window was shared, each instance served its own 4 (12).
func TestTeamServerKeyRPMAcrossInstances(t *testing.T) {
	ts, gws, _ := limitedTeam(t, map[string]any{"maxConcurrent": 0})
	a := gws[0]
	mk := func(name string) (id, key string) {
		m := a.mustMgmt(http.StatusCreated, http.MethodPost, "/api/keys", map[string]any{"name": name})
		return m["id"].(string), m["key"].(string)
	}
	limitedID, limited := mk("limited")
	canaryID, canary := mk("canary")
	// The limited key first, then the canary (rpm 1): an instance that
	// refuses the canary has reloaded the keys after both changes.
	a.mustMgmt(http.StatusOK, http.MethodPatch, "/api/keys/"+limitedID, map[string]any{"limits": map[string]any{"rpm": 4}})
	a.mustMgmt(http.StatusOK, http.MethodPatch, "/api/keys/"+canaryID, map[string]any{"limits": map[string]any{"rpm": 1}})
	for _, g := range gws {
		waitFor(t, "the canary's limit known by "+g.base, func() bool {
			resp, _ := g.chat(canary, teamModel, false)
			return resp.StatusCode == http.StatusTooManyRequests
		})
	}
	hits := ts.up.Hits("key-lim")
	var served, refused atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 15 {
		g := gws[i%3]
		wg.Go(func() {
			<-start
			resp, body := g.chat(limited, teamModel, false)
			switch {
			case resp.StatusCode == http.StatusOK:
				served.Add(1)
			case resp.StatusCode == http.StatusTooManyRequests && gjson.GetBytes(body, "error.code").String() == "KEY_RATE_LIMITED" &&
				resp.Header.Get("Retry-After") != "":
				refused.Add(1)
			default:
				t.Errorf("%s: %d %s", g.base, resp.StatusCode, body)
			}
		})
	}
	close(start)
	wg.Wait()
	if served.Load() != 4 || refused.Load() != 11 {
		t.Fatalf("rpm 4 across three instances: %d served, %d refused; want 4 and 11", served.Load(), refused.Load())
	}
	if got := ts.up.Hits("key-lim") - hits; got != 4 {
		t.Fatalf("the upstream saw %d requests of the limited key, want 4", got)
	}
	for _, g := range gws {
		g.stop()
	}
}

// TestTeamServerModelConcurrencyAcrossInstances: a model capped at 1
// (modelConcurrency) on three instances, 12 requests at once (4 through
// each), the upstream answering after 150 ms: never two of that model at
// the upstream at once, all served. Before the cap was shared, three ran at
// once.
func TestTeamServerModelConcurrencyAcrossInstances(t *testing.T) {
	ts, gws, _ := limitedTeam(t, map[string]any{"modelConcurrency": map[string]any{"gpt-4o-mini": 1}})
	ts.up.Reset() // the peak counts from here
	ts.up.SetFault("key-lim", fakeupstream.Fault{Mode: fakeupstream.ModeLatency, LatencyMs: 150})
	burst(t, gws, 12)
	if peak := ts.up.PeakInFlightAll(); peak != 1 {
		t.Fatalf("modelConcurrency 1 across three instances: %d requests of the model at the upstream at once", peak)
	}
	for _, g := range gws {
		g.stop()
	}
}

// TestTeamServerModelConcurrencyWithMaxConcurrent: a connection with
// maxConcurrent 3 whose model is capped at 1, on three instances: each
// request takes both team-wide slots in one statement (both or neither);
// 12 requests at once, the upstream answering after 150 ms: never two of
// the model at the upstream at once, all served.
func TestTeamServerModelConcurrencyWithMaxConcurrent(t *testing.T) {
	ts, gws, _ := limitedTeam(t, map[string]any{"maxConcurrent": 3, "modelConcurrency": map[string]any{"gpt-4o-mini": 1}})
	ts.up.Reset() // the peak counts from here
	ts.up.SetFault("key-lim", fakeupstream.Fault{Mode: fakeupstream.ModeLatency, LatencyMs: 150})
	burst(t, gws, 12)
	if peak := ts.up.PeakInFlightAll(); peak != 1 {
		t.Fatalf("maxConcurrent 3 and modelConcurrency 1 across three instances: %d requests of the model at the upstream at once", peak)
	}
	for _, g := range gws {
		g.stop()
	}
}
