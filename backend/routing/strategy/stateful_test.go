package strategy_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"omniroute/backend/routing/strategy"
)

func TestRoundRobinCycles(t *testing.T) {
	for _, size := range []int{2, 3, 5} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			ts := abc(size)
			slices.Reverse(ts) // rotation is over Index order, not input order
			st := seeded(1)
			counts := map[string]int{}
			for call := range 10 * size {
				got := keys(strategy.Order(strategy.RoundRobin, ts, st, t0(), strategy.Options{}))
				want := keys(abc(size))
				want = append(want[call%size:], want[:call%size]...)
				if !slices.Equal(got, want) {
					t.Fatalf("call %d: %v, want %v", call, got, want)
				}
				counts[got[0]]++
			}
			for _, k := range keys(ts) {
				if counts[k] != 10 {
					t.Errorf("%s first %d times, want 10", k, counts[k])
				}
			}
		})
	}
}

// TestRoundRobinSkipsAbsent: an excluded target is skipped without disturbing
// the cycle, and the cursor survives its own target being absent.
func TestRoundRobinSkipsAbsent(t *testing.T) {
	all := abc(4)
	steps := []struct {
		targets []strategy.Target
		want    []string
	}{
		{all, []string{"a", "b", "c", "d"}},
		{without(all, "b"), []string{"c", "d", "a"}},
		{all, []string{"d", "a", "b", "c"}},
		{without(all, "d"), []string{"a", "b", "c"}},
		{without(all, "a"), []string{"b", "c", "d"}},
		{all, []string{"c", "d", "a", "b"}},
	}
	st := seeded(1)
	for i, s := range steps {
		if got := keys(strategy.Order(strategy.RoundRobin, s.targets, st, t0(), strategy.Options{})); !slices.Equal(got, s.want) {
			t.Fatalf("step %d: %v, want %v", i, got, s.want)
		}
	}
}

// TestRoundRobinSticky checks the pin boundary: the pin holds while its age is
// below StickyTTL (measured from pinning, not from the last hit) and moves on
// at and after StickyTTL.
func TestRoundRobinSticky(t *testing.T) {
	const ttl = 10 * time.Second
	sticky := strategy.Options{StickyKey: "session-1", StickyTTL: ttl}
	tests := []struct {
		name  string
		after time.Duration // since pinning
		hits  []time.Duration
		want  string // first target of the probe call
	}{
		{"immediately", 0, nil, "a"},
		{"TTL-1ms holds", ttl - time.Millisecond, nil, "a"},
		{"exactly TTL moves", ttl, nil, "c"},
		{"TTL+1ms moves", ttl + time.Millisecond, nil, "c"},
		{"hits do not extend the pin", ttl + time.Millisecond, []time.Duration{5 * time.Second, ttl - time.Millisecond}, "c"},
		{"clock behind the pin holds", -time.Second, nil, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := seeded(1)
			ts := abc(3)
			if got := keys(strategy.Order(strategy.RoundRobin, ts, st, t0(), sticky)); got[0] != "a" {
				t.Fatalf("pin call chose %v", got)
			}
			// Another caller advances the shared cursor: a → b.
			if got := keys(strategy.Order(strategy.RoundRobin, ts, st, t0(), strategy.Options{})); got[0] != "b" {
				t.Fatalf("unsticky call chose %v", got)
			}
			for _, h := range tt.hits {
				if got := keys(strategy.Order(strategy.RoundRobin, ts, st, t0().Add(h), sticky)); got[0] != "a" {
					t.Fatalf("hit at %v chose %v", h, got)
				}
			}
			got := keys(strategy.Order(strategy.RoundRobin, ts, st, t0().Add(tt.after), sticky))
			if got[0] != tt.want {
				t.Fatalf("probe at %v chose %v, want %s first", tt.after, got, tt.want)
			}
			// The rest follow in rotation from the first.
			if want := map[string][]string{"a": {"a", "b", "c"}, "c": {"c", "a", "b"}}[tt.want]; !slices.Equal(got, want) {
				t.Fatalf("probe order %v, want %v", got, want)
			}
			// After moving, the new pin holds.
			if tt.want == "c" {
				again := keys(strategy.Order(strategy.RoundRobin, ts, st, t0().Add(tt.after+ttl-time.Millisecond), sticky))
				if again[0] != "c" {
					t.Fatalf("re-pin did not hold: %v", again)
				}
			}
		})
	}
}

