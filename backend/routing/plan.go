package routing

import (
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	"omniroute/backend/errs"
	"omniroute/backend/resilience/verdict"
	"omniroute/backend/routing/strategy"
)

// LeaseView tells routing which connections are held by an exclusive lease.
type LeaseView interface {
	// HeldBy returns the owner hash and expiry of the active lease on a connection.
	HeldBy(connectionID string) (ownerHash string, expiresAt time.Time, ok bool)
}

// PinView is the session affinity layer as routing sees it.
type PinView interface {
	// Pinned returns the connection a session is pinned to, if the pin is live.
	Pinned(sessionKey string) (connectionID string, ok bool)
	// Occupancy is the number of sessions pinned to a connection.
	Occupancy(connectionID string) int
}

// PlanInput is what routing needs to know about one request.
type PlanInput struct {
	Model  string
	Access Access
	// SessionKey is the affinity key (X-Session-Id …); "" for none.
	SessionKey string
	// LeaseOwner is the caller's lease owner hash; its own lease is not an exclusion.
	LeaseOwner string
	// LeaseConnection restricts a fenced lease request to its connection.
	LeaseConnection string
	// DryRun plans without advancing any strategy state (round-robin cursor,
	// strict-random deck, sticky pins): for explain, never for dispatch.
	DryRun bool
	// Buf, when it has capacity, holds a plain model's candidates (the
	// plan's Candidates then share its array): the caller's storage, not
	// reused while that plan is in use.
	Buf []Candidate
}

// Plan is the ordered candidates for a request and why the others were left out.
type Plan struct {
	Combo      *Combo
	Candidates []Candidate
	Excluded   []Exclusion
	// Eligible counts candidates before lease exclusions (lease capacity errors).
	Eligible int
	// Mapped is set when the requested name is served by no connection and
	// was routed through the agent model map (or without its "[1m]" suffix).
	Mapped *Mapping
	// Pinned is the session's live pin this plan was ordered by ("" when it
	// had none): a first choice other than it moves the session from it.
	// Read once, with the ordering: a pin learnt later (another instance's,
	// adopted meanwhile) was not seen, so nothing was moved from it.
	Pinned string
	// Spread, for a new session (no live pin), is how many leading
	// candidates are its provider's interchangeable OAuth accounts (the
	// session spread, at least 2; 0 for none): a team server pins the
	// session to the one of them holding the fewest sessions team-wide.
	Spread int
}

// targetMeta is what strategies know about one combo target.
type targetMeta struct {
	usage      int64
	inFlight   int
	lastGoodAt time.Time
	resetAt    time.Time
	remaining  float64
	// failStreak counts consecutive recoverable failures of this target.
	failStreak int
}

// stats keeps per-target counters for the strategies.
type stats struct {
	mu     sync.Mutex
	byKey  map[string]*targetMeta
	states map[string]*strategy.State
}

func newStats() *stats {
	return &stats{byKey: map[string]*targetMeta{}, states: map[string]*strategy.State{}}
}

// maxTracked bounds the per-target counters: model names come from clients.
const maxTracked = 10_000

func (s *stats) meta(key string) *targetMeta {
	m, ok := s.byKey[key]
	if !ok {
		if len(s.byKey) >= maxTracked {
			for k, v := range s.byKey {
				if v.inFlight == 0 {
					delete(s.byKey, k)
				}
			}
		}
		m = &targetMeta{remaining: -1}
		s.byKey[key] = m
	}
	return m
}

// streak folds an outcome into a target's consecutive recoverable failure count
// and returns it: a success or any other outcome restarts it.
// metaOf is meta(c.Key()) without building the key string for a target
// already tracked (every request's, after its first): the string is made
// only to insert a new one.
func (s *stats) metaOf(c Candidate) *targetMeta {
	var buf [128]byte
	k := c.appendKey(buf[:0])
	if m, ok := s.byKey[string(k)]; ok { // no allocation for a map index
		return m
	}
	return s.meta(string(k))
}

func (s *stats) streak(c Candidate, v verdict.Verdict) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.metaOf(c)
	if recoverable(v.Kind) {
		m.failStreak++
	} else {
		m.failStreak = 0
	}
	return m.failStreak
}

func (s *stats) resetStreak(c Candidate) {
	s.mu.Lock()
	s.metaOf(c).failStreak = 0
	s.mu.Unlock()
}

