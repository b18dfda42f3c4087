package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"omniroute/tests/fakeupstream"
)

// third starts one more instance on the team server's database (with the
// shared secret.key copied from A's data directory).
func (ts *teamServer) third(t *testing.T, extraEnv ...string) *gatewayProc {
	t.Helper()
	key, err := os.ReadFile(filepath.Join(ts.a.dir, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "secret.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	return startGateway(t, dir, 0, append([]string{"OMNIROUTE_DATABASE_URL=" + ts.url}, extraEnv...)...)
}

// TestTeamServerConcurrentFirstTurnsNeverSplit: three instances on one
// database, a random combo over three connections, and 20 sessions whose
// first turns reach all three instances at the same moment (the upstream
// answers after 150 ms, so every first turn is in flight together). Every
// session is served by one connection on all three instances, and a next
// turn sent at once to each instance goes there too. Before the pin was
// claimed in the database at dispatch, most sessions split.
func TestTeamServerConcurrentFirstTurnsNeverSplit(t *testing.T) {
	ts := newTeamServer(t, false)
	a, b := ts.a, ts.b
	c := ts.third(t)
	gws := []*gatewayProc{a, b, c}
	var targets []any
	for i, k := range []string{"key-p1", "key-p2", "key-p3"} {
		id := a.addConn(fmt.Sprintf("p%d", i+1), ts.upURL, k, 1)
		targets = append(targets, map[string]any{"model": teamModel, "connectionId": id})
		ts.up.SetFault(k, fakeupstream.Fault{Mode: fakeupstream.ModeLatency, LatencyMs: 150})
	}
	a.mustMgmt(http.StatusCreated, http.MethodPost, "/api/combos", map[string]any{"name": "team-pool", "strategy": "random", "targets": targets})
	for _, g := range gws[1:] {
		within(t, "the combo created on A routed by "+g.base, func() bool {
			resp, _ := g.chat(g.key, "team-pool", false)
			return resp.StatusCode == http.StatusOK
		})
	}
	turn := func(g *gatewayProc, session string) string {
		resp, body := g.do(http.MethodPost, "/v1/chat/completions", chatBody("team-pool", false),
			map[string]string{"Authorization": "Bearer " + g.key, "X-Session-Id": session})
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: session %s: %d %s", g.base, session, resp.StatusCode, body)
			return ""
		}
		return resp.Header.Get("X-OmniRoute-Selected-Connection-Id")
	}
	const sessions = 20
	served := make([][3]string, sessions)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for s := range sessions {
		for i, g := range gws {
			wg.Go(func() {
				<-start
				served[s][i] = turn(g, fmt.Sprintf("team-first-turn-%d", s))
			})
		}
	}
	close(start)
	wg.Wait()
	splits, used := 0, map[string]bool{}
	for s, got := range served {
		used[got[0]] = true
		if got[0] == "" || got[0] != got[1] || got[1] != got[2] {
			splits++
			t.Errorf("session %d served by %v on A, B, C", s, got)
		}
	}
	if splits > 0 {
		t.Fatalf("%d of %d sessions split across connections", splits, sessions)
	}
	if len(used) < 2 {
		t.Logf("every session landed on one connection (%v): the random combo spread nothing", used)
	}
	// The next turn, at once, on every instance: the same connection.
	for s := range sessions {
		for i, g := range gws {
			wg.Go(func() {
				if got := turn(g, fmt.Sprintf("team-first-turn-%d", s)); got != served[s][0] {
					t.Errorf("session %d: next turn on instance %d via %q, want %q", s, i, got, served[s][0])
				}
			})
		}
	}
	wg.Wait()
	for _, g := range gws {
		g.stop()
	}
}

// burst sends n chat requests at once, dealt round-robin over gws, and
// waits for them: each must be served.
func burst(t *testing.T, gws []*gatewayProc, n int) {
	t.Helper()
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		g := gws[i%len(gws)]
		wg.Go(func() {
			<-start
			if resp, body := g.chat(g.key, teamModel, false); resp.StatusCode != http.StatusOK {
				t.Errorf("%s: %d %s", g.base, resp.StatusCode, body)
			}
		})
	}
	close(start)
	wg.Wait()
}

