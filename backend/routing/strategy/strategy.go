// Package strategy ranks a combo's targets: it decides the order in which the
// routing engine tries them. The engine has already removed excluded targets
// (breaker open, cooldown, lockout, lease held elsewhere) before calling Order,
// and tries the returned targets in order until one succeeds, so Order only ranks.
//
// Every decision is a function of the inputs and the caller's now. Stateful
// strategies (round-robin, fill-first, strict-random) and random ones (weighted,
// p2c, random, strict-random) keep their per-combo state and their injected,
// seeded random source in a State; there is no package-level mutable state.
//
// Tie-breaks: every ranking strategy breaks ties by Priority, then Index, then
// Key, so an order never depends on the order of the input slice. Strategies
// specified "in Index order" (round-robin, fill-first, strict-random's tail,
// weighted's fallback tail, and the base order random draws index into) use
// Index, then Key.
package strategy

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Name identifies a strategy as stored in a combo's configuration.
type Name string

// The strategies, in the order Names lists them.
const (
	Priority         Name = "priority"          // by Priority, then Index
	Weighted         Name = "weighted"          // weighted random permutation; weight 0 = fallback only
	RoundRobin       Name = "round-robin"       // rotating cursor, optionally sticky per session
	FillFirst        Name = "fill-first"        // keep the current target until it fails
	P2C              Name = "p2c"               // power of two choices on InFlight
	Random           Name = "random"            // uniformly random permutation
	StrictRandom     Name = "strict-random"     // shuffled deck: exact fairness over a deck
	LeastUsed        Name = "least-used"        // by Usage ascending
	CostOptimized    Name = "cost-optimized"    // by CostPer1M ascending, unknown last
	ResetAware       Name = "reset-aware"       // soonest future quota reset first
	ResetWindow      Name = "reset-window"      // most quota Remaining first
	LKGP             Name = "lkgp"              // last known good first
	ContextOptimized Name = "context-optimized" // largest ContextWindow first
	ContextRelay     Name = "context-relay"     // a session stays on its target; relays to the next when it is gone
	Headroom         Name = "headroom"          // most room left (quota remaining ÷ in flight) first
	QuotaWeighted    Name = "quota-weighted"    // weighted random ∝ quota remaining × weight
	Auto             Name = "auto"              // composite score of headroom, load, cost and recent success
	CacheOptimized   Name = "cache-optimized"   // rendezvous hash of the session: same session, same target
	Fusion           Name = "fusion"            // interleave providers so failover never repeats one
	Pipeline         Name = "pipeline"          // definition order exactly, as stages
)

// names is the immutable table behind Names and Valid.
var names = [...]Name{
	Priority, Weighted, RoundRobin, FillFirst, P2C, Random, StrictRandom,
	LeastUsed, CostOptimized, ResetAware, ResetWindow, LKGP, ContextOptimized,
	ContextRelay, Headroom, QuotaWeighted, Auto, CacheOptimized, Fusion, Pipeline,
}

// Names returns every strategy in declaration order (a new slice each call, so
// callers may modify it), for settings validation and UI pickers.
func Names() []Name { return slices.Clone(names[:]) }

// Valid reports whether n is a known strategy; configuration should reject
// anything else (Order treats unknown names as Priority).
func Valid(n Name) bool { return slices.Contains(names[:], n) }

// Target is one candidate of a combo with the signals the strategies rank on.
// Zero values mean "unknown" where noted and are ranked last.
type Target struct {
	Key           string    // unique per target (the caller uses "<connectionId>|<model>")
	Index         int       // position in the combo definition
	Priority      int       // lower first (priority, lkgp); the first tie-break of every ranking
	Weight        int       // weighted: probability ∝ Weight; <= 0 = fallback only, after every positive weight
	Usage         int64     // requests served in the recent window (least-used)
	InFlight      int       // requests in flight now (p2c)
	CostPer1M     float64   // USD per 1M tokens (input+output average); <= 0 or NaN = unknown (last)
	ResetAt       time.Time // when the quota window resets (upstream headers); zero or not after now = unknown
	Remaining     float64   // fraction of the quota window left, 0..1 (clamped); negative or NaN = unknown (last)
	LastGoodAt    time.Time // last success (lkgp); zero = never (last)
	ContextWindow int       // tokens (context-optimized); <= 0 = unknown (last)
	Cap           int       // quota share: the connection's concurrency cap (InFlight is then the connection's); <= 0 = none
	Provider      string    // provider identity (fusion interleaves by it); "" = its own group
}

// Options are per-call knobs.
type Options struct {
	// StickyKey is the session key; with StickyTTL > 0, round-robin keeps the
	// session on the target it was pinned to until the pin is StickyTTL old.
	StickyKey string
	// StickyTTL is the pin lifetime measured from when the pin was made (a
	// sticky hit does not extend it); 0 = not sticky.
	StickyTTL time.Duration
}

