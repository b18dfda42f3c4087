package routing

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/providers/registry"
	"omniroute/backend/resilience/breaker"
	"omniroute/backend/resilience/cooldown"
	"omniroute/backend/resilience/lockout"
	"omniroute/backend/routing/strategy"
	"omniroute/backend/store"
)

type nopStore struct{}

func (nopStore) SaveCooldown(string, store.CooldownFields) error { return nil }

type testPolicy struct{}

func (testPolicy) CooldownSettings(c string) cooldown.Settings { return cooldown.DefaultSettings(c) }
func (testPolicy) CooldownOptions() cooldown.Options           { return cooldown.Options{} }
func (testPolicy) ProviderCooldownEnabled() bool               { return false }
func (testPolicy) LockoutSettings() lockout.Settings           { return lockout.DefaultSettings() }
func (testPolicy) QueueMaxWait() time.Duration                 { return 30 * time.Second }

// TestTenThousandDecisionsNeverSelectAnExcludedTarget: whatever the strategy and
// whatever mix of cooldowns, open breakers and lockouts, a planned candidate is
// never one the layers exclude.
func TestTenThousandDecisionsNeverSelectAnExcludedTarget(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	reg := NewRegistry(registry.Catalog(nil))
	var rows []store.Connection
	for i := 0; i < 8; i++ {
		rows = append(rows, store.Connection{ID: fmt.Sprintf("c%d", i), Provider: "openai-compatible", Name: fmt.Sprint(i),
			BaseURL: "http://x/v1", Prefix: fmt.Sprintf("p%d", i), Priority: i, IsActive: true, Models: `["m"]`, CreatedAt: int64(i)})
	}
	if err := reg.Load(rows, plainBox{}); err != nil {
		t.Fatal(err)
	}
	combos := NewCombos()
	var targets []string
	for i := 0; i < 8; i++ {
		targets = append(targets, fmt.Sprintf(`{"model":"p%d/m","weight":%d}`, i, i%3))
	}
	var crows []store.Combo
	for i, n := range strategy.Names() {
		crows = append(crows, store.Combo{ID: fmt.Sprint(i), Name: "c-" + string(n), Strategy: string(n), Config: "{}",
			Targets: "[" + join(targets) + "]"})
	}
	combos.Load(crows)
	locks := lockout.New(clk)
	breakers := breaker.NewRegistry(clk, func(string) breaker.Profile { return breaker.DefaultProfile("apikey") }, nil)
	e := NewEngine(EngineDeps{Registry: reg, Clock: clk, Breakers: breakers, Lockouts: locks, Combos: combos,
		Store: nopStore{}, Policy: testPolicy{}})
	rng := rand.New(rand.NewPCG(7, 7))
	lk := lockout.DefaultSettings()
	lk.Enabled = true
	for i := 0; i < 10_000; i++ {
		// Perturb the world: cool, break or lock a random connection, or let time pass.
		c := reg.All()[rng.IntN(8)]
		switch rng.IntN(5) {
		case 0:
			st := c.Cooldown()
			st.RateLimitedUntil = clk.Now().Add(time.Duration(rng.IntN(5000)) * time.Millisecond)
			c.mu.Lock()
			c.cd = st
			c.mu.Unlock()
		case 1:
			for j := 0; j < 12; j++ {
				breakers.Get(c.BreakerKey).RecordFailure()
			}
		case 2:
			locks.RecordFailure(c.Provider.ID, c.ID, "m", 503, "x", "", lk, 0)
		case 3:
			clk.Advance(time.Duration(rng.IntN(3000)) * time.Millisecond)
		}
		combo := crows[rng.IntN(len(crows))].Name
		plan, err := e.Plan(PlanInput{Model: combo, SessionKey: fmt.Sprint(rng.IntN(4))})
		if err != nil {
			t.Fatal(err)
		}
		for _, cand := range plan.Candidates {
			if x := e.Check(cand); x != nil {
				t.Fatalf("decision %d (%s) selected %s excluded for %s", i, combo, cand.Key(), x.Reason)
			}
		}
		if len(plan.Candidates)+len(plan.Excluded) != 8 {
			t.Fatalf("decision %d lost targets: %d + %d", i, len(plan.Candidates), len(plan.Excluded))
		}
	}
}

func join(parts []string) string {
	out := ""
	for i, p := range parts {
		if i > 0 {
			out += ","
		}
		out += p
	}
	return out
}

// TestDryRunPlanDoesNotMoveStrategyState: explaining a round-robin combo does
// not advance its cursor.
func TestDryRunPlanDoesNotMoveStrategyState(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	reg := NewRegistry(registry.Catalog(nil))
	var rows []store.Connection
	for i := 0; i < 3; i++ {
		rows = append(rows, store.Connection{ID: fmt.Sprintf("c%d", i), Provider: "openai-compatible", Name: fmt.Sprint(i),
			BaseURL: "http://x/v1", Prefix: fmt.Sprintf("p%d", i), Priority: i, IsActive: true, Models: `["m"]`, CreatedAt: int64(i)})
	}
	if err := reg.Load(rows, plainBox{}); err != nil {
		t.Fatal(err)
	}
	combos := NewCombos()
	combos.Load([]store.Combo{{ID: "rr", Name: "rr", Strategy: "round-robin", Config: "{}",
		Targets: `[{"model":"p0/m"},{"model":"p1/m"},{"model":"p2/m"}]`}})
	e := NewEngine(EngineDeps{Registry: reg, Clock: clk, Combos: combos, Lockouts: lockout.New(clk), Store: nopStore{}, Policy: testPolicy{},
		Breakers: breaker.NewRegistry(clk, func(string) breaker.Profile { return breaker.DefaultProfile("apikey") }, nil)})
	first := func(dry bool) string {
		p, err := e.Plan(PlanInput{Model: "rr", DryRun: dry})
		if err != nil {
			t.Fatal(err)
		}
		return p.Candidates[0].Conn.ID
	}
	var got []string
	for i := 0; i < 4; i++ {
		got = append(got, first(false))
		for j := 0; j < 3; j++ {
			first(true) // explain calls in between
		}
	}
	if fmt.Sprint(got) != "[c0 c1 c2 c0]" {
		t.Fatalf("round-robin sequence with dry runs in between: %v", got)
	}
}
