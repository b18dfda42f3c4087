package gateway

import (
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/providers"
	"omniroute/backend/resilience/affinity"
	"omniroute/backend/routing"
)

type nopClaimer struct{}

func (nopClaimer) ClaimPin(p affinity.Pin) (affinity.Pin, error) { return p, nil }

// TestSpreadOf: a new session's claim carries its plan's spread (the
// leading accounts, their provider as the pool) only on a team server; a
// session the plan found pinned, a plan without a spread and a single
// instance claim nothing more.
func TestSpreadOf(t *testing.T) {
	prov := providers.Provider{ID: "oauth-pool"}
	cands := []routing.Candidate{
		{Conn: &routing.Conn{ID: "a", Provider: prov, BreakerKey: "oauth-pool"}},
		{Conn: &routing.Conn{ID: "b", Provider: prov, BreakerKey: "oauth-pool"}},
		{Conn: &routing.Conn{ID: "k", Provider: providers.Provider{ID: "keyed"}, BreakerKey: "keyed"}},
	}
	ttl := func() time.Duration { return time.Hour }
	team := affinity.New(clock.Real{}, ttl, nil)
	team.ShareWith(nopClaimer{})
	single := affinity.New(clock.Real{}, ttl, nil)
	tests := []struct {
		name string
		pins *affinity.Pins
		plan routing.Plan
		want int
	}{
		{"a new session on a team server", team, routing.Plan{Candidates: cands, Spread: 2}, 2},
		{"a pinned session", team, routing.Plan{Candidates: cands, Spread: 2, Pinned: "a"}, 0},
		{"no spread", team, routing.Plan{Candidates: cands}, 0},
		{"a single instance", single, routing.Plan{Candidates: cands, Spread: 2}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &Gateway{pins: tt.pins}
			got := g.spreadOf(&tt.plan)
			if len(got.Accounts) != tt.want {
				t.Fatalf("spread of %d accounts, want %d", len(got.Accounts), tt.want)
			}
			if tt.want > 0 && (got.Pool != "oauth-pool" || got.Accounts[0] != (affinity.Account{ConnectionID: "a", Provider: "oauth-pool"}) ||
				got.Accounts[1].ConnectionID != "b") {
				t.Fatalf("spread %+v, want pool oauth-pool over a, b", got)
			}
		})
	}
}
