package strategy_test

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"omniroute/backend/routing/strategy"
)

// TestNewStrategiesOrdering pins each added strategy's order on a fixed input
// (random ones on a seeded source, three consecutive calls on one State).
func TestNewStrategiesOrdering(t *testing.T) {
	now := t0()
	// a: 90% quota, 3 in flight; b: 10%, idle; c: unknown quota, 1 in flight;
	// d: 60%, idle, cheapest; e: 0% left.
	base := with(abc(5), func(i int, t *strategy.Target) {
		t.Remaining = []float64{0.9, 0.1, -1, 0.6, 0}[i]
		t.InFlight = []int{3, 0, 1, 0, 0}[i]
		t.CostPer1M = []float64{10, 5, 0, 1, 2}[i]
		t.Provider = []string{"openai", "openai", "glm", "anthropic", "glm"}[i]
		t.Priority = []int{0, 1, 2, 3, 4}[i]
	})
	base[1].LastGoodAt = now.Add(-time.Minute)
	base[3].LastGoodAt = now.Add(-time.Hour)
	tests := []struct {
		n    strategy.Name
		opt  strategy.Options
		want [][]string
	}{
		// headroom = remaining / (1+inFlight): a .225, b .1, c .25, d .6, e 0.
		{strategy.Headroom, strategy.Options{}, [][]string{{"d", "c", "a", "b", "e"}}},
		// auto: a .9+.25+.1 = 1.25; b .1+1+.2+1 = 2.3; c .5+.5+.5 = 1.5; d .6+1+1+.5 = 3.1; e 0+1+.5 = 1.5.
		{strategy.Auto, strategy.Options{}, [][]string{{"d", "b", "c", "e", "a"}}},
		// fusion: openai(a,b) anthropic(d) glm(c,e) by best priority: a, c, d, then b, e.
		{strategy.Fusion, strategy.Options{}, [][]string{{"a", "c", "d", "b", "e"}}},
		// pipeline: definition order whatever the priority.
		{strategy.Pipeline, strategy.Options{}, [][]string{{"a", "b", "c", "d", "e"}}},
		{strategy.QuotaWeighted, strategy.Options{}, [][]string{{"a", "d", "c", "b", "e"}, {"d", "a", "c", "b", "e"}, {"d", "a", "b", "c", "e"}}},
		{strategy.CacheOptimized, strategy.Options{StickyKey: "session-1"}, [][]string{{"a", "b", "c", "d", "e"}, {"a", "b", "c", "d", "e"}}},
		{strategy.CacheOptimized, strategy.Options{StickyKey: "session-2"}, [][]string{{"c", "b", "a", "e", "d"}, {"c", "b", "a", "e", "d"}}},
		{strategy.ContextRelay, strategy.Options{StickyKey: "s"}, [][]string{{"a", "b", "c", "d", "e"}, {"a", "b", "c", "d", "e"}}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s", tt.n, tt.opt.StickyKey), func(t *testing.T) {
			st := seeded(7)
			for i, want := range tt.want {
				got := keys(strategy.Order(tt.n, base, st, now, tt.opt))
				if !slices.Equal(got, want) {
					t.Fatalf("call %d: %v, want %v", i, got, want)
				}
			}
		})
	}
}

// TestContextRelayMovesAndStays: when the session's target drops out the
// session relays to the next by Index and stays there even after the old
// target returns; another session is not moved.
func TestContextRelayMovesAndStays(t *testing.T) {
	st := seeded(1)
	now := t0()
	all := abc(4)
	s1 := strategy.Options{StickyKey: "s1"}
	s2 := strategy.Options{StickyKey: "s2"}
	first := func(ts []strategy.Target, o strategy.Options) string {
		return strategy.Order(strategy.ContextRelay, ts, st, now, o)[0].Key
	}
	if first(all, s1) != "a" || first(all, s2) != "a" {
		t.Fatal("new sessions start at the first target")
	}
	if got := first(without(all, "a"), s1); got != "b" {
		t.Fatalf("relay: %s, want b", got)
	}
	if got := first(all, s1); got != "b" {
		t.Fatalf("after relay with a back: %s, want b (the session stays)", got)
	}
	if got := first(all, s2); got != "a" {
		t.Fatalf("other session: %s, want a", got)
	}
	if got := keys(strategy.Order(strategy.ContextRelay, all, st, now, s1)); !slices.Equal(got, []string{"b", "c", "d", "a"}) {
		t.Fatalf("relay order %v, want b c d a", got)
	}
	// The pin expires with the default relay TTL (1 h) when the combo sets none.
	now = now.Add(time.Hour)
	if got := first(all, s1); got != "a" {
		t.Fatalf("after the relay TTL: %s, want a", got)
	}
}

// TestQuotaWeightedShares: over many seeded draws the first pick follows
// quota remaining × weight; an exhausted target is never first.
func TestQuotaWeightedShares(t *testing.T) {
	ts := with(abc(3), func(i int, t *strategy.Target) {
		t.Remaining = []float64{0.75, 0.25, 0}[i]
	})
	st := seeded(3)
	counts := map[string]int{}
	for range draws {
		counts[strategy.Order(strategy.QuotaWeighted, ts, st, t0(), strategy.Options{})[0].Key]++
	}
	if counts["c"] != 0 {
		t.Fatalf("an exhausted target was first %d times", counts["c"])
	}
	if share := float64(counts["a"]) / draws; math.Abs(share-0.75) > tolerance {
		t.Fatalf("share of a %.3f, want 0.75±%.2f", share, tolerance)
	}
}

// TestCacheOptimizedStability: removing a target moves only the sessions
// that were on it.
func TestCacheOptimizedStability(t *testing.T) {
	all := abc(5)
	moved := 0
	for i := range 500 {
		o := strategy.Options{StickyKey: fmt.Sprint("session-", i)}
		before := strategy.Order(strategy.CacheOptimized, all, nil, t0(), o)[0].Key
		after := strategy.Order(strategy.CacheOptimized, without(all, "c"), nil, t0(), o)[0].Key
		if before != "c" && after != before {
			t.Fatalf("session %d moved from %s to %s though c was not its target", i, before, after)
		}
		if before == "c" {
			moved++
		}
	}
	if moved == 0 || moved == 500 {
		t.Fatalf("%d of 500 sessions were on c: hashing does not spread", moved)
	}
}

func TestEveryStrategyDescribed(t *testing.T) {
	if n := len(strategy.Names()); n != 20 {
		t.Fatalf("%d strategies, want the guide's 20", n)
	}
	for _, n := range strategy.Names() {
		if strategy.Describe(n) == "" {
			t.Errorf("%s has no description", n)
		}
	}
}