// TestRoundRobinStickyRepins: a pinned target missing from the call re-pins the
// session to the round-robin pick; sessions are independent; TTL 0 is not sticky.
func TestRoundRobinStickyRepins(t *testing.T) {
	ts := abc(3)
	st := seeded(1)
	s1 := strategy.Options{StickyKey: "s1", StickyTTL: time.Minute}
	s2 := strategy.Options{StickyKey: "s2", StickyTTL: time.Minute}
	steps := []struct {
		name    string
		targets []strategy.Target
		o       strategy.Options
		want    []string
	}{
		{"s1 pins a", ts, s1, []string{"a", "b", "c"}},
		{"s2 pins b", ts, s2, []string{"b", "c", "a"}},
		{"s1 holds a", ts, s1, []string{"a", "b", "c"}},
		{"s2 holds b", ts, s2, []string{"b", "c", "a"}},
		{"s1's a excluded: re-pin to c", without(ts, "a"), s1, []string{"c", "b"}},
		{"s1 now holds c even with a back", ts, s1, []string{"c", "a", "b"}},
		{"TTL 0 is not sticky", ts, strategy.Options{StickyKey: "s1"}, []string{"a", "b", "c"}},
		{"empty key is not sticky", ts, strategy.Options{StickyTTL: time.Minute}, []string{"b", "c", "a"}},
		{"s2 still holds b", ts, s2, []string{"b", "c", "a"}},
	}
	for _, s := range steps {
		if got := keys(strategy.Order(strategy.RoundRobin, s.targets, st, t0(), s.o)); !slices.Equal(got, s.want) {
			t.Fatalf("%s: %v, want %v", s.name, got, s.want)
		}
	}
}

// TestRoundRobinStickyManySessions: pins of abandoned sessions are swept, and
// fresh sessions still spread evenly over the targets.
func TestRoundRobinStickyManySessions(t *testing.T) {
	ts := abc(4)
	st := seeded(1)
	counts := map[string]int{}
	for i := range 4000 {
		now := t0().Add(time.Duration(i) * time.Second)
		o := strategy.Options{StickyKey: fmt.Sprint("session-", i), StickyTTL: time.Minute}
		counts[strategy.Order(strategy.RoundRobin, ts, st, now, o)[0].Key]++
	}
	for _, k := range keys(ts) {
		if counts[k] != 1000 {
			t.Errorf("%s pinned %d sessions, want 1000", k, counts[k])
		}
	}
	// A session pinned long ago and swept since starts over at the cursor.
	later := strategy.Order(strategy.RoundRobin, ts, st, t0().Add(5000*time.Second),
		strategy.Options{StickyKey: "session-0", StickyTTL: time.Minute})
	if later[0].Key != "a" {
		t.Fatalf("expired session chose %s, want the next round-robin pick a", later[0].Key)
	}
}

