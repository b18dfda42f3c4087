package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

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
