package strategy_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"omniroute/backend/routing/strategy"
)

// randomTargets builds 0..9 targets with random signals; with dupKeys some keys
// (and Index values) repeat, which the caller should not do but must not lose
// targets either.
func randomTargets(r *rand.Rand, now time.Time, dupKeys bool) []strategy.Target {
	n := r.IntN(10)
	ts := make([]strategy.Target, n)
	for i := range ts {
		key := fmt.Sprintf("conn-%d|model-%d", i, r.IntN(3))
		if dupKeys && r.IntN(3) == 0 {
			key = "dup"
		}
		t := strategy.Target{
			Key:           key,
			Index:         r.IntN(n + 1),
			Priority:      r.IntN(3),
			Weight:        r.IntN(4) - 1,
			Usage:         r.Int64N(5),
			InFlight:      r.IntN(3),
			CostPer1M:     float64(r.IntN(4)) * 1.5,
			Remaining:     float64(r.IntN(5))/4 - 0.25,
			ContextWindow: r.IntN(3) * 100_000,
		}
		if r.IntN(2) == 0 {
			t.ResetAt = now.Add(time.Duration(r.IntN(7)-3) * time.Minute)
		}
		if r.IntN(2) == 0 {
			t.LastGoodAt = now.Add(-time.Duration(r.IntN(5)) * time.Second)
		}
		ts[i] = t
	}
	r.Shuffle(n, func(i, j int) { ts[i], ts[j] = ts[j], ts[i] })
	return ts
}

// TestOrderIsAPermutation: for every strategy and random inputs, Order returns
// exactly the targets passed in (none added, none dropped, fields intact) and
// leaves the input untouched.
func TestOrderIsAPermutation(t *testing.T) {
	for _, n := range strategy.Names() {
		for _, dup := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/dupKeys=%v", n, dup), func(t *testing.T) {
				r := rand.New(rand.NewPCG(77, uint64(len(n))))
				st := seeded(3)
				now := t0()
				for iter := range 2000 {
					now = now.Add(time.Duration(r.IntN(4000)) * time.Millisecond)
					in := randomTargets(r, now, dup)
					orig := slices.Clone(in)
					o := strategy.Options{}
					if r.IntN(2) == 0 {
						o = strategy.Options{StickyKey: fmt.Sprint("s", r.IntN(4)), StickyTTL: time.Duration(r.IntN(3)) * time.Second}
					}
					got := strategy.Order(n, in, st, now, o)
					if !slices.Equal(in, orig) {
						t.Fatalf("iter %d: input modified", iter)
					}
					if !samePermutation(got, orig) {
						t.Fatalf("iter %d: Order = %v, not a permutation of %v", iter, keys(got), keys(orig))
					}
					if len(got) > 0 && r.IntN(2) == 0 {
						st.Observe(got[r.IntN(len(got))].Key, r.IntN(2) == 0, now)
					}
				}
			})
		}
	}
	for _, than := range []int{-1, 0, 100_000} {
		r := rand.New(rand.NewPCG(5, uint64(than+2)))
		for range 500 {
			in := randomTargets(r, t0(), false)
			for _, x := range strategy.LargerContext(in, than) {
				if x.ContextWindow <= than || !slices.ContainsFunc(in, func(t strategy.Target) bool { return t == x }) {
					t.Fatalf("LargerContext(%d) returned %+v", than, x)
				}
			}
		}
	}
}

// samePermutation reports whether a and b hold the same targets as multisets.
func samePermutation(a, b []strategy.Target) bool {
	if len(a) != len(b) {
		return false
	}
	used := make([]bool, len(b))
next:
	for _, x := range a {
		for j, y := range b {
			if !used[j] && x == y {
				used[j] = true
				continue next
			}
		}
		return false
	}
	return true
}

// TestConcurrentOrderObserve hammers one State from many goroutines with every
// strategy (run under -race).
func TestConcurrentOrderObserve(t *testing.T) {
	st := seeded(99)
	ts := with(abc(5), func(i int, t *strategy.Target) { t.Weight = i; t.InFlight = i % 2 })
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				n := strategy.Names()[(g+i)%len(strategy.Names())]
				now := t0().Add(time.Duration(i) * time.Millisecond)
				o := strategy.Options{StickyKey: fmt.Sprint("s", i%3), StickyTTL: 50 * time.Millisecond}
				got := strategy.Order(n, ts[:1+(g+i)%5], st, now, o)
				if len(got) != 1+(g+i)%5 {
					t.Errorf("Order(%s) returned %d targets", n, len(got))
					return
				}
				st.Observe(got[0].Key, i%4 != 0, now)
			}
		})
	}
	wg.Wait()
}
