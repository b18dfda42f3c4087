package strategy_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"omniroute/backend/routing/strategy"
)

// draws is the sample size of the distribution tests; tolerance is the allowed
// absolute deviation of an observed share (±3 percentage points).
const (
	draws     = 10_000
	tolerance = 0.03
)

// mixed is five targets with weights 5,1,0,3,1 and in-flight 2,0,1,0,4.
func mixed() []strategy.Target {
	return with(abc(5), func(i int, t *strategy.Target) {
		t.Weight = []int{5, 1, 0, 3, 1}[i]
		t.InFlight = []int{2, 0, 1, 0, 4}[i]
	})
}

// TestSeededOrders pins the exact orders of the random strategies for fixed
// seeds (three consecutive calls on one State), so a change in how randomness
// is consumed is caught.
func TestSeededOrders(t *testing.T) {
	tests := []struct {
		n    strategy.Name
		seed uint64
		want [][]string
	}{
		{strategy.Weighted, 1, [][]string{{"a", "e", "d", "b", "c"}, {"a", "e", "d", "b", "c"}, {"b", "a", "d", "e", "c"}}},
		{strategy.Weighted, 42, [][]string{{"a", "d", "e", "b", "c"}, {"a", "b", "d", "e", "c"}, {"d", "b", "a", "e", "c"}}},
		{strategy.P2C, 1, [][]string{{"d", "b", "c", "a", "e"}, {"a", "b", "d", "c", "e"}, {"b", "d", "c", "a", "e"}}},
		{strategy.P2C, 42, [][]string{{"d", "b", "c", "a", "e"}, {"d", "b", "c", "a", "e"}, {"b", "d", "c", "a", "e"}}},
		{strategy.Random, 1, [][]string{{"b", "a", "c", "d", "e"}, {"a", "e", "d", "c", "b"}, {"e", "d", "b", "a", "c"}}},
		{strategy.Random, 42, [][]string{{"c", "a", "b", "e", "d"}, {"c", "d", "a", "b", "e"}, {"c", "d", "a", "b", "e"}}},
		{strategy.StrictRandom, 1, [][]string{{"b", "a", "c", "d", "e"}, {"a", "b", "c", "d", "e"}, {"c", "a", "b", "d", "e"}}},
		{strategy.StrictRandom, 42, [][]string{{"c", "a", "b", "d", "e"}, {"a", "b", "c", "d", "e"}, {"b", "a", "c", "d", "e"}}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/seed=%d", tt.n, tt.seed), func(t *testing.T) {
			st := seeded(tt.seed)
			// Reversed input: the result must not depend on the caller's slice order.
			in := mixed()
			slices.Reverse(in)
			for i, want := range tt.want {
				if got := keys(strategy.Order(tt.n, in, st, t0(), strategy.Options{})); !slices.Equal(got, want) {
					t.Fatalf("call %d: Order = %v, want %v", i, got, want)
				}
			}
		})
	}
}

// shares is, over draws calls, the fraction of calls each key lands at each
// position: shares[pos][key].
func shares(n strategy.Name, ts []strategy.Target, seed uint64) map[int]map[string]float64 {
	st := seeded(seed)
	counts := map[int]map[string]int{}
	for range draws {
		for pos, t := range strategy.Order(n, ts, st, t0(), strategy.Options{}) {
			if counts[pos] == nil {
				counts[pos] = map[string]int{}
			}
			counts[pos][t.Key]++
		}
	}
	out := map[int]map[string]float64{}
	for pos, m := range counts {
		out[pos] = map[string]float64{}
		for k, c := range m {
			out[pos][k] = float64(c) / draws
		}
	}
	return out
}

// near fails t when got deviates from want by more than tolerance.
func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > tolerance {
		t.Errorf("%s = %.4f, want %.4f ± %.2f", what, got, want, tolerance)
	}
}

