package routing

import (
	"fmt"
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/providers/registry"
	"omniroute/backend/resilience/breaker"
	"omniroute/backend/resilience/lockout"
	"omniroute/backend/resilience/verdict"
	"omniroute/backend/store"
)

// BenchmarkPlan: planning one request, for a model one connection serves
// (the common case) and for a four-target combo. Figures are printed, never
// asserted (go test -run='^$' -bench=Plan -benchmem ./backend/routing).
func BenchmarkPlan(b *testing.B) {
	e := benchEngine(b)
	for _, model := range []string{"p0/gpt-4o-mini", "four"} {
		b.Run(model, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := e.Plan(PlanInput{Model: model})
				if err != nil || len(p.Candidates) == 0 {
					b.Fatalf("plan %q: %v %+v", model, err, p)
				}
			}
		})
	}
}

// BenchmarkAdmitFinish: one attempt's passage through the layers, from the
// ticket to a successful verdict (the per-attempt bookkeeping of every request).
func BenchmarkAdmitFinish(b *testing.B) {
	e := benchEngine(b)
	p, err := e.Plan(PlanInput{Model: "p0/gpt-4o-mini"})
	if err != nil {
		b.Fatal(err)
	}
	cand := p.Candidates[0]
	b.ReportAllocs()
	for b.Loop() {
		t, x := e.Admit(cand)
		if x != nil {
			b.Fatalf("refused: %+v", x)
		}
		t.Finish(verdict.Verdict{Kind: verdict.KindSuccess, Status: 200})
	}
}

// benchEngine is an engine over four connections serving gpt-4o-mini (p0…p3)
// and a four-target combo of them ("four").
func benchEngine(b testing.TB) *Engine {
	return benchEngineOn(b, clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
}

// benchEngineOn is benchEngine reading time from clk.
func benchEngineOn(b testing.TB, clk clock.Clock) *Engine {
	reg := NewRegistry(registry.Catalog(nil))
	var rows []store.Connection
	for i := range 4 {
		rows = append(rows, store.Connection{ID: fmt.Sprintf("c%d", i), Provider: "openai-compatible", Name: fmt.Sprint(i),
			BaseURL: "http://x/v1", Prefix: fmt.Sprintf("p%d", i), Priority: i, IsActive: true, Models: `["gpt-4o-mini"]`, CreatedAt: int64(i)})
	}
	if err := reg.Load(rows, plainBox{}); err != nil {
		b.Fatal(err)
	}
	combos := NewCombos()
	combos.Load([]store.Combo{{ID: "1", Name: "four", Strategy: "priority", Config: "{}",
		Targets: `[{"model":"p0/gpt-4o-mini"},{"model":"p1/gpt-4o-mini"},{"model":"p2/gpt-4o-mini"},{"model":"p3/gpt-4o-mini"}]`}})
	breakers := breaker.NewRegistry(clk, func(string) breaker.Profile { return breaker.DefaultProfile("apikey") }, nil)
	return NewEngine(EngineDeps{Registry: reg, Clock: clk, Breakers: breakers, Lockouts: lockout.New(clk), Combos: combos,
		Store: nopStore{}, Policy: testPolicy{}})
}
