package strategy_test

import (
	"math/rand/v2"
	"time"

	"omniroute/backend/routing/strategy"
)

// t0 is the fixed instant tests decide at.
func t0() time.Time { return time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC) }

// seeded returns a State over a PCG seeded with seed.
func seeded(seed uint64) *strategy.State {
	return strategy.NewState(rand.New(rand.NewPCG(seed, seed)))
}

// keys lists the targets' keys in order.
func keys(ts []strategy.Target) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Key
	}
	return out
}

// abc returns n targets keyed "a", "b", ... with Index 0..n-1.
func abc(n int) []strategy.Target {
	ts := make([]strategy.Target, n)
	for i := range ts {
		ts[i] = strategy.Target{Key: string(rune('a' + i)), Index: i}
	}
	return ts
}

// with returns a copy of ts with f applied to each target.
func with(ts []strategy.Target, f func(i int, t *strategy.Target)) []strategy.Target {
	out := make([]strategy.Target, len(ts))
	copy(out, ts)
	for i := range out {
		f(i, &out[i])
	}
	return out
}

// without returns ts minus the targets with the given keys.
func without(ts []strategy.Target, drop ...string) []strategy.Target {
	var out []strategy.Target
next:
	for _, t := range ts {
		for _, d := range drop {
			if t.Key == d {
				continue next
			}
		}
		out = append(out, t)
	}
	return out
}