// TestFillFirst walks fill-first through successes, failures, exclusions and
// wrap-around.
func TestFillFirst(t *testing.T) {
	all := abc(3)
	type step struct {
		name    string
		observe string // key to Observe before ordering; "" = none
		ok      bool
		targets []strategy.Target
		want    []string
	}
	steps := []step{
		{"starts first by Index", "", false, all, []string{"a", "b", "c"}},
		{"keeps a while it succeeds", "a", true, all, []string{"a", "b", "c"}},
		{"failure of a non-current target changes nothing", "b", false, all, []string{"a", "b", "c"}},
		{"a fails: b becomes current, rest in Index order", "a", false, all, []string{"b", "a", "c"}},
		{"a's late duplicate failure does not skip b", "a", false, all, []string{"b", "a", "c"}},
		{"b keeps going", "b", true, all, []string{"b", "a", "c"}},
		{"b fails", "b", false, all, []string{"c", "a", "b"}},
		{"c fails: wraps to a", "c", false, all, []string{"a", "b", "c"}},
		{"current a excluded: b takes over", "", false, without(all, "a"), []string{"b", "c"}},
		{"b stays current when a returns", "", false, all, []string{"b", "a", "c"}},
		{"b fails while only b is present", "b", false, without(all, "a", "c"), []string{"b"}},
		{"b fails again with the others back: c", "b", false, all, []string{"c", "a", "b"}},
	}
	st := seeded(1)
	for _, s := range steps {
		if s.observe != "" {
			st.Observe(s.observe, s.ok, t0())
		}
		in := slices.Clone(s.targets)
		slices.Reverse(in)
		if got := keys(strategy.Order(strategy.FillFirst, in, st, t0(), strategy.Options{})); !slices.Equal(got, s.want) {
			t.Fatalf("%s: %v, want %v", s.name, got, s.want)
		}
	}
}

// TestStrictRandomExactCounts: over N full decks every target is first exactly
// N times, and each deck is a permutation.
func TestStrictRandomExactCounts(t *testing.T) {
	tests := []struct {
		size, decks int
		seed        uint64
	}{
		{2, 5000, 1},
		{3, 3333, 2},
		{7, 1000, 3},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%dx%d", tt.size, tt.decks), func(t *testing.T) {
			ts := abc(tt.size)
			st := seeded(tt.seed)
			counts := map[string]int{}
			for range tt.decks {
				seen := map[string]bool{}
				for range tt.size {
					got := keys(strategy.Order(strategy.StrictRandom, ts, st, t0(), strategy.Options{}))
					if seen[got[0]] {
						t.Fatalf("%s drawn twice in one deck", got[0])
					}
					seen[got[0]] = true
					counts[got[0]]++
					rest := slices.DeleteFunc(keys(abc(tt.size)), func(k string) bool { return k == got[0] })
					if !slices.Equal(got[1:], rest) {
						t.Fatalf("rest %v, want Index order %v", got[1:], rest)
					}
				}
			}
			for _, k := range keys(ts) {
				if counts[k] != tt.decks {
					t.Errorf("%s first %d times, want %d", k, counts[k], tt.decks)
				}
			}
		})
	}
}

// TestStrictRandomReshufflesOnSetChange: a changed target set deals a new deck
// for that set (so an absent key is never drawn) and counts stay exact per deck.
func TestStrictRandomReshufflesOnSetChange(t *testing.T) {
	st := seeded(4)
	all := abc(4)
	// Draw part of a deck, then change the set.
	strategy.Order(strategy.StrictRandom, all, st, t0(), strategy.Options{})
	strategy.Order(strategy.StrictRandom, all, st, t0(), strategy.Options{})
	sub := without(all, "b")
	counts := map[string]int{}
	for range 3 * 100 {
		got := keys(strategy.Order(strategy.StrictRandom, sub, st, t0(), strategy.Options{}))
		counts[got[0]]++
	}
	if want := map[string]int{"a": 100, "c": 100, "d": 100}; !maps.Equal(counts, want) {
		t.Fatalf("counts %v, want %v", counts, want)
	}
	// Same keys in a different slice order are the same set: no reshuffle,
	// so the deck in progress finishes exactly.
	counts = map[string]int{}
	for i := range 4 * 50 {
		in := slices.Clone(all)
		if i%2 == 1 {
			slices.Reverse(in)
		}
		counts[strategy.Order(strategy.StrictRandom, in, st, t0(), strategy.Options{})[0].Key]++
	}
	if want := map[string]int{"a": 50, "b": 50, "c": 50, "d": 50}; !maps.Equal(counts, want) {
		t.Fatalf("counts %v, want %v", counts, want)
	}
}
