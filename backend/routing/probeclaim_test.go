package routing

import (
	"errors"
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/providers/registry"
	"omniroute/backend/resilience/breaker"
	"omniroute/backend/resilience/lockout"
	"omniroute/backend/store"
)

// TestProbeClaim: a HALF_OPEN breaker's probe is sent only when the shared
// database grants it; a lost claim or a claim that cannot be recorded
// refuses the candidate as circuit_open and leaves the probe slot free; CLOSED
// breakers never ask.
func TestProbeClaim(t *testing.T) {
	tests := []struct {
		name    string
		answer  bool
		err     error
		admit   bool
		reasked bool // the next Admit asks again (the slot was released)
	}{
		{"won", true, nil, true, false},
		{"lost to another instance", false, nil, false, true},
		{"database unreachable", false, errors.New("connection refused"), false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			clk := clock.NewFake(t0)
			reg := NewRegistry(registry.Catalog(nil))
			if err := reg.Load([]store.Connection{{ID: "c", Provider: "openai-compatible", Name: "c", BaseURL: "http://x/v1",
				Prefix: "p", IsActive: true, Models: `["m1"]`}}, plainBox{}); err != nil {
				t.Fatal(err)
			}
			breakers := breaker.NewRegistry(clk, func(string) breaker.Profile { return breaker.DefaultProfile("apikey") }, nil)
			var asked []string
			var reported []error
			e := NewEngine(EngineDeps{Registry: reg, Clock: clk, Breakers: breakers, Lockouts: lockout.New(clk),
				Store: nopStore{}, Policy: scopePolicy{}, OnError: func(err error) { reported = append(reported, err) },
				ProbeClaim: func(key string) (bool, error) { asked = append(asked, key); return tt.answer, tt.err }})
			c := Candidate{Conn: reg.All()[0], Model: "m1"}

			// CLOSED: no claim asked.
			tk, x := e.Admit(c)
			if x != nil {
				t.Fatalf("closed breaker refused: %+v", *x)
			}
			tk.Abandon()
			if len(asked) != 0 {
				t.Fatalf("a CLOSED breaker asked for a probe: %v", asked)
			}
			// HALF_OPEN: the probe needs the claim.
			breakers.Restore([]breaker.Snapshot{{Provider: c.Conn.BreakerKey, State: breaker.HalfOpen, OpenCycles: 1,
				OpenedAt: t0, StateChangedAt: t0}})
			tk, x = e.Admit(c)
			if (x == nil) != tt.admit {
				t.Fatalf("admitted %v, want %v (%+v)", x == nil, tt.admit, x)
			}
			if x != nil && x.Reason != "circuit_open" {
				t.Fatalf("refused as %q, want circuit_open", x.Reason)
			}
			if len(asked) != 1 || asked[0] != c.Conn.BreakerKey {
				t.Fatalf("claims asked %v, want one for %s", asked, c.Conn.BreakerKey)
			}
			if (tt.err != nil) != (len(reported) == 1) {
				t.Fatalf("errors reported %v", reported)
			}
			_, x2 := e.Admit(c)
			if tt.reasked != (len(asked) == 2) {
				t.Fatalf("second Admit asked %d claims in all; released slot = %v", len(asked), tt.reasked)
			}
			if tt.admit && x2 == nil {
				t.Fatal("two probes out at once on one instance")
			}
			if tk != nil {
				tk.Abandon()
			}
		})
	}
}
