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

// TestFinishOpensTheBreakerForTheFailureKind: an attempt's verdict kind
// reaches the provider breaker, whose OPEN hold is that kind's
// (breaker.Profile.OpenByKind; resetTimeout for a kind without one).
func TestFinishOpensTheBreakerForTheFailureKind(t *testing.T) {
	tests := []struct {
		kind     verdict.Kind
		wantKind breaker.FailureKind
		wantHold time.Duration
	}{
		{verdict.KindServer, breaker.FailureServer, 9 * time.Second},
		{verdict.KindTransport, breaker.FailureTransport, 4 * time.Second},
		{verdict.KindTimeout, breaker.FailureTimeout, 30 * time.Second}, // unset: resetTimeout
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			reg := NewRegistry(registry.Catalog(nil))
			rows := []store.Connection{{ID: "c0", Provider: "openai-compatible", Name: "0", BaseURL: "http://x/v1",
				Prefix: "p0", IsActive: true, Models: `["gpt-4o-mini"]`}}
			if err := reg.Load(rows, plainBox{}); err != nil {
				t.Fatal(err)
			}
			prof := breaker.DefaultProfile("apikey")
			prof.FailureThreshold = 1
			prof.OpenByKind = breaker.KindHolds{Server: 9 * time.Second, Transport: 4 * time.Second}
			breakers := breaker.NewRegistry(clk, func(string) breaker.Profile { return prof }, nil)
			e := NewEngine(EngineDeps{Registry: reg, Clock: clk, Breakers: breakers, Lockouts: lockout.New(clk),
				Combos: NewCombos(), Store: nopStore{}, Policy: testPolicy{}})
			p, err := e.Plan(PlanInput{Model: "p0/gpt-4o-mini"})
			if err != nil {
				t.Fatal(err)
			}
			cand := p.Candidates[0]
			tk, x := e.Admit(cand)
			if x != nil {
				t.Fatalf("refused: %+v", x)
			}
			tk.Finish(verdict.Verdict{Kind: tt.kind, Status: 503, Message: fmt.Sprint(tt.kind), CountsForBreaker: true})
			s := breakers.Get(cand.Conn.BreakerKey).Status()
			if s.State != breaker.Open || s.LastFailureKind != tt.wantKind || s.RetryAfter != tt.wantHold {
				t.Fatalf("breaker after one %s failure: %s, kind %q, RetryAfter %v; want OPEN, %q, %v",
					tt.kind, s.State, s.LastFailureKind, s.RetryAfter, tt.wantKind, tt.wantHold)
			}
		})
	}
}
