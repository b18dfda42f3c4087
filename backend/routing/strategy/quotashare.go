package strategy

import (
	"cmp"
	"slices"
)

// maxDeficits bounds the quota-share deficit table (keys come from combos).
const maxDeficits = 4096

// QuotaShare orders the targets of a quota-share combo (guide §4,
// selectQuotaShareTarget): deficit round robin with power-of-two choices.
//
// Every call is one DRR round: each target earns its share of one request
// (Weight over the total; weight <= 0 counts as 1) and the chosen target pays
// one request, so over time each target is chosen in proportion to its
// weight. The choice itself is P2C: two distinct targets drawn uniformly, and
// the better one wins — first a target below its connection's cap (InFlight <
// Cap, Cap <= 0 meaning none), then the larger deficit, then fewer InFlight,
// then the common tie-break. The others follow in the same order.
//
// It is fail-open: a target at its cap is only deprioritised, never removed —
// with a single-connection pool nothing here can enforce a hard limit; the
// connection's concurrency gate does.
func (s *State) QuotaShare(ts []Target) []Target {
	out := slices.Clone(ts)
	if len(out) == 0 {
		return out
	}
	slices.SortStableFunc(out, byIndex)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.deficit == nil || len(s.deficit) > maxDeficits {
		s.deficit = map[string]float64{}
	}
	total := 0.0
	for _, t := range out {
		total += float64(quantum(t))
	}
	for _, t := range out {
		s.deficit[t.Key] += float64(quantum(t)) / total
	}
	better := func(a, b Target) int {
		if c := cmp.Compare(atCap(a), atCap(b)); c != 0 {
			return c
		}
		if c := cmp.Compare(s.deficit[b.Key], s.deficit[a.Key]); c != 0 {
			return c
		}
		return byInFlight(a, b)
	}
	// The two choices are drawn among the targets below their cap (all of
	// them when none is: fail-open).
	slices.SortStableFunc(out, func(a, b Target) int { return cmp.Compare(atCap(a), atCap(b)) })
	pool := len(out)
	for pool > 1 && atCap(out[pool-1]) == 1 && atCap(out[0]) == 0 {
		pool--
	}
	if pool > 1 {
		i := s.rng.IntN(pool)
		j := s.rng.IntN(pool - 1)
		if j >= i {
			j++
		}
		if better(out[j], out[i]) < 0 {
			i = j
		}
		moveToFront(out, i)
	}
	slices.SortStableFunc(out[1:], better)
	s.deficit[out[0].Key]--
	return out
}

// Deficit reports a target's current quota-share deficit (for tests and explain).
func (s *State) Deficit(key string) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deficit[key]
}

func quantum(t Target) int {
	if t.Weight <= 0 {
		return 1
	}
	return t.Weight
}

// atCap is 1 for a target whose connection is at its concurrency cap.
func atCap(t Target) int {
	if t.Cap > 0 && t.InFlight >= t.Cap {
		return 1
	}
	return 0
}