// limitedTeam is a team server of three instances with one connection
// (upstream key key-lim) that every instance routes, created with the
// limits of patch: an instance never routes it without them (created
// first and patched after, an instance that read the connection between
// the two served a burst unlimited until the patch reached it — 5 at once
// under maxConcurrent 1 on a loaded machine).
func limitedTeam(t *testing.T, patch map[string]any) (*teamServer, []*gatewayProc, string) {
	t.Helper()
	ts := newTeamServer(t, false)
	c := ts.third(t)
	gws := []*gatewayProc{ts.a, ts.b, c}
	body := map[string]any{"provider": "openai-compatible", "name": "limited", "authType": "apikey", "apiKey": "key-lim",
		"baseUrl": ts.upURL + "/v1", "priority": 1, "models": []string{"gpt-4o-mini"}, "verify": false}
	for k, v := range patch {
		body[k] = v
	}
	m := ts.a.mustMgmt(http.StatusCreated, http.MethodPost, "/api/providers", body)
	conn, _ := m["connection"].(map[string]any)
	id, _ := conn["id"].(string)
	if id == "" {
		t.Fatalf("create connection: no connection.id in %v", m)
	}
	for _, g := range gws[1:] {
		within(t, "the connection created on A routed by "+g.base, func() bool {
			resp, _ := g.chat(g.key, teamModel, false)
			return resp.StatusCode == http.StatusOK
		})
	}
	return ts, gws, id
}

// TestTeamServerMaxConcurrentAcrossInstances: maxConcurrent 1 on three
// instances, 12 requests at once (4 through each), the upstream answering
// after 150 ms: never two at the upstream at once, all served. Before the
// limits were shared, three ran at once.
func TestTeamServerMaxConcurrentAcrossInstances(t *testing.T) {
	ts, gws, _ := limitedTeam(t, map[string]any{"maxConcurrent": 1})
	ts.up.Reset() // the peak counts from here
	ts.up.SetFault("key-lim", fakeupstream.Fault{Mode: fakeupstream.ModeLatency, LatencyMs: 150})
	burst(t, gws, 12)
	if peak := ts.up.PeakInFlightAll(); peak != 1 {
		t.Fatalf("maxConcurrent 1 across three instances: %d requests at the upstream at once", peak)
	}
	for _, g := range gws {
		g.stop()
	}
}

// TestTeamServerPacingAcrossInstances: requestsPerMinute 120 (one dispatch
// per 500 ms) on three instances, 9 requests at once (3 through each): they
// reach the upstream one turn apart. Before, each instance paced alone and
// three arrived together. The gaps are read at the upstream, where pacing
// acts (the answers' way back to the client adds the machine's jitter).
func TestTeamServerPacingAcrossInstances(t *testing.T) {
	ts, gws, _ := limitedTeam(t, map[string]any{"rateLimitOverrides": map[string]any{"requestsPerMinute": 120}})
	time.Sleep(600 * time.Millisecond) // let the set-up requests' turns pass (one interval)
	ts.up.Reset()                      // the arrivals count from here
	burst(t, gws, 9)
	arrived := ts.up.Arrivals("key-lim")
	if len(arrived) != 9 {
		t.Fatalf("%d requests reached the upstream, want 9", len(arrived))
	}
	for i := 1; i < len(arrived); i++ {
		if gap := arrived[i].Sub(arrived[i-1]); gap < 350*time.Millisecond {
			t.Fatalf("requests %d and %d reached the upstream %v apart; requestsPerMinute 120 across the instances spaces them 500 ms", i-1, i, gap)
		}
	}
	if total := arrived[len(arrived)-1].Sub(arrived[0]); total < 3500*time.Millisecond {
		t.Fatalf("9 paced requests reached the upstream within %v, want at least 8 turns of 500 ms", total)
	}
	for _, g := range gws {
		g.stop()
	}
}

