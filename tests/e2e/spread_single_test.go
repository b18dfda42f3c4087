package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"omniroute/tests/fakeupstream"
)

// TestOneInstanceSpreadsABurstOfNewSessions: one instance on SQLite (the
// desktop app), a provider's three OAuth accounts at one priority, and 12
// new sessions whose first turns arrive at the same moment (the upstream
// answers after 150 ms, so every first turn is in flight together). They end
// 4 on each account, and each session's next turn goes to its account.
// Before a new session's account was chosen and reserved in one step under
// the pin table's lock, every plan read the same occupancy (no pin landed
// yet) and the whole burst went to one account.
func TestOneInstanceSpreadsABurstOfNewSessions(t *testing.T) {
	up := fakeupstream.New()
	upURL := up.Start()
	t.Cleanup(up.Close)
	g := startGateway(t, t.TempDir(), 0)
	accounts := map[string]int{}
	for i := range 3 {
		token := fmt.Sprintf("oauth-single-%d", i+1)
		accounts[g.addOAuthConn(fmt.Sprintf("acct-%d", i+1), upURL, token)] = 0
		up.SetFault(token, fakeupstream.Fault{Mode: fakeupstream.ModeLatency, LatencyMs: 150})
	}
	code, m := g.mgmt(http.MethodGet, "/api/routing/explain?model="+url.QueryEscape(teamModel), nil)
	if cands, _ := m["candidates"].([]any); code != http.StatusOK || len(cands) != 3 {
		t.Fatalf("routing explain: %d %v, want the three accounts", code, m)
	}
	turn := func(session string) string {
		resp, body := g.do(http.MethodPost, "/v1/chat/completions", chatBody(teamModel, false),
			map[string]string{"Authorization": "Bearer " + g.key, "X-Session-Id": session})
		if resp.StatusCode != http.StatusOK {
			t.Errorf("session %s: %d %s", session, resp.StatusCode, body)
			return ""
		}
		return resp.Header.Get("X-OmniRoute-Selected-Connection-Id")
	}
	const sessions = 12
	served := make([]string, sessions)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for s := range sessions {
		wg.Go(func() {
			<-start
			served[s] = turn(fmt.Sprintf("single-burst-%d", s))
		})
	}
	close(start)
	wg.Wait()
	for s, id := range served {
		if _, ok := accounts[id]; !ok {
			t.Fatalf("session %d served by %q, not one of the accounts %v", s, id, accounts)
		}
		accounts[id]++
	}
	for id, n := range accounts {
		if n != sessions/3 {
			t.Fatalf("%d new sessions at once on one instance ended %v on the three accounts, want 4 on each (%s holds %d)",
				sessions, accounts, id, n)
		}
	}
	for s := range sessions {
		wg.Go(func() {
			if got := turn(fmt.Sprintf("single-burst-%d", s)); got != served[s] {
				t.Errorf("session %d: next turn via %q, want its account %q", s, got, served[s])
			}
		})
	}
	wg.Wait()
	g.stop()
}
