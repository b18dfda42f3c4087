package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"omniroute/tests/fakeupstream"
)

// addOAuthConn adds an OAuth account (an access token, no refresh) of the
// OpenAI-compatible provider at priority 1 serving teamModel.
func (g *gatewayProc) addOAuthConn(name, upstreamBaseURL, token string) string {
	g.t.Helper()
	m := g.mustMgmt(http.StatusCreated, http.MethodPost, "/api/providers", map[string]any{
		"provider": "openai-compatible", "name": name, "authType": "oauth", "accessToken": token,
		"baseUrl": upstreamBaseURL + "/v1", "priority": 1, "models": []string{teamModel}, "verify": false,
	})
	conn, _ := m["connection"].(map[string]any)
	id, _ := conn["id"].(string)
	if id == "" {
		g.t.Fatalf("create connection: no connection.id in %v", m)
	}
	return id
}

// TestTeamServerSpreadsNewSessionsTeamWide: a provider's three OAuth
// accounts at one priority, three instances on one database, and 12 new
// sessions whose first turns reach all three instances at the same moment
// (the upstream answers after 150 ms, so every first turn is in flight
// together). The sessions end spread over the accounts team-wide — 4 on
// each, at most one apart — none is split (every instance serves a session
// by one account), and a next turn sent at once to each instance goes to the
// session's account. Before the spread counted the team's pins at the claim,
// each instance ordered its burst by its own pins and every instance put
// its sessions on the same accounts (12 on one, or 6/3/3).
func TestTeamServerSpreadsNewSessionsTeamWide(t *testing.T) {
	ts := newTeamServer(t, false)
	c := ts.third(t)
	gws := []*gatewayProc{ts.a, ts.b, c}
	accounts := map[string]bool{}
	for i := range 3 {
		token := fmt.Sprintf("oauth-spread-%d", i+1)
		accounts[ts.a.addOAuthConn(fmt.Sprintf("acct-%d", i+1), ts.upURL, token)] = true
		ts.up.SetFault(token, fakeupstream.Fault{Mode: fakeupstream.ModeLatency, LatencyMs: 150})
	}
	for _, g := range gws {
		within(t, "the three accounts routed by "+g.base, func() bool {
			code, m := g.mgmt(http.MethodGet, "/api/routing/explain?model="+url.QueryEscape(teamModel), nil)
			cands, _ := m["candidates"].([]any)
			return code == http.StatusOK && len(cands) == 3
		})
	}
	turn := func(g *gatewayProc, session string) string {
		resp, body := g.do(http.MethodPost, "/v1/chat/completions", chatBody(teamModel, false),
			map[string]string{"Authorization": "Bearer " + g.key, "X-Session-Id": session})
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: session %s: %d %s", g.base, session, resp.StatusCode, body)
			return ""
		}
		return resp.Header.Get("X-OmniRoute-Selected-Connection-Id")
	}
	const sessions = 12
	served := make([][3]string, sessions)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for s := range sessions {
		for i, g := range gws {
			wg.Go(func() {
				<-start
				served[s][i] = turn(g, fmt.Sprintf("spread-session-%d", s))
			})
		}
	}
	close(start)
	wg.Wait()
	occupancy := map[string]int{}
	for id := range accounts {
		occupancy[id] = 0
	}
	for s, got := range served {
		if got[0] == "" || got[0] != got[1] || got[1] != got[2] {
			t.Errorf("session %d served by %v on A, B, C: split", s, got)
			continue
		}
		occupancy[got[0]]++
	}
	lo, hi := sessions, 0
	for _, n := range occupancy {
		lo, hi = min(lo, n), max(hi, n)
	}
	if len(occupancy) != 3 || hi-lo > 1 {
		t.Fatalf("%d new sessions through three instances ended %v on the three accounts: max − min = %d, want ≤ 1",
			sessions, occupancy, hi-lo)
	}
	for s := range sessions {
		for i, g := range gws {
			wg.Go(func() {
				if got := turn(g, fmt.Sprintf("spread-session-%d", s)); got != served[s][0] {
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