// Order returns targets in the order to try them: a new slice holding every
// input target exactly once (the input is not modified); the first element is
// the choice. st is the combo's State; it is required for the stateful and
// random strategies (weighted, round-robin, fill-first, p2c, random,
// strict-random) — with a nil st those fall back to Priority order rather than
// panic. An unknown n is ranked as Priority.
func Order(n Name, targets []Target, st *State, now time.Time, o Options) []Target {
	out := slices.Clone(targets)
	if out == nil {
		out = []Target{}
	}
	if len(out) == 0 {
		return out
	}
	switch n {
	case LeastUsed:
		rank(out, func(a, b Target) int { return cmp.Compare(a.Usage, b.Usage) })
	case CostOptimized:
		rank(out, func(a, b Target) int { return ascKnown(cost(a), cost(b)) })
	case ResetAware:
		rank(out, func(a, b Target) int { return ascKnownTime(resetAt(a, now), resetAt(b, now)) })
	case ResetWindow:
		rank(out, func(a, b Target) int { return descKnown(remaining(a), remaining(b)) })
	case LKGP:
		rank(out, func(a, b Target) int { return descKnownTime(a.LastGoodAt, b.LastGoodAt) })
	case ContextOptimized:
		rank(out, byContext)
	case Headroom:
		rank(out, func(a, b Target) int { return cmp.Compare(headroom(b), headroom(a)) })
	case Auto:
		scores := autoScores(out, now)
		rank(out, func(a, b Target) int { return cmp.Compare(scores[b.Key], scores[a.Key]) })
	case CacheOptimized:
		cacheOrder(out, o.StickyKey)
	case Fusion:
		fusion(out)
	case Pipeline:
		slices.SortStableFunc(out, byIndex)
	case Weighted, RoundRobin, FillFirst, P2C, Random, StrictRandom, QuotaWeighted, ContextRelay:
		if st == nil {
			rank(out, nil)
			break
		}
		st.order(n, out, now, o)
	default: // Priority and unknown names
		rank(out, nil)
	}
	return out
}

// LargerContext returns the targets whose ContextWindow exceeds than, largest
// first (ties by Priority, Index, Key), as a new slice. The engine uses it when
// an upstream rejects a request for context length: moving to a larger-context
// target helps, retrying the same window does not.
func LargerContext(targets []Target, than int) []Target {
	out := make([]Target, 0, len(targets))
	for _, t := range targets {
		if t.ContextWindow > than && t.ContextWindow > 0 {
			out = append(out, t)
		}
	}
	rank(out, byContext)
	return out
}

// rank sorts ts by primary (nil = no primary key), then the common tie-break.
func rank(ts []Target, primary func(a, b Target) int) {
	slices.SortStableFunc(ts, func(a, b Target) int {
		if primary != nil {
			if c := primary(a, b); c != 0 {
				return c
			}
		}
		return tieBreak(a, b)
	})
}

// tieBreak is the total order every ranking falls back to: Priority, Index, Key.
func tieBreak(a, b Target) int {
	if c := cmp.Compare(a.Priority, b.Priority); c != 0 {
		return c
	}
	return byIndex(a, b)
}

// byIndex is definition order: Index, then Key.
func byIndex(a, b Target) int {
	if c := cmp.Compare(a.Index, b.Index); c != 0 {
		return c
	}
	return cmp.Compare(a.Key, b.Key)
}

// byContext ranks ContextWindow descending with unknown (<= 0) last.
func byContext(a, b Target) int {
	return descKnown(float64(max(a.ContextWindow, 0)), float64(max(b.ContextWindow, 0)))
}

// cost is CostPer1M with anything that is not a positive number mapped to 0 (unknown).
func cost(t Target) float64 {
	if !(t.CostPer1M > 0) {
		return 0
	}
	return t.CostPer1M
}

// remaining is Remaining clamped to [0,1], or -1 when unknown (negative or NaN).
func remaining(t Target) float64 {
	switch {
	case math.IsNaN(t.Remaining) || t.Remaining < 0:
		return -1
	case t.Remaining > 1:
		return 1
	}
	return t.Remaining
}

// resetAt is ResetAt when it is strictly after now, else the zero time: a reset
// that already happened tells nothing about the current window.
func resetAt(t Target, now time.Time) time.Time {
	if t.ResetAt.After(now) {
		return t.ResetAt
	}
	return time.Time{}
}

// ascKnown orders known (> 0) values ascending, unknown (0) last.
func ascKnown(a, b float64) int {
	switch {
	case a > 0 && b > 0:
		return cmp.Compare(a, b)
	case a > 0:
		return -1
	case b > 0:
		return 1
	}
	return 0
}

// descKnown orders values descending; callers map unknown below every known
// value, so unknown sorts last.
func descKnown(a, b float64) int { return cmp.Compare(b, a) }

// ascKnownTime orders non-zero times ascending, zero last.
func ascKnownTime(a, b time.Time) int {
	switch {
	case !a.IsZero() && !b.IsZero():
		return a.Compare(b)
	case !a.IsZero():
		return -1
	case !b.IsZero():
		return 1
	}
	return 0
}

// descKnownTime orders non-zero times descending, zero last.
func descKnownTime(a, b time.Time) int {
	switch {
	case !a.IsZero() && !b.IsZero():
		return b.Compare(a)
	case !a.IsZero():
		return -1
	case !b.IsZero():
		return 1
	}
	return 0
}
