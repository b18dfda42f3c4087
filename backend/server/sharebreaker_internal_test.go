package server

import (
	"testing"
	"time"

	"omniroute/backend/resilience/breaker"
	"omniroute/backend/store"
)

// stepRecorder keeps the breaker decisions handed to the database.
type stepRecorder struct {
	steps []func(store.BreakerRow) store.BreakerRow
}

func (r *stepRecorder) DecideBreaker(_ string, step func(store.BreakerRow) store.BreakerRow) {
	r.steps = append(r.steps, step)
}

// TestShareBreakerChange: what the team's row becomes for one change of an
// instance's breaker (threshold 4, DEGRADED at 3).
func TestShareBreakerChange(t *testing.T) {
	p := breaker.Profile{FailureThreshold: 4, DegradationThreshold: 3, ResetTimeout: 10 * time.Second, MaxBackoffMultiplier: 1, SuccessesToClose: 2}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := t0.Add(time.Second)
	ms := func(t time.Time) int64 { return t.UnixMilli() }
	closedRow := func(failures int) store.BreakerRow {
		return store.BreakerRow{Provider: "p", State: "CLOSED", Failures: failures, LastFailureAt: ms(t0), StateChangedAt: ms(t0.Add(-time.Hour))}
	}
	tests := []struct {
		name      string
		stored    store.BreakerRow
		snap      breaker.Snapshot
		decides   bool
		wantState string
		wantFails int
	}{
		{"another instance's 2 + this failure: 3, DEGRADED", closedRow(2),
			breaker.Snapshot{Provider: "p", State: breaker.Closed, Failures: 1, Cause: breaker.CauseFailure, At: at}, true, "DEGRADED", 3},
		{"team at threshold−1 + this failure: OPEN for all", closedRow(3),
			breaker.Snapshot{Provider: "p", State: breaker.Closed, Failures: 1, Cause: breaker.CauseFailure, At: at}, true, "OPEN", 4},
		{"local count opened it, the team's was cleared: the local OPEN is taken", closedRow(0),
			breaker.Snapshot{Provider: "p", State: breaker.Open, Failures: 4, OpenCycles: 1, OpenedAt: at, StateChangedAt: at, LastFailureAt: at,
				Cause: breaker.CauseFailure, At: at}, true, "OPEN", 4},
		{"a success clears the team's count", closedRow(3),
			breaker.Snapshot{Provider: "p", State: breaker.Closed, Cause: breaker.CauseSuccess, At: at}, true, "CLOSED", 0},
		{"a row opened later by another instance stands", store.BreakerRow{Provider: "p", State: "OPEN", Failures: 4, OpenCycles: 1,
			OpenedAt: ms(at.Add(time.Millisecond)), StateChangedAt: ms(at.Add(time.Millisecond))},
			breaker.Snapshot{Provider: "p", State: breaker.Open, Failures: 4, OpenCycles: 1, OpenedAt: at, StateChangedAt: at, Cause: breaker.CauseFailure, At: at},
			true, "OPEN", 4},
		{"a reset is written as is", store.BreakerRow{Provider: "p", State: "OPEN", Failures: 4, OpenCycles: 1, OpenedAt: ms(t0), StateChangedAt: ms(t0)},
			breaker.Snapshot{Provider: "p", State: breaker.Closed, StateChangedAt: at, Cause: breaker.CauseReset, At: at}, true, "CLOSED", 0},
		{"lazy recovery is not written", closedRow(0),
			breaker.Snapshot{Provider: "p", State: breaker.HalfOpen, Cause: breaker.CauseRecovery, At: at}, false, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &stepRecorder{}
			shareBreakerChange(r, tt.snap, p)
			if len(r.steps) != map[bool]int{true: 1, false: 0}[tt.decides] {
				t.Fatalf("%d decisions, want decides=%v", len(r.steps), tt.decides)
			}
			if !tt.decides {
				return
			}
			got := r.steps[0](tt.stored)
			if got.State != tt.wantState || got.Failures != tt.wantFails {
				t.Fatalf("row %s with %d failures (%+v), want %s with %d", got.State, got.Failures, got, tt.wantState, tt.wantFails)
			}
		})
	}
}