func (s *stats) state(comboID string) *strategy.State {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.states[comboID]
	if !ok {
		seed := uint64(time.Now().UnixNano())
		st = strategy.NewState(rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)))
		s.states[comboID] = st
	}
	return st
}

// Key identifies a candidate for strategies and per-request bookkeeping.
func (c Candidate) Key() string { return c.Conn.ID + "|" + c.Model }

// appendKey appends Key() to dst.
func (c Candidate) appendKey(dst []byte) []byte {
	return append(append(append(dst, c.Conn.ID...), '|'), c.Model...)
}

// Plan resolves a model or combo to ordered, admissible candidates. A name
// no connection serves is retried once through the agent model map (remap),
// so an agent's built-in default model reaches the user's choice.
func (e *Engine) Plan(in PlanInput) (Plan, error) {
	p, err := e.plan(in)
	if err == nil || !notServed(err) {
		return p, err
	}
	m, ok := e.remap(in.Model)
	if !ok {
		return p, err
	}
	mapped := in
	mapped.Model = m.Target
	p2, err2 := e.plan(mapped)
	if err2 != nil {
		if notServed(err2) {
			return p, err // the map points nowhere: report the name the client sent
		}
		return p2, err2
	}
	p2.Mapped = &m
	return p2, nil
}

// plan is Plan without the agent model map.
func (e *Engine) plan(in PlanInput) (Plan, error) {
	var p Plan
	var all []Candidate
	if combo, ok := e.combos.Lookup(in.Model); ok {
		p.Combo = combo
		if !in.Access.allowsModel(in.Model) && !in.Access.allowsModel("combo/"+combo.Name) {
			return p, errs.New(errs.Permission, "MODEL_NOT_ALLOWED", "this API key may not use combo %q", combo.Name).WithParam("model")
		}
		acc := in.Access
		acc.AllowedModels = nil // the combo itself was allowed
		for i, t := range combo.Targets {
			cands, err := e.reg.Resolve(t.Model, acc)
			if err != nil {
				continue
			}
			for _, c := range cands {
				if t.ConnectionID != "" && c.Conn.ID != t.ConnectionID {
					continue
				}
				c.ComboIndex = i
				all = append(all, c)
			}
		}
		if len(all) == 0 {
			return p, errs.New(errs.NotFound, "no_executable_targets",
				"combo %q has no executable target: no active connection serves any of its models", combo.Name).WithParam("model")
		}
	} else {
		cands, err := e.reg.ResolveInto(in.Buf, in.Model, in.Access)
		if err != nil {
			return p, err
		}
		all = cands
	}
	now := e.clk.Now()
	ok := all[:0] // all is this call's own slice: filtered in place
	for _, c := range all {
		if in.LeaseConnection != "" && c.Conn.ID != in.LeaseConnection {
			continue
		}
		if x := e.checkAt(c, now); x != nil {
			p.Excluded = append(p.Excluded, *x)
			continue
		}
		p.Eligible++
		if e.leases != nil && in.LeaseConnection == "" {
			if owner, exp, held := e.leases.HeldBy(c.Conn.ID); held && owner != in.LeaseOwner {
				p.Excluded = append(p.Excluded, Exclusion{ConnectionID: c.Conn.ID, Provider: c.Conn.BreakerKey, Model: c.Model,
					Reason: "lease_held", Remaining: exp.Sub(now)})
				continue
			}
		}
		ok = append(ok, c)
	}
	p.Candidates, p.Pinned, p.Spread = e.order(p.Combo, ok, in, now)
	return p, nil
}

