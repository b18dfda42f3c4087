package server

import (
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/resilience/breaker"
	"omniroute/backend/store"
)

// TestAdoptBreakers: a transition another instance wrote later than this
// instance's own is adopted; the same transition (this instance's write coming
// back) and an older one are not.
func TestAdoptBreakers(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		rowAt     time.Time
		wantTaken int
		wantState breaker.State
	}{
		{"newer transition", t0.Add(time.Millisecond), 1, breaker.Open},
		{"same transition", t0, 0, breaker.Closed},
		{"older transition", t0.Add(-time.Millisecond), 0, breaker.Closed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clock.NewFake(t0)
			reg := breaker.NewRegistry(clk, nil, nil)
			reg.Restore([]breaker.Snapshot{{Provider: "p", State: breaker.Closed, StateChangedAt: t0}})
			row := store.BreakerRow{Provider: "p", State: string(breaker.Open), Failures: 5, OpenCycles: 1,
				OpenedAt: tt.rowAt.UnixMilli(), LastFailureAt: tt.rowAt.UnixMilli(), StateChangedAt: tt.rowAt.UnixMilli()}
			if n := adoptBreakers(reg, []store.BreakerRow{row}); n != tt.wantTaken {
				t.Fatalf("adopted %d, want %d", n, tt.wantTaken)
			}
			if got := reg.Get("p").State(); got != tt.wantState {
				t.Fatalf("state %s, want %s", got, tt.wantState)
			}
		})
	}
}
