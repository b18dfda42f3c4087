package routing

import (
	"fmt"
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/providers"
	"omniroute/backend/resilience/affinity"
	"omniroute/backend/resilience/breaker"
	"omniroute/backend/resilience/lockout"
	"omniroute/backend/store"
)

// spreadEngine serves model m from three Claude OAuth accounts at priority 1,
// one more at priority 2 and an API key at priority 1, with session pins.
func spreadEngine(t *testing.T) (*Engine, *affinity.Pins) {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	reg := NewRegistry(providers.NewCatalog())
	rows := []store.Connection{
		{ID: "acct-a", Provider: "claude", AuthType: "oauth", Name: "a", Priority: 1},
		{ID: "acct-b", Provider: "claude", AuthType: "oauth", Name: "b", Priority: 1},
		{ID: "acct-c", Provider: "claude", AuthType: "oauth", Name: "c", Priority: 1},
		{ID: "acct-d", Provider: "claude", AuthType: "oauth", Name: "d", Priority: 2},
		{ID: "key-e", Provider: "anthropic", AuthType: "apikey", Name: "e", Priority: 3},
	}
	for i := range rows {
		rows[i].IsActive, rows[i].Models, rows[i].CreatedAt = true, `["m"]`, int64(i)
	}
	if err := reg.Load(rows, plainBox{}); err != nil {
		t.Fatal(err)
	}
	pins := affinity.New(clk, func() time.Duration { return time.Hour }, nil)
	e := NewEngine(EngineDeps{Registry: reg, Clock: clk, Lockouts: lockout.New(clk), Combos: NewCombos(),
		Breakers: breaker.NewRegistry(clk, func(string) breaker.Profile { return breaker.DefaultProfile("oauth") }, nil),
		Store:    nopStore{}, Policy: testPolicy{}, Pins: pins})
	return e, pins
}

// TestNewSessionsSpreadOverOAuthAccounts: 30 new sessions on a model three
// Claude accounts serve at the same priority land 10 on each (the guide's
// soft session occupancy), never on the lower-priority account or the API
// key first, and the plan says which three its claim may choose among
// (Plan.Spread); a pinned session keeps its account.
func TestNewSessionsSpreadOverOAuthAccounts(t *testing.T) {
	e, pins := spreadEngine(t)
	got := map[string]int{}
	for i := range 30 {
		key := fmt.Sprintf("session-%d", i)
		p, err := e.Plan(PlanInput{Model: "m", SessionKey: key})
		if err != nil || len(p.Candidates) != 5 {
			t.Fatalf("plan: %v, %d candidates", err, len(p.Candidates))
		}
		if p.Spread != 3 {
			t.Fatalf("a new session's plan spreads over %d accounts, want the 3 at priority 1", p.Spread)
		}
		first := p.Candidates[0].Conn.ID
		got[first]++
		if err := pins.Served(key, first, "claude"); err != nil {
			t.Fatal(err)
		}
		if p.Candidates[3].Conn.ID != "acct-d" || p.Candidates[4].Conn.ID != "key-e" {
			t.Fatalf("the spread reordered past the first priority: %v", ids(p.Candidates))
		}
	}
	if got["acct-a"] != 10 || got["acct-b"] != 10 || got["acct-c"] != 10 {
		t.Fatalf("30 sessions spread %v, want 10 on each of acct-a/b/c", got)
	}
	// A pinned session goes back to its account, whatever the occupancy.
	pinned, _ := pins.Pinned("session-0")
	for range 3 {
		p, _ := e.Plan(PlanInput{Model: "m", SessionKey: "session-0"})
		if p.Candidates[0].Conn.ID != pinned || p.Spread != 0 {
			t.Fatalf("pinned session moved to %s from %s (spread %d)", p.Candidates[0].Conn.ID, pinned, p.Spread)
		}
	}
	// Without a session key the order is the plain priority order.
	p, _ := e.Plan(PlanInput{Model: "m"})
	if ids(p.Candidates)[0] != "acct-a:m" || p.Spread != 0 {
		t.Fatalf("no session: %v", ids(p.Candidates))
	}
}
