package strategy

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// minPinSweep is the pin-table size below which expired sticky pins are not swept.
const minPinSweep = 256

// State is one combo's strategy memory: the round-robin cursor, sticky session
// pins, the strict-random deck, the fill-first current target, and the seeded
// random source every random strategy draws from. It is safe for concurrent use;
// one mutex serialises the stateful strategies (the work under it is a sort of
// a handful of targets).
type State struct {
	mu  sync.Mutex
	rng *rand.Rand // not safe for concurrent use on its own; guarded by mu

	rr      cursor         // round-robin: the last non-sticky pick
	pins    map[string]pin // round-robin: StickyKey → pinned target
	relay   map[string]pin // context-relay: StickyKey → the session's target
	sweepAt int            // pins size that triggers the next sweep of expired pins

	deck    []string // strict-random: cards left to draw
	deckSet []string // strict-random: sorted keys the deck was dealt for

	fill        cursor // fill-first: the current target
	fillAdvance bool   // fill-first: the current target failed; move on at the next Order

	deficit map[string]float64 // quota share: DRR deficit per target key
}

// cursor remembers a target's definition position (Index, Key), so a successor
// can be found even when that target is absent from a later call.
type cursor struct {
	key   string
	index int
	set   bool
}

// pin is a sticky session's target and when it was pinned.
type pin struct {
	key    string
	at     time.Time
	cursor cursor // context-relay: where the session was, to find its successor
}

// NewState returns the state for one combo, drawing randomness from src so a
// seeded source makes every random order reproducible. A nil src is replaced by
// a fixed-seed PCG (still deterministic; production callers should seed per combo).
func NewState(src *rand.Rand) *State {
	if src == nil {
		src = rand.New(rand.NewPCG(0, 0))
	}
	return &State{rng: src, pins: map[string]pin{}, relay: map[string]pin{}, sweepAt: minPinSweep}
}

// Observe tells the stateful strategies about an attempt's outcome. Only
// fill-first uses it: a failure (ok == false) of the current target makes the
// next target by Index current at the next Order; a success, or a failure of a
// target that is not current (a fallback, or a duplicate report from a
// concurrent request after the move), changes nothing. lkgp keeps no state:
// the caller records successes and passes them in Target.LastGoodAt. now is
// accepted so outcome-driven decisions stay a function of their inputs; the
// current strategies do not need it. A nil State ignores observations.
func (s *State) Observe(key string, ok bool, now time.Time) {
	if s == nil || ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fill.set && s.fill.key == key {
		s.fillAdvance = true
	}
}

// order ranks ts in place for the strategies that need State.
func (s *State) order(n Name, ts []Target, now time.Time, o Options) {
	slices.SortStableFunc(ts, byIndex)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch n {
	case Weighted:
		s.weighted(ts)
	case RoundRobin:
		s.roundRobin(ts, now, o)
	case FillFirst:
		s.fillFirst(ts)
	case P2C:
		s.p2c(ts)
	case Random:
		s.rng.Shuffle(len(ts), func(i, j int) { ts[i], ts[j] = ts[j], ts[i] })
	case StrictRandom:
		s.strictRandom(ts)
	case QuotaWeighted:
		s.quotaWeighted(ts)
	case ContextRelay:
		s.contextRelay(ts, now, o)
	}
}

// weighted draws the positive-weight targets without replacement, each draw
// with probability ∝ Weight among those left, then appends the Weight <= 0
// targets in Index order: they are fallbacks, never first while a positive
// weight exists. ts arrives in Index order.
func (s *State) weighted(ts []Target) {
	pos := make([]Target, 0, len(ts))
	out := make([]Target, 0, len(ts))
	var zero []Target
	for _, t := range ts {
		if t.Weight > 0 {
			pos = append(pos, t)
		} else {
			zero = append(zero, t)
		}
	}
	for len(pos) > 0 {
		total := 0.0
		for _, t := range pos {
			total += float64(t.Weight)
		}
		r := s.rng.Float64() * total
		pick := len(pos) - 1 // guards float rounding at the top of the range
		for i, t := range pos {
			r -= float64(t.Weight)
			if r < 0 {
				pick = i
				break
			}
		}
		out = append(out, pos[pick])
		pos = slices.Delete(pos, pick, pick+1)
	}
	copy(ts, append(out, zero...))
}