// order ranks admissible candidates: a combo by its strategy, a plain model by
// priority; a live session pin goes first. It returns the pin it ordered by
// and the new session's spread (Plan.Spread).
func (e *Engine) order(combo *Combo, cands []Candidate, in PlanInput, now time.Time) ([]Candidate, string, int) {
	if combo != nil && len(cands) > 1 {
		name := strategy.Name(combo.Strategy)
		if !strategy.Valid(name) {
			name = strategy.Priority
		}
		targets := make([]strategy.Target, len(cands))
		byKey := make(map[string]Candidate, len(cands))
		e.stats.mu.Lock()
		for i, c := range cands {
			t := combo.Targets[c.ComboIndex]
			m := e.stats.meta(c.Key())
			w := 1
			if t.Weight != nil {
				w = *t.Weight
			}
			targets[i] = strategy.Target{Key: c.Key(), Index: c.ComboIndex*1000 + i, Priority: t.Priority, Weight: w,
				Usage: m.usage, InFlight: m.inFlight, CostPer1M: t.CostPer1M, ResetAt: m.resetAt, Remaining: m.remaining,
				LastGoodAt: m.lastGoodAt, ContextWindow: t.ContextWindow, Provider: c.Conn.BreakerKey}
			byKey[c.Key()] = c
		}
		e.stats.mu.Unlock()
		if combo.Config.QuotaShare {
			// The account's load is the connection's: every request holding its
			// gate counter, from this combo or not.
			for i, c := range cands {
				targets[i].Cap = c.Conn.Limits.MaxConcurrent
				if e.load != nil {
					targets[i].InFlight = e.load.InFlight(c.Conn.ID)
				}
			}
		}
		opts := strategy.Options{StickyKey: in.SessionKey, StickyTTL: time.Duration(combo.Config.StickyTTLMs) * time.Millisecond}
		st := e.stats.state(combo.ID)
		if in.DryRun {
			st = strategy.NewState(rand.New(rand.NewPCG(1, 2)))
			opts = strategy.Options{}
		}
		var ordered []strategy.Target
		if combo.Config.QuotaShare {
			ordered = st.QuotaShare(targets)
		} else {
			ordered = strategy.Order(name, targets, st, now, opts)
		}
		out := make([]Candidate, 0, len(ordered))
		for _, t := range ordered {
			out = append(out, byKey[t.Key])
		}
		cands = out
	}
	pinned, spread := "", 0
	if in.SessionKey != "" && e.pins != nil {
		if connID, ok := e.pins.Pinned(in.SessionKey); ok {
			pinned = connID
			sort.SliceStable(cands, func(i, j int) bool {
				return cands[i].Conn.ID == connID && cands[j].Conn.ID != connID
			})
		} else if combo == nil {
			spread = spreadSessions(cands, e.pins)
		}
	}
	return cands, pinned, spread
}

// spreadSessions orders a new session's first choices so sessions spread over
// one provider's OAuth accounts (the guide's soft session occupancy): among
// the leading candidates that are OAuth connections of the first one's
// provider at its priority, the one holding the fewest sessions goes first.
// Priorities between accounts, and API keys, keep their order. It returns
// how many leading candidates it spread over (0 for none): this instance's
// occupancy ordered them, and a team server's pin claim chooses among them
// by the team's.
func spreadSessions(cands []Candidate, pins PinView) int {
	if len(cands) < 2 || cands[0].Conn.AuthType != "oauth" {
		return 0
	}
	first := cands[0].Conn
	n := 1
	for n < len(cands) {
		c := cands[n].Conn
		if c.AuthType != "oauth" || c.Provider.ID != first.Provider.ID || c.Priority != first.Priority {
			break
		}
		n++
	}
	if n < 2 {
		return 0
	}
	occ := make([]int, n)
	for i := range occ {
		occ[i] = pins.Occupancy(cands[i].Conn.ID)
	}
	lead := cands[:n]
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return occ[idx[a]] < occ[idx[b]] })
	sorted := make([]Candidate, n)
	for i, j := range idx {
		sorted[i] = lead[j]
	}
	copy(lead, sorted)
	return n
}

// IsCombo reports whether a model name addresses a combo.
func (e *Engine) IsCombo(model string) bool {
	_, ok := e.combos.Lookup(model)
	return ok
}

// Combos returns the combo set.
func (e *Engine) Combos() *Combos { return e.combos }

// LargerContext returns the remaining candidates of a context-optimized combo
// whose context window is larger than the failed one's, largest first.
func (e *Engine) LargerContext(combo *Combo, failed Candidate, rest []Candidate) []Candidate {
	if combo == nil || strategy.Name(combo.Strategy) != strategy.ContextOptimized {
		return rest
	}
	limit := combo.Targets[failed.ComboIndex].ContextWindow
	var out []Candidate
	for _, c := range rest {
		if combo.Targets[c.ComboIndex].ContextWindow > limit {
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		return combo.Targets[out[i].ComboIndex].ContextWindow > combo.Targets[out[j].ComboIndex].ContextWindow
	})
	return out
}

func lower(s string) string { return strings.ToLower(s) }