func TestWeightedDistribution(t *testing.T) {
	tests := []struct {
		name      string
		weights   []int
		wantFirst map[string]float64
		wantLast  string // "" = not checked
	}{
		{"1:3:6 with a fallback", []int{1, 3, 6, 0}, map[string]float64{"a": .1, "b": .3, "c": .6, "d": 0}, "d"},
		{"equal weights", []int{2, 2, 2, 2}, map[string]float64{"a": .25, "b": .25, "c": .25, "d": .25}, ""},
		{"single positive weight beats fallbacks", []int{0, 0, 7, 0}, map[string]float64{"c": 1}, "d"},
		{"negative weight is fallback", []int{-5, 1, 1, 0}, map[string]float64{"a": 0, "b": .5, "c": .5, "d": 0}, "d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := with(abc(len(tt.weights)), func(i int, t *strategy.Target) { t.Weight = tt.weights[i] })
			sh := shares(strategy.Weighted, ts, 11)
			for k, want := range tt.wantFirst {
				near(t, "share of "+k+" first", sh[0][k], want)
				if want == 0 && sh[0][k] != 0 {
					t.Errorf("fallback %s was first %.4f of the time", k, sh[0][k])
				}
			}
			if tt.wantLast != "" && sh[len(ts)-1][tt.wantLast] != 1 {
				t.Errorf("%s last %.4f of the time, want always", tt.wantLast, sh[len(ts)-1][tt.wantLast])
			}
		})
	}

	// Without replacement: P(b second) = P(a first)·3/9 + P(c first)·3/4 = 0.48333.
	ts := with(abc(3), func(i int, t *strategy.Target) { t.Weight = []int{1, 3, 6}[i] })
	near(t, "share of b second", shares(strategy.Weighted, ts, 12)[1]["b"], 0.1*3.0/9+0.6*3.0/4)

	// All fallbacks: Index order, every time.
	zero := abc(4)
	slices.Reverse(zero)
	st := seeded(3)
	for range 100 {
		if got := keys(strategy.Order(strategy.Weighted, zero, st, t0(), strategy.Options{})); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
			t.Fatalf("all weight 0: %v, want Index order", got)
		}
	}
}

// TestWeightedFallbacksInIndexOrder: the weight-0 tail keeps Index order however
// the positive head was drawn.
func TestWeightedFallbacksInIndexOrder(t *testing.T) {
	ts := with(abc(6), func(i int, t *strategy.Target) { t.Weight = []int{0, 4, 0, 1, 0, 2}[i] })
	slices.Reverse(ts)
	st := seeded(5)
	for range 1000 {
		got := keys(strategy.Order(strategy.Weighted, ts, st, t0(), strategy.Options{}))
		if !slices.Equal(got[3:], []string{"a", "c", "e"}) {
			t.Fatalf("tail = %v, want [a c e]", got[3:])
		}
	}
}

func TestRandomUniform(t *testing.T) {
	for _, size := range []int{2, 4, 5} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			ts := abc(size)
			sh := shares(strategy.Random, ts, uint64(size))
			for pos := range size {
				for _, k := range keys(ts) {
					near(t, fmt.Sprintf("share of %s at %d", k, pos), sh[pos][k], 1/float64(size))
				}
			}
		})
	}
}

// TestP2CDistribution: with distinct InFlight, the target first is the less
// loaded of a uniformly drawn pair, so with 4 targets ranked 0..3 by load the
// shares are 3/6, 2/6, 1/6, 0; the rest always follow by InFlight, Index.
func TestP2CDistribution(t *testing.T) {
	ts := with(abc(4), func(i int, t *strategy.Target) { t.InFlight = []int{5, 0, 9, 2}[i] })
	st := seeded(9)
	first := map[string]int{}
	for range draws {
		got := strategy.Order(strategy.P2C, ts, st, t0(), strategy.Options{})
		first[got[0].Key]++
		if !slices.IsSortedFunc(got[1:], func(a, b strategy.Target) int { return a.InFlight - b.InFlight }) {
			t.Fatalf("rest not by InFlight: %v", keys(got))
		}
	}
	for k, want := range map[string]float64{"b": 3.0 / 6, "d": 2.0 / 6, "a": 1.0 / 6, "c": 0} {
		near(t, "share of "+k+" first", float64(first[k])/draws, want)
	}
	if first["c"] != 0 {
		t.Errorf("the most loaded target was first %d times", first["c"])
	}
}

// TestP2CTies: equal InFlight inside the pair and in the rest break by
// Priority, then Index.
func TestP2CTies(t *testing.T) {
	tests := []struct {
		name    string
		targets []strategy.Target
		want    []string // whole order; the pair is forced by having 2 targets
	}{
		{"tie on InFlight goes to lower Index", with(abc(2), func(i int, t *strategy.Target) { t.InFlight = 3 }), []string{"a", "b"}},
		{"tie breaks by Priority before Index", with(abc(2), func(i int, t *strategy.Target) { t.Priority = 1 - i }), []string{"b", "a"}},
		{"fewer in flight wins", with(abc(2), func(i int, t *strategy.Target) { t.InFlight = 1 - i }), []string{"b", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := seeded(1)
			for range 50 {
				if got := keys(strategy.Order(strategy.P2C, tt.targets, st, t0(), strategy.Options{})); !slices.Equal(got, tt.want) {
					t.Fatalf("Order = %v, want %v", got, tt.want)
				}
			}
		})
	}
}
