package strategy

import (
	"cmp"
	"hash/fnv"
	"slices"
	"time"
)

// descriptions are the one-line "what it is for" of every strategy, served
// with the list so the Combos page and the API say the same thing.
var descriptions = map[Name]string{
	Priority:         "Tries the targets top to bottom; the next one only when those above fail or are excluded.",
	Weighted:         "Picks at random in proportion to each target's weight; weight 0 is a fallback used only after the others.",
	RoundRobin:       "Rotates through the targets request by request; a sticky TTL keeps a session on its target.",
	FillFirst:        "Keeps sending to the current target until it fails, then moves to the next one.",
	P2C:              "Power of two choices: of two random targets, the one with fewer requests in flight.",
	Random:           "A uniformly random order for every request.",
	StrictRandom:     "A shuffled deck: every target is used once per round, in random order.",
	LeastUsed:        "The target that served the fewest recent requests first.",
	CostOptimized:    "The cheapest target first by cost per 1M tokens; targets without a cost go last.",
	ResetAware:       "The target whose quota window resets soonest first.",
	ResetWindow:      "The target with the most quota left in its window first.",
	LKGP:             "Last known good: the target that succeeded most recently first.",
	ContextOptimized: "The largest context window first; a context-length error moves on to a larger one.",
	ContextRelay:     "A session stays on the target that took its conversation; when that target drops out the session relays to the next one and stays there.",
	Headroom:         "The target with the most room left first: quota remaining divided by requests in flight.",
	QuotaWeighted:    "Random in proportion to quota remaining × weight, so nearly exhausted accounts are rarely picked.",
	Auto:             "A composite score (quota left, load, cost, recent success) picks for you; no tuning needed.",
	CacheOptimized:   "The same session always lands on the same target (rendezvous hashing), so upstream prompt caches keep hitting.",
	Fusion:           "Interleaves providers: a failover never tries the same provider twice in a row.",
	Pipeline:         "Stages exactly in the order written (per-target priority ignored): stage 2 only when stage 1 cannot serve.",
}

// Describe is a strategy's one-line purpose ("" for unknown names).
func Describe(n Name) string { return descriptions[n] }

// unknownRemaining is the quota fraction assumed when the upstream never said.
const unknownRemaining = 0.5

// known is remaining() with unknown mapped to unknownRemaining.
func known(t Target) float64 {
	if r := remaining(t); r >= 0 {
		return r
	}
	return unknownRemaining
}

// headroom is quota remaining (unknown: one half) per request in flight.
func headroom(t Target) float64 { return known(t) / float64(1+max(t.InFlight, 0)) }

// autoScores gives every target a score in [0, 4]: quota left, inverse load,
// relative cheapness (unknown cost: one half) and recent success (within 10
// minutes: 1, ever: one half, never: 0).
func autoScores(ts []Target, now time.Time) map[string]float64 {
	cheapest := 0.0
	for _, t := range ts {
		if c := cost(t); c > 0 && (cheapest == 0 || c < cheapest) {
			cheapest = c
		}
	}
	out := make(map[string]float64, len(ts))
	for _, t := range ts {
		s := known(t) + 1/float64(1+max(t.InFlight, 0))
		if c := cost(t); c > 0 {
			s += cheapest / c
		} else {
			s += 0.5
		}
		switch {
		case t.LastGoodAt.IsZero():
		case now.Sub(t.LastGoodAt) <= 10*time.Minute:
			s++
		default:
			s += 0.5
		}
		out[t.Key] = s
	}
	return out
}

// cacheOrder ranks by rendezvous (highest random weight) hashing of the
// session key with each target's key: a session always gets the same order,
// and removing a target moves only the sessions that were on it. Without a
// session it is Priority order.
func cacheOrder(ts []Target, session string) {
	if session == "" {
		rank(ts, nil)
		return
	}
	w := make(map[string]uint64, len(ts))
	for _, t := range ts {
		h := fnv.New64a()
		_, _ = h.Write([]byte(session))
		_, _ = h.Write([]byte{0})
		_, _ = h.Write([]byte(t.Key))
		w[t.Key] = h.Sum64()
	}
	rank(ts, func(a, b Target) int { return cmp.Compare(w[b.Key], w[a.Key]) })
}

// fusion interleaves provider groups: each group in Priority order, groups
// ordered by their best target, then one target per group per round.
func fusion(ts []Target) {
	rank(ts, nil)
	var order []string
	groups := map[string][]Target{}
	for _, t := range ts {
		g := t.Provider
		if g == "" {
			g = "\x00" + t.Key
		}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], t)
	}
	out := ts[:0:0]
	for len(out) < len(ts) {
		for _, g := range order {
			if q := groups[g]; len(q) > 0 {
				out = append(out, q[0])
				groups[g] = q[1:]
			}
		}
	}
	copy(ts, out)
}

// quotaWeighted draws without replacement with probability ∝ quota remaining
// (unknown: one half) × max(Weight, 1); targets with no quota left (0) follow
// in Index order. ts arrives in Index order.
func (s *State) quotaWeighted(ts []Target) {
	var pos, empty []Target
	for _, t := range ts {
		if known(t) > 0 {
			pos = append(pos, t)
		} else {
			empty = append(empty, t)
		}
	}
	weight := func(t Target) float64 { return known(t) * float64(max(t.Weight, 1)) }
	out := make([]Target, 0, len(ts))
	for len(pos) > 0 {
		total := 0.0
		for _, t := range pos {
			total += weight(t)
		}
		r := s.rng.Float64() * total
		pick := len(pos) - 1
		for i, t := range pos {
			r -= weight(t)
			if r < 0 {
				pick = i
				break
			}
		}
		out = append(out, pos[pick])
		pos = slices.Delete(pos, pick, pick+1)
	}
	copy(ts, append(out, empty...))
}

// relayTTL bounds a context-relay session pin when the combo sets no sticky TTL.
const relayTTL = time.Hour

// contextRelay keeps a session on the target it was relayed to: that target
// first, the rest after it in Index order (wrapping). When the session's
// target is absent (excluded) the session relays to the next present target
// by Index and is re-pinned there; a new session starts at the first by
// Index. Without a session key it is Index order.
func (s *State) contextRelay(ts []Target, now time.Time, o Options) {
	if o.StickyKey == "" {
		return
	}
	ttl := o.StickyTTL
	if ttl <= 0 {
		ttl = relayTTL
	}
	i := 0
	if p, ok := s.relay[o.StickyKey]; ok && now.Sub(p.at) < ttl {
		if j := slices.IndexFunc(ts, func(t Target) bool { return t.Key == p.key }); j >= 0 {
			rotate(ts, j)
			return
		}
		i = successor(ts, p.cursor, false)
	}
	if len(s.relay) >= s.sweepAt {
		for k, p := range s.relay {
			if now.Sub(p.at) >= ttl {
				delete(s.relay, k)
			}
		}
	}
	s.relay[o.StickyKey] = pin{key: ts[i].Key, at: now, cursor: at(ts[i])}
	rotate(ts, i)
}
