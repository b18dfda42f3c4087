package lockout

import (
	"fmt"
	"testing"
	"time"

	"omniroute/backend/clock"
)

// TestSweepKeepsMapBounded checks the lazy cleanup: dead entries (escalation
// window closed) leave the map on the next write or List; expired entries whose
// window is still open stay (unlisted) for escalation.
func TestSweepKeepsMapBounded(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	s := DefaultSettings()
	window := s.BaseCooldown + s.MaxCooldown // lock + escalation window
	tests := []struct {
		name   string
		at     time.Duration // when the sweeping operation runs, from t0
		op     func(tab *Table)
		remain int // entries in the map afterwards (besides any the op wrote)
	}{
		{"List inside window keeps dormant", s.BaseCooldown, func(tab *Table) { tab.List() }, 100},
		{"List at window end sweeps", window, func(tab *Table) { tab.List() }, 0},
		{"write window -1ms keeps", window - time.Millisecond, func(tab *Table) { tab.RecordFailure("x", "y", "z", 500, "", "", s, 0) }, 101},
		{"write at window end sweeps", window, func(tab *Table) { tab.RecordFailure("x", "y", "z", 500, "", "", s, 0) }, 1},
		{"LockFor sweeps", window, func(tab *Table) { tab.LockFor("x", "y", "z", time.Minute, "") }, 1},
		{"Decay sweeps", window, func(tab *Table) { tab.Decay("x", "y", "z") }, 0},
		{"Clear sweeps", window, func(tab *Table) { tab.Clear("x", "y", "z") }, 0},
		{"Locked never writes", window, func(tab *Table) { tab.Locked("p", "c", "m0") }, 100},
		{"Count never writes", window, func(tab *Table) { tab.Count() }, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clock.NewFake(t0)
			tab := New(clk)
			for i := 0; i < 100; i++ {
				tab.RecordFailure("p", "c", fmt.Sprintf("m%d", i), 500, "", "", s, 0)
			}
			if len(tab.entries) != 100 {
				t.Fatalf("seeded %d entries", len(tab.entries))
			}
			clk.Set(t0.Add(tt.at))
			tt.op(tab)
			if len(tab.entries) != tt.remain {
				t.Fatalf("map holds %d entries, want %d", len(tab.entries), tt.remain)
			}
			if len(tab.entries) > 0 && (tab.nextSweep.IsZero() || nextSweepTooLate(tab)) {
				t.Fatalf("nextSweep %v breaks its invariant", tab.nextSweep)
			}
		})
	}
}

// nextSweepTooLate reports whether nextSweep is after some entry's window end.
func nextSweepTooLate(tab *Table) bool {
	for _, r := range tab.entries {
		if r.windowEnd.Before(tab.nextSweep) {
			return true
		}
	}
	return false
}

func TestKeyString(t *testing.T) {
	tests := []struct {
		k    key
		want string
	}{
		{key{"acme", "c1", ScopeExact, "big-1"}, "acme:c1:exact:big-1"},
		{key{"acme", "c1", ScopeModel, "big-1"}, "acme:c1:big-1"},
		{key{"acme", "c1", ScopeQuotaFamily, "big"}, "acme:c1:family:big"},
	}
	for _, tt := range tests {
		if got := tt.k.String(); got != tt.want {
			t.Errorf("key %+v = %q, want %q", tt.k, got, tt.want)
		}
	}
}

func TestKeysDoNotCollide(t *testing.T) {
	// "a:b" + "c" and "a" + "b:c" render the same string but are distinct keys.
	clk := clock.NewFake(time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC))
	tab := New(clk)
	tab.RecordFailure("a:b", "c", "m", 500, "", "", DefaultSettings(), 0)
	if _, ok := tab.Locked("a", "b:c", "m"); ok {
		t.Fatal("colliding rendered keys shared a lock")
	}
}