// TestTeamServerDeadInstanceSlotFreed: with maxConcurrent 1 and a 2 s slot
// lease, an instance holding the slot is killed (SIGKILL) in the middle of a
// request: a request through another instance waits for the dead slot and
// is served once its lease lapses — not before, and not after the dead
// request's upstream time (8 s).
func TestTeamServerDeadInstanceSlotFreed(t *testing.T) {
	ts, gws, _ := limitedTeam(t, map[string]any{"maxConcurrent": 1})
	a, c := gws[0], gws[2]
	a.mustMgmt(http.StatusOK, http.MethodPatch, "/api/settings", map[string]any{"team": map[string]any{"slotLeaseMs": 2000}})
	within(t, "the slot lease seen by C", func() bool {
		_, m := c.mgmt(http.MethodGet, "/api/settings", nil)
		team, _ := m["team"].(map[string]any)
		return team["slotLeaseMs"] == float64(2000)
	})
	ts.up.SetFault("key-lim", fakeupstream.Fault{Mode: fakeupstream.ModeLatency, LatencyMs: 8000, Times: 1})
	held := make(chan struct{})
	go func() { // holds the slot; C dies under it (the request then fails: not checked)
		defer close(held)
		req, _ := http.NewRequest(http.MethodPost, c.base+"/v1/chat/completions",
			strings.NewReader(`{"model":"`+teamModel+`","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Authorization", "Bearer "+c.key)
		req.Header.Set("Content-Type", "application/json")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
		}
	}()
	defer func() { <-held }()
	deadline := time.Now().Add(5 * time.Second)
	for ts.up.InFlight() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("C's request never reached the upstream")
		}
		time.Sleep(10 * time.Millisecond) // poll interval
	}
	c.kill()
	t0 := time.Now()
	resp, body := a.chat(a.key, teamModel, false)
	took := time.Since(t0)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("A after C died holding the slot: %d %s", resp.StatusCode, body)
	}
	// The dead slot held A until its lease (2 s after C's last renewal,
	// renewed every lease/3) lapsed: between 1.3 s and 2 s, plus start-up.
	if took < time.Second || took > 3500*time.Millisecond {
		t.Fatalf("A waited %v for the dead instance's slot; want the rest of its 2 s lease", took)
	}
	t.Logf("A served %v after C was killed holding the only slot (lease 2 s)", took)
	a.stop()
	gws[1].stop()
}

// TestTeamServerQueueDepthAcrossInstances: maxConcurrent 1 and
// maxQueueDepth 1 on three instances: one request runs through A, one waits
// in the queue through B, and a third through C — whose own queue is empty —
// is refused at once with RATE_LIMIT_QUEUE_FULL and never reaches the
// upstream. Before the queue depth was shared, C queued it as well.
func TestTeamServerQueueDepthAcrossInstances(t *testing.T) {
	ts, gws, id := limitedTeam(t, map[string]any{"maxConcurrent": 1})
	a, b, c := gws[0], gws[1], gws[2]
	a.mustMgmt(http.StatusOK, http.MethodPatch, "/api/resilience", map[string]any{"requestQueue": map[string]any{"maxQueueDepth": 1}})
	within(t, "the queue depth seen by C", func() bool {
		_, m := c.mgmt(http.MethodGet, "/api/resilience", nil)
		return gjsonNumber(m, "requestQueue", "maxQueueDepth") == 1
	})
	ts.up.Reset()
	ts.up.SetFault("key-lim", fakeupstream.Fault{Mode: fakeupstream.ModeLatency, LatencyMs: 1500})
	ctx := context.Background()
	var wg sync.WaitGroup
	var first, second answer
	wg.Go(func() { first = a.post(ctx, teamModel) })
	waitFor(t, "the first request upstream", func() bool { return ts.up.InFlight() == 1 })
	wg.Go(func() { second = b.post(ctx, teamModel) })
	waitFor(t, "the second request queued on B", func() bool { return liveLimits(t, b, id)["queued"] == float64(1) })
	waitFor(t, "B's queue ticket in the database", func() bool { return queueTickets(t, ts.url, id) == 1 })
	third := c.post(ctx, teamModel)
	if third.err != nil || third.status != http.StatusServiceUnavailable || third.code != "RATE_LIMIT_QUEUE_FULL" || third.retry == "" {
		t.Fatalf("the third request through C = %+v, want 503 RATE_LIMIT_QUEUE_FULL with Retry-After", third)
	}
	wg.Wait()
	if first.status != http.StatusOK || second.status != http.StatusOK || ts.up.Hits("key-lim") != 2 {
		t.Fatalf("first %+v second %+v, upstream hits %d; want two served", first, second, ts.up.Hits("key-lim"))
	}
	for _, g := range gws {
		g.stop()
	}
}

// queueTickets counts the connection's team-wide queue tickets held now.
func queueTickets(t *testing.T, dbURL, connID string) int {
	t.Helper()
	db := pgConn(t, dbURL)
	defer db.Close(context.Background())
	var n int
	if err := db.QueryRow(context.Background(), `SELECT COUNT(*) FROM connection_slots WHERE connection_id = $1 AND expires_at > $2`,
		"queue|"+connID, time.Now().UnixMilli()).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// gjsonNumber reads a number two levels down a decoded JSON object.
func gjsonNumber(m map[string]any, a, b string) float64 {
	inner, _ := m[a].(map[string]any)
	n, _ := inner[b].(float64)
	return n
}
