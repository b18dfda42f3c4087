package strategy_test

import (
	"math"
	"slices"
	"testing"
	"time"

	"omniroute/backend/routing/strategy"
)

func TestNamesAndValid(t *testing.T) {
	want := []strategy.Name{"priority", "weighted", "round-robin", "fill-first", "p2c", "random",
		"strict-random", "least-used", "cost-optimized", "reset-aware", "reset-window", "lkgp", "context-optimized",
		"context-relay", "headroom", "quota-weighted", "auto", "cache-optimized", "fusion", "pipeline"}
	if got := strategy.Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	mod := strategy.Names()
	mod[0] = "bogus"
	if strategy.Names()[0] != strategy.Priority {
		t.Fatal("Names() shares its backing array with callers")
	}
	tests := []struct {
		name strategy.Name
		want bool
	}{
		{strategy.Priority, true},
		{strategy.ContextOptimized, true},
		{strategy.StrictRandom, true},
		{"", false},
		{"Priority", false},
		{"round_robin", false},
	}
	for _, tt := range tests {
		if got := strategy.Valid(tt.name); got != tt.want {
			t.Errorf("Valid(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestDeterministicOrders covers the strategies that are a pure function of
// the targets and now, including tie-breaks and unknown values.
func TestDeterministicOrders(t *testing.T) {
	now := t0()
	// Input deliberately not in Index order.
	in := func(spec ...strategy.Target) []strategy.Target { return spec }
	tests := []struct {
		name    string
		n       strategy.Name
		targets []strategy.Target
		want    []string
	}{
		{"priority by Priority then Index", strategy.Priority, in(
			strategy.Target{Key: "c", Index: 2, Priority: 1},
			strategy.Target{Key: "a", Index: 0, Priority: 2},
			strategy.Target{Key: "b", Index: 1, Priority: 1},
			strategy.Target{Key: "d", Index: 3, Priority: 0},
		), []string{"d", "b", "c", "a"}},
		{"priority ties on Index break by Key", strategy.Priority, in(
			strategy.Target{Key: "y", Index: 0},
			strategy.Target{Key: "x", Index: 0},
		), []string{"x", "y"}},
		{"unknown name ranks as priority", "no-such-strategy", in(
			strategy.Target{Key: "b", Index: 1, Priority: 0},
			strategy.Target{Key: "a", Index: 0, Priority: 5},
		), []string{"b", "a"}},
		{"least-used ascending, ties by Priority then Index", strategy.LeastUsed, in(
			strategy.Target{Key: "a", Index: 0, Usage: 9},
			strategy.Target{Key: "b", Index: 1, Usage: 3},
			strategy.Target{Key: "c", Index: 2, Usage: 3},
			strategy.Target{Key: "d", Index: 3, Usage: 3, Priority: -1},
			strategy.Target{Key: "e", Index: 4, Usage: 0},
		), []string{"e", "d", "b", "c", "a"}},
		{"cost ascending, unknown last", strategy.CostOptimized, in(
			strategy.Target{Key: "a", Index: 0, CostPer1M: 0},
			strategy.Target{Key: "b", Index: 1, CostPer1M: 15},
			strategy.Target{Key: "c", Index: 2, CostPer1M: 0.5},
			strategy.Target{Key: "d", Index: 3, CostPer1M: 3},
			strategy.Target{Key: "e", Index: 4, CostPer1M: 0.5},
			strategy.Target{Key: "f", Index: 5, CostPer1M: -1},
			strategy.Target{Key: "g", Index: 6, CostPer1M: math.NaN()},
		), []string{"c", "e", "d", "b", "a", "f", "g"}},
		{"reset-aware soonest future reset first; past, now and zero are unknown", strategy.ResetAware, in(
			strategy.Target{Key: "a", Index: 0, ResetAt: now.Add(10 * time.Minute)},
			strategy.Target{Key: "b", Index: 1},
			strategy.Target{Key: "c", Index: 2, ResetAt: now.Add(-time.Minute)},
			strategy.Target{Key: "d", Index: 3, ResetAt: now.Add(time.Minute)},
			strategy.Target{Key: "e", Index: 4, ResetAt: now},
			strategy.Target{Key: "f", Index: 5, ResetAt: now.Add(time.Nanosecond)},
		), []string{"f", "d", "a", "b", "c", "e"}},
		{"reset-window most headroom first, unknown last, clamped to 1", strategy.ResetWindow, in(
			strategy.Target{Key: "a", Index: 0, Remaining: 0.2},
			strategy.Target{Key: "b", Index: 1, Remaining: -1},
			strategy.Target{Key: "c", Index: 2, Remaining: 0.9},
			strategy.Target{Key: "d", Index: 3, Remaining: 0},
			strategy.Target{Key: "e", Index: 4, Remaining: 1.5},
			strategy.Target{Key: "f", Index: 5, Remaining: 1},
			strategy.Target{Key: "g", Index: 6, Remaining: math.NaN()},
		), []string{"e", "f", "c", "a", "d", "b", "g"}},
		{"lkgp latest success first, never last, then Priority, Index", strategy.LKGP, in(
			strategy.Target{Key: "a", Index: 0, Priority: 0},
			strategy.Target{Key: "b", Index: 1, LastGoodAt: now.Add(-time.Hour)},
			strategy.Target{Key: "c", Index: 2, LastGoodAt: now.Add(-time.Second)},
			strategy.Target{Key: "d", Index: 3, Priority: -1},
			strategy.Target{Key: "e", Index: 4, LastGoodAt: now.Add(-time.Second), Priority: -1},
		), []string{"e", "c", "b", "d", "a"}},
		{"context-optimized largest first, unknown last", strategy.ContextOptimized, in(
			strategy.Target{Key: "a", Index: 0, ContextWindow: 128_000},
			strategy.Target{Key: "b", Index: 1},
			strategy.Target{Key: "c", Index: 2, ContextWindow: 1_000_000},
			strategy.Target{Key: "d", Index: 3, ContextWindow: 200_000},
			strategy.Target{Key: "e", Index: 4, ContextWindow: 128_000},
			strategy.Target{Key: "f", Index: 5, ContextWindow: -5},
		), []string{"c", "d", "a", "e", "b", "f"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := slices.Clone(tt.targets)
			got := strategy.Order(tt.n, tt.targets, nil, now, strategy.Options{})
			if !slices.Equal(keys(got), tt.want) {
				t.Fatalf("Order(%s) = %v, want %v", tt.n, keys(got), tt.want)
			}
			if !slices.Equal(keys(tt.targets), keys(orig)) {
				t.Fatalf("input modified: %v, was %v", keys(tt.targets), keys(orig))
			}
			// Same answer from a State, and whatever the input order.
			rev := slices.Clone(tt.targets)
			slices.Reverse(rev)
			if got := strategy.Order(tt.n, rev, seeded(1), now, strategy.Options{}); !slices.Equal(keys(got), tt.want) {
				t.Fatalf("Order(%s, reversed input) = %v, want %v", tt.n, keys(got), tt.want)
			}
		})
	}
}

func TestLargerContext(t *testing.T) {
	ts := []strategy.Target{
		{Key: "small", Index: 0, ContextWindow: 32_000},
		{Key: "unknown", Index: 1},
		{Key: "big", Index: 2, ContextWindow: 1_000_000},
		{Key: "mid", Index: 3, ContextWindow: 200_000},
		{Key: "mid2", Index: 4, ContextWindow: 200_000},
		{Key: "equal", Index: 5, ContextWindow: 128_000},
	}
	tests := []struct {
		name string
		than int
		want []string
	}{
		{"strictly larger only", 128_000, []string{"big", "mid", "mid2"}},
		{"nothing larger", 1_000_000, []string{}},
		{"unknown never counts as larger", -1, []string{"big", "mid", "mid2", "equal", "small"}},
		{"zero threshold", 0, []string{"big", "mid", "mid2", "equal", "small"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strategy.LargerContext(ts, tt.than)
			if got == nil || !slices.Equal(keys(got), tt.want) {
				t.Fatalf("LargerContext(%d) = %v, want %v", tt.than, keys(got), tt.want)
			}
		})
	}
	if got := strategy.LargerContext(nil, 0); got == nil || len(got) != 0 {
		t.Fatalf("LargerContext(nil) = %#v, want empty", got)
	}
}

// TestEmptyAndSingle runs every strategy with no targets and with one.
func TestEmptyAndSingle(t *testing.T) {
	one := []strategy.Target{{Key: "only", Index: 3, Weight: 0}}
	for _, n := range strategy.Names() {
		for _, st := range []*strategy.State{nil, seeded(7)} {
			t.Run(string(n), func(t *testing.T) {
				for _, in := range [][]strategy.Target{nil, {}} {
					got := strategy.Order(n, in, st, t0(), strategy.Options{StickyKey: "s", StickyTTL: time.Minute})
					if got == nil || len(got) != 0 {
						t.Fatalf("Order(%s, %v) = %#v, want empty non-nil", n, in, got)
					}
				}
				for range 3 {
					got := strategy.Order(n, one, st, t0(), strategy.Options{StickyKey: "s", StickyTTL: time.Minute})
					if !slices.Equal(keys(got), []string{"only"}) {
						t.Fatalf("Order(%s, one) = %v", n, keys(got))
					}
					got[0].Key = "changed"
					if one[0].Key != "only" {
						t.Fatal("Order returned the input's backing array")
					}
					st.Observe("only", false, t0())
				}
			})
		}
	}
}

// TestNilStateFallsBackToPriority: the stateful strategies need a State; without
// one they rank by Priority instead of panicking.
func TestNilStateFallsBackToPriority(t *testing.T) {
	ts := with(abc(4), func(i int, t *strategy.Target) { t.Priority = 4 - i; t.Weight = 1 })
	for _, n := range []strategy.Name{strategy.Weighted, strategy.RoundRobin, strategy.FillFirst,
		strategy.P2C, strategy.Random, strategy.StrictRandom} {
		got := strategy.Order(n, ts, nil, t0(), strategy.Options{})
		if want := []string{"d", "c", "b", "a"}; !slices.Equal(keys(got), want) {
			t.Errorf("Order(%s, nil state) = %v, want %v", n, keys(got), want)
		}
	}
}