// roundRobin rotates ts (in Index order) to start at the target after the last
// pick, so picks cycle through the definition order; absent targets are skipped
// without disturbing the cycle. With a StickyKey and StickyTTL > 0, a session
// whose pin is younger than StickyTTL (age < TTL) and whose pinned target is
// present starts at that target without moving the cursor; otherwise the
// session is re-pinned to this call's round-robin pick at now.
func (s *State) roundRobin(ts []Target, now time.Time, o Options) {
	sticky := o.StickyKey != "" && o.StickyTTL > 0
	if sticky {
		if p, ok := s.pins[o.StickyKey]; ok && now.Sub(p.at) < o.StickyTTL {
			if i := slices.IndexFunc(ts, func(t Target) bool { return t.Key == p.key }); i >= 0 {
				rotate(ts, i)
				return
			}
		}
	}
	i := 0
	if s.rr.set {
		i = successor(ts, s.rr, false)
	}
	s.rr = at(ts[i])
	if sticky {
		s.pin(o.StickyKey, ts[i].Key, now, o.StickyTTL)
	}
	rotate(ts, i)
}

// pin records a sticky pin, first sweeping pins older than ttl when the table
// has grown past sweepAt (amortised O(1); keeps abandoned sessions from
// accumulating).
func (s *State) pin(session, key string, now time.Time, ttl time.Duration) {
	if len(s.pins) >= s.sweepAt {
		for k, p := range s.pins {
			if now.Sub(p.at) >= ttl {
				delete(s.pins, k)
			}
		}
		s.sweepAt = max(minPinSweep, 2*len(s.pins))
	}
	s.pins[session] = pin{key: key, at: now}
}

// fillFirst puts the current target first and the rest in Index order. The
// current target starts as the first by Index; after its failure is observed
// the next by Index (wrapping) becomes current. If the current target is absent
// (the caller excluded it), the next present one by Index becomes current.
func (s *State) fillFirst(ts []Target) {
	i := 0
	if s.fill.set {
		i = successor(ts, s.fill, !s.fillAdvance)
	}
	s.fill, s.fillAdvance = at(ts[i]), false
	moveToFront(ts, i)
}

// p2c is "power of two choices": two distinct targets drawn uniformly, the one
// with fewer InFlight first (tie: Priority, Index, Key); every other target,
// the loser included, follows by InFlight, then the same tie-break.
func (s *State) p2c(ts []Target) {
	if len(ts) < 2 {
		return
	}
	i := s.rng.IntN(len(ts))
	j := s.rng.IntN(len(ts) - 1)
	if j >= i {
		j++
	}
	if byInFlight(ts[j], ts[i]) < 0 {
		i = j
	}
	moveToFront(ts, i)
	slices.SortStableFunc(ts[1:], byInFlight)
}

// byInFlight ranks fewer requests in flight first, then the common tie-break.
func byInFlight(a, b Target) int {
	if c := cmp.Compare(a.InFlight, b.InFlight); c != 0 {
		return c
	}
	return tieBreak(a, b)
}

// strictRandom draws the next card of a shuffled deck of the targets' keys and
// puts that target first, the rest in Index order. The deck is reshuffled when
// it is empty or the set of keys differs from the one it was dealt for, so over
// N full decks on a stable set each target is first exactly N times.
func (s *State) strictRandom(ts []Target) {
	keys := make([]string, len(ts))
	for i, t := range ts {
		keys[i] = t.Key
	}
	slices.Sort(keys)
	if len(s.deck) == 0 || !slices.Equal(keys, s.deckSet) {
		s.deckSet = keys
		s.deck = slices.Clone(keys)
		s.rng.Shuffle(len(s.deck), func(i, j int) { s.deck[i], s.deck[j] = s.deck[j], s.deck[i] })
	}
	card := s.deck[0]
	s.deck = s.deck[1:]
	moveToFront(ts, slices.IndexFunc(ts, func(t Target) bool { return t.Key == card }))
}

// at is the cursor for t.
func at(t Target) cursor { return cursor{key: t.Key, index: t.Index, set: true} }

// successor returns the position in ts (Index order) of the first target after
// c — or at c when inclusive — wrapping to 0 past the end.
func successor(ts []Target, c cursor, inclusive bool) int {
	for i, t := range ts {
		d := cmp.Compare(t.Index, c.index)
		if d == 0 {
			d = cmp.Compare(t.Key, c.key)
		}
		if d > 0 || (inclusive && d == 0) {
			return i
		}
	}
	return 0
}

// moveToFront moves ts[i] to the front, keeping the others' relative order.
func moveToFront(ts []Target, i int) {
	if i <= 0 {
		return
	}
	t := ts[i]
	copy(ts[1:i+1], ts[:i])
	ts[0] = t
}

// rotate makes ts[i] the first element, keeping the cyclic order.
func rotate(ts []Target, i int) {
	if i <= 0 {
		return
	}
	copy(ts, slices.Concat(ts[i:], ts[:i]))
}
