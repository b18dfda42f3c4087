package routing

import (
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/resilience/breaker"
	"omniroute/backend/resilience/cooldown"
	"omniroute/backend/resilience/lockout"
	"omniroute/backend/resilience/queue"
	"omniroute/backend/resilience/verdict"
	"omniroute/backend/store"
)

// Exclusion is why a candidate was not dispatched, and for how long that holds.
type Exclusion struct {
	ConnectionID string
	Provider     string
	Model        string
	// Reason is one of model_lockout, circuit_open, provider_cooldown,
	// connection_cooldown, unavailable (terminal state) or lease_held.
	Reason string
	// Detail refines Reason (e.g. the terminal state "banned").
	Detail    string
	Remaining time.Duration
	// Transient is true when the cause is short-lived (rate limit, server error,
	// open breaker) and worth waiting for; quota, auth and not-found are not.
	Transient bool
	// Cause is the verdict code that wrote a model lock or model cooldown
	// (e.g. UPSTREAM_RATE_LIMITED, UPSTREAM_TRANSPORT_ERROR, UPSTREAM_FORBIDDEN):
	// the client's answer depends on it (429 only for rate-limit locks).
	Cause string
}

// Denied reports a model lock written by an access denial (a rule's
// model-scoped forbidden, e.g. agentrouter's "无权访问模型").
func (x Exclusion) Denied() bool {
	return x.Reason == "model_lockout" && x.Cause == verdict.CodeForbidden
}

// Timed reports whether the exclusion ends by itself when a timer expires.
func (x Exclusion) Timed() bool { return x.Remaining > 0 }

// CooldownStore persists a connection's cooldown columns (write-through).
type CooldownStore interface {
	SaveCooldown(id string, f store.CooldownFields) error
}

// CooldownDecider is a CooldownStore several instances share (a team server
// on PostgreSQL): instead of writing this instance's decision, the engine
// hands it the step that decides — the outcome folded into the connection's
// columns as stored — and the database applies the steps of every instance
// one after the other under the row's lock (store.DecideCooldown), so the
// anti-thundering-herd rule holds across instances (cooldown.ApplyStored).
// The request path never waits: the local decision serves at once, and done
// later brings the state the database kept, which the engine adopts.
type CooldownDecider interface {
	// DecideCooldown queues step for connection id and returns at once;
	// steps of one connection run in the order queued. done (may be nil) is
	// called, off the request path, with the columns as stored after the step
	// and whether the database changed them (false: the stored row stood —
	// another instance's decision had already been taken).
	DecideCooldown(id string, step func(stored store.CooldownFields) store.CooldownFields, done func(stored store.CooldownFields, wrote bool))
}

// DecisionObserver is told, on a shared store, of each connection state the
// database took (the decision of this instance that changed the row), once,
// team-wide: where the team's history of cooldowns is recorded, while
// Observer.ConnectionStateChanged tells of every state this instance holds.
type DecisionObserver interface {
	ConnectionStateDecided(c *Conn, st cooldown.State)
}

// LockStore shares model lockouts and model cooldowns with the other
// instances of a team server: every lock written and every clear (a
// tombstone) is saved, and the instances adopt what they read back
// (AdoptModelLocks). Its writes must not wait on the database.
type LockStore interface {
	SaveModelLock(r store.ModelLockRow) error
}

// Policy supplies the current settings to the engine; it is read per decision so
// a PATCH of the settings applies to the next request.
type Policy interface {
	CooldownSettings(category string) cooldown.Settings
	CooldownOptions() cooldown.Options
	// ProviderCooldownEnabled reports whether the opt-in provider window gate is on.
	ProviderCooldownEnabled() bool
	// LockoutSettings returns the model lockout tuning.
	LockoutSettings() lockout.Settings
	// QueueMaxWait is the longest body-declared wait that is pacing; a longer
	// typed RetryInfo wait becomes a model lockout instead (guide §5).
	QueueMaxWait() time.Duration
}

// ConnLoad reports a connection's requests in flight (the concurrency gate's
// account counter), for quota-share ordering.
type ConnLoad interface {
	InFlight(connectionID string) int
}

// Observer hears about state changes (for the event stream and logs).
type Observer interface {
	ConnectionStateChanged(c *Conn, st cooldown.State)
	// LockoutChanged reports "locked", "decayed" or "cleared" for a model lockout.
	LockoutChanged(action string, e lockout.Entry)
}

// Engine admits candidates through every resilience layer and records each
// attempt's verdict into them.
type Engine struct {
	reg      *Registry
	clk      clock.Clock
	breakers *breaker.Registry
	window   *breaker.WindowGate
	lockouts *lockout.Table
	// cools holds the model cooldowns: short, always-on exclusions of one model
	// on one connection written from model-scoped evidence (a model's 429, a
	// streak of 5xx / resets on it) when the opt-in model lockout does not apply.
	cools    *lockout.Table
	combos   *Combos
	leases   LeaseView
	pins     PinView
	stats    *stats
	store    CooldownStore
	policy   Policy
	observer Observer
	load     ConnLoad
	onError  func(error)
	agentMap AgentMap
	// probeClaim asks the shared database for a HALF_OPEN probe (nil: local only).
	probeClaim func(breakerKey string) (bool, error)
	// locks shares model locks with other instances (nil: local only).
	locks  LockStore
	egress egressBook
	tools  toolLimits
}

// EngineDeps are the engine's collaborators.
type EngineDeps struct {
	Registry *Registry
	Clock    clock.Clock
	Breakers *breaker.Registry
	// Window is the optional provider cooldown window gate (used when the policy enables it).
	Window *breaker.WindowGate
	// Lockouts holds the in-memory model lockouts.
	Lockouts *lockout.Table
	// Combos holds the combos (nil: none).
	Combos *Combos
	// Leases and Pins are the exclusive-lease and session-affinity views (optional).
	Leases   LeaseView
	Pins     PinView
	Store    CooldownStore
	Policy   Policy
	Observer Observer
	// Load is the live per-connection load (optional; quota-share combos use it).
	Load ConnLoad
	// OnError reports persistence failures (they never fail a request).
	OnError func(error)
	// AgentMap is the agent model map (nil: off).
	AgentMap AgentMap
	// ProbeClaim, when set, asks the database shared with other instances
	// whether this instance may send a HALF_OPEN breaker's probe (true: this
	// instance won it); an error refuses the probe. nil: the local breaker
	// alone decides (one instance per database).
	ProbeClaim func(breakerKey string) (bool, error)
	// Locks, when set, shares the model lockouts and model cooldowns with the
	// other instances on the database (team server). nil: they stay in this
	// process's memory (desktop, SQLite).
	Locks LockStore
}

// NewEngine wires an engine.
func NewEngine(d EngineDeps) *Engine {
	if d.Combos == nil {
		d.Combos = NewCombos()
	}
	return &Engine{reg: d.Registry, clk: d.Clock, breakers: d.Breakers, window: d.Window, lockouts: d.Lockouts,
		cools: lockout.New(d.Clock), combos: d.Combos, leases: d.Leases,
		pins: d.Pins, stats: newStats(), store: d.Store,
		policy: d.Policy, observer: d.Observer, load: d.Load, onError: d.OnError, agentMap: d.AgentMap,
		probeClaim: d.ProbeClaim, locks: d.Locks}
}

// Registry returns the connection registry.
func (e *Engine) Registry() *Registry { return e.reg }

// Breakers returns the provider breaker registry.
func (e *Engine) Breakers() *breaker.Registry { return e.breakers }

// Lockouts returns the model lockout table.
func (e *Engine) Lockouts() *lockout.Table { return e.lockouts }

// modelLocked reports a lockout covering this candidate's model.
func (e *Engine) modelLocked(c Candidate) *Exclusion {
	if e.lockouts == nil {
		return nil
	}
	if entry, ok := e.lockouts.Locked(c.Conn.Provider.ID, c.Conn.ID, c.Model); ok {
		x := e.exclusion(c, "model_lockout", string(entry.Scope), entry.Remaining(e.clk.Now()))
		x.Transient, x.Cause = transientCode(entry.Reason), entry.Reason
		return x
	}
	return nil
}

// ModelCooldowns returns the model cooldown table (model-scoped evidence
// without the opt-in lockout).
func (e *Engine) ModelCooldowns() *lockout.Table { return e.cools }

// modelCooling reports a model cooldown covering this candidate's model.
func (e *Engine) modelCooling(c Candidate) *Exclusion {
	if entry, ok := e.cools.Locked(c.Conn.Provider.ID, c.Conn.ID, c.Model); ok {
		x := e.exclusion(c, "model_cooldown", entry.Reason, entry.Remaining(e.clk.Now()))
		x.Transient, x.Cause = transientCode(entry.Reason), entry.Reason
		return x
	}
	return nil
}

// Window returns the provider cooldown window gate.
func (e *Engine) Window() *breaker.WindowGate { return e.window }

// ProviderCoolingRemaining reports how long the opt-in provider window gate still
// keeps this breaker key out of routing (0: not cooling or the gate is off).
func (e *Engine) ProviderCoolingRemaining(key string) time.Duration {
	if e.window == nil || !e.policy.ProviderCooldownEnabled() {
		return 0
	}
	if cooling, remaining := e.window.CoolingDown(key); cooling {
		return remaining
	}
	return 0
}

// ResetProviderCooldowns clears the opt-in provider window gate (operator
// reset: POST /api/resilience/reset, the cooldown manager) for one breaker
// key, or for every provider when key is "". It returns how many providers
// were cooling down.
func (e *Engine) ResetProviderCooldowns(key string) int {
	if e.window == nil {
		return 0
	}
	if key == "" {
		return e.window.ResetAll()
	}
	if e.window.Reset(key) {
		return 1
	}
	return 0
}

// providerCooling reports the opt-in provider window gate's verdict.
func (e *Engine) providerCooling(c Candidate) *Exclusion {
	if e.window == nil || !e.policy.ProviderCooldownEnabled() {
		return nil
	}
	if cooling, remaining := e.window.CoolingDown(c.Conn.BreakerKey); cooling {
		x := e.exclusion(c, "provider_cooldown", "", remaining)
		x.Transient = true
		return x
	}
	return nil
}

// Check reports whether a candidate is currently excluded, without taking a
// permit. A target held by a timer of one layer and an open breaker comes
// back when the later of the two ends: Remaining is that real return.
func (e *Engine) Check(c Candidate) *Exclusion { return e.checkAt(c, e.clk.Now()) }

// checkAt is Check at now (a plan checks its candidates at the time it read).
func (e *Engine) checkAt(c Candidate, now time.Time) *Exclusion {
	x := e.check(c, now)
	if x == nil || !x.Transient || !x.Timed() || x.Reason == "circuit_open" {
		return x
	}
	if st := e.breakers.Get(c.Conn.BreakerKey).Status(); st.State == breaker.Open && st.RetryAfter > x.Remaining {
		// The open breaker is what keeps it out longest: named as such
		// (the shorter timer in Detail), so nobody waits on it as on a 429.
		x.Detail, x.Reason, x.Remaining = x.Reason, "circuit_open", st.RetryAfter
	}
	return x
}

// check is Check's first exclusion, layer by layer, at now.
func (e *Engine) check(c Candidate, now time.Time) *Exclusion {
	if x := e.checkConn(c, now); x != nil {
		return x
	}
	if x := e.providerCooling(c); x != nil {
		return x
	}
	if x := e.modelLocked(c); x != nil {
		return x
	}
	if x := e.modelCooling(c); x != nil {
		return x
	}
	b := e.breakers.Get(c.Conn.BreakerKey)
	if st := b.Status(); st.State == breaker.Open {
		x := e.exclusion(c, "circuit_open", "", st.RetryAfter)
		x.Transient = true
		return x
	}
	return nil
}

func (e *Engine) checkConn(c Candidate, now time.Time) *Exclusion {
	ok, reason, remaining := cooldown.Eligible(c.Conn.Cooldown(), now)
	if ok {
		return nil
	}
	if reason == "connection_cooldown" {
		x := e.exclusion(c, "connection_cooldown", "", remaining)
		if st := c.Conn.Cooldown(); st.ErrorCode == verdict.CodeQuotaRestated {
			// A restated quota (a 403 that meant "429") is a short window by declaration.
			x.Transient, x.Detail = true, "quota_restated"
			return x
		}
		kind := c.Conn.Cooldown().LastErrorType
		x.Detail = kind // what cooled it: quota waits for its reset, answered 429 with it
		switch kind {
		case string(verdict.KindQuota):
		case string(verdict.KindAuth), string(verdict.KindForbidden), string(verdict.KindRequestRejected):
		default:
			x.Transient = true
		}
		return x
	}
	return e.exclusion(c, "unavailable", reason, 0)
}

func (e *Engine) exclusion(c Candidate, reason, detail string, remaining time.Duration) *Exclusion {
	return &Exclusion{ConnectionID: c.Conn.ID, Provider: c.Conn.BreakerKey, Model: c.Model,
		Reason: reason, Detail: detail, Remaining: remaining}
}

// Admit decides right before dispatch whether c may be tried now and, if so,
// takes the layers' permits (the breaker's HALF_OPEN probe slot). Every ticket
// must be finished exactly once.
func (e *Engine) Admit(c Candidate) (*Ticket, *Exclusion) {
	return e.AdmitIn(c, nil)
}

// AdmitIn is Admit writing the ticket into slot, a zero Ticket that is part
// of the caller's own per-request state (a new one when slot is nil). A slot
// holds one ticket: it is not reused while anything may still finish it.
func (e *Engine) AdmitIn(c Candidate, slot *Ticket) (*Ticket, *Exclusion) {
	now := e.clk.Now()
	if x := e.checkConn(c, now); x != nil {
		return nil, x
	}
	if x := e.providerCooling(c); x != nil {
		return nil, x
	}
	if x := e.modelLocked(c); x != nil {
		return nil, x
	}
	if x := e.modelCooling(c); x != nil {
		return nil, x
	}
	b := e.breakers.Get(c.Conn.BreakerKey)
	t := slot
	if t == nil {
		t = new(Ticket)
	}
	*t = Ticket{e: e, cand: c} // the breaker's permit record lives in the ticket: one allocation at most
	permit, ok := b.AllowIn(&t.slot)
	if ok && permit.Probe() && e.probeClaim != nil {
		// Across instances one probe at a time: the database decides, and a
		// probe it could not record is not sent.
		won, err := e.probeClaim(c.Conn.BreakerKey)
		if err != nil && e.onError != nil {
			e.onError(err)
		}
		if err != nil || !won {
			permit.Release()
			ok = false
		}
	}
	if !ok {
		// OPEN, or HALF_OPEN with its one probe already out (here or on
		// another instance): both pass soon.
		x := e.exclusion(c, "circuit_open", "", max(b.RetryAfter(), time.Second))
		x.Transient = true
		return nil, x
	}
	e.stats.mu.Lock()
	e.stats.metaOf(c).inFlight++
	e.stats.mu.Unlock()
	t.permit = permit
	return t, nil
}

// settle updates the strategy counters when an attempt ends.
func (t *Ticket) settle(ok bool) {
	now := t.e.clk.Now()
	s := t.e.stats
	s.mu.Lock()
	m := s.metaOf(t.cand)
	m.inFlight--
	if ok {
		m.usage++
		m.lastGoodAt = now
	}
	s.mu.Unlock()
	if t.Combo != nil {
		s.state(t.Combo.ID).Observe(t.cand.Key(), ok, now)
	}
}

// ObserveQuota records the quota window an upstream reported for this target
// (remaining fraction 0..1 or negative when unknown, and when it resets).
func (t *Ticket) ObserveQuota(remaining float64, resetAt time.Time) {
	s := t.e.stats
	s.mu.Lock()
	m := s.metaOf(t.cand)
	if remaining >= 0 {
		m.remaining = remaining
	}
	if !resetAt.IsZero() {
		m.resetAt = resetAt
	}
	s.mu.Unlock()
}

// Ticket is one admitted attempt.
type Ticket struct {
	e      *Engine
	cand   Candidate
	permit breaker.Permit
	slot   breaker.Slot
	done   bool
	// Combo, when set, receives the outcome for stateful strategies (fill-first).
	Combo *Combo
	// Counted is set by the caller when the same request already counted a
	// recoverable failure (5xx, reset, timeout) of this target (Target) or of
	// its connection (Conn): one request alone never cools either (guide §2,
	// docs/FAILOVER.md §5), so its in-place retries and its later legs on the
	// same connection add nothing to the failure streaks.
	Counted Counted
	// Queued is set by the caller when the attempt passed a protected
	// connection's request queue: a body-declared retry hint within the
	// queue's wait budget pauses that queue (the gateway does), which paces
	// the callers arriving meanwhile (guide §5), so no model cooldown is
	// written for it — it would refuse them with a 429 instead.
	Queued bool
}

// Counted says which failure streaks a request already added to: its
// connection's, its target's, and its provider breaker's.
type Counted struct{ Conn, Target, Provider bool }

// repeats reports whether v would only add to a streak the request already
// counted: a recoverable failure that cools nothing by itself.
func repeats(v verdict.Verdict, counted bool) bool {
	return counted && recoverable(v.Kind) && !v.CoolConnection && v.Terminal == ""
}

// breakerKind is the provider breaker's failure kind for a verdict kind: its
// OPEN hold follows it (breaker.Profile.OpenByKind).
func breakerKind(k verdict.Kind) breaker.FailureKind {
	switch k {
	case verdict.KindServer:
		return breaker.FailureServer
	case verdict.KindTransport:
		return breaker.FailureTransport
	case verdict.KindTimeout:
		return breaker.FailureTimeout
	}
	return ""
}

// Finish records the attempt's verdict in every layer. A client-cancelled attempt
// blames nobody and only gives its permits back.
func (t *Ticket) Finish(v verdict.Verdict) {
	if t.done {
		return
	}
	t.done = true
	if v.Kind == verdict.KindClientCanceled {
		t.release()
	} else {
		t.settle(v.OK())
	}
	// One request counts once toward the provider breaker, as toward the
	// streaks (its in-place retries and its other legs on the provider add
	// nothing), except a HALF_OPEN probe, whose failure always re-opens.
	providerFailure := v.CountsForBreaker && !v.SkipProviderBreaker && (!t.Counted.Provider || t.permit.Probe())
	switch {
	case v.OK():
		t.permit.Success()
	case providerFailure:
		t.permit.FailureOf(breakerKind(v.Kind))
	default:
		t.permit.Release()
	}
	if w := t.e.window; w != nil && t.e.policy.ProviderCooldownEnabled() {
		if v.OK() {
			w.RecordSuccess(t.cand.Conn.BreakerKey)
		} else if providerFailure {
			w.RecordFailure(t.cand.Conn.BreakerKey)
		}
	}
	if v.Kind == verdict.KindClientCanceled {
		return
	}
	t.cand.Conn.noteVerdict(v, t.e.clk)
	if egressBucketed(t.cand.Conn, v) {
		// An IP-bucketed limit is about the egress IP, not the model: the
		// connection cools (never a model lock), and so do its IP siblings.
		v.CoolConnection = true
		t.e.recordCooldown(t.cand.Conn, v)
		t.e.coolEgressSiblings(t.cand.Conn, v)
		return
	}
	if v.Rule != "" && v.Scope == verdict.ScopeConnection && v.CoolConnection && v.Terminal == "" && t.cand.Conn.overrides.DisableCooling {
		// A rule's connection-scope cooldown (agentrouter's restated quota) on
		// a connection opted out with rateLimitOverrides.disableCooling falls
		// back to cooling this model (guide §7, the documented trade-off).
		t.e.coolModelInstead(t.cand, v)
		return
	}
	connRepeat := repeats(v, t.Counted.Conn)
	if t.e.recordLockout(t.cand, v, connRepeat) {
		return
	}
	if t.Queued && t.e.pausesQueue(t.cand.Conn, v) {
		t.e.stats.streak(t.cand, v) // a limit ends the target's 5xx streak, as below
		t.e.recordCooldown(t.cand.Conn, v)
		return
	}
	t.e.recordModelCooldown(t.cand, v, repeats(v, t.Counted.Target))
	if !connRepeat {
		t.e.recordCooldown(t.cand.Conn, v)
	}
}

// recordModelCooldown writes model-scoped evidence into the model cooldowns
// when the lockout layer did not take it: a model's 429 cools the model for the
// upstream's hint (or the connection ladder), and FailureStreak consecutive
// recoverable failures of one model cool that model with the ladder. Success
// decays the model's cooldown history. repeat: the request already counted a
// recoverable failure of this target, so this one leaves its streak as it is.
func (e *Engine) recordModelCooldown(c Candidate, v verdict.Verdict, repeat bool) {
	provider := c.Conn.Provider.ID
	if repeat {
		return
	}
	streak := e.stats.streak(c, v)
	if v.OK() {
		_, gone := e.cools.DecayEntries(provider, c.Conn.ID, c.Model)
		e.shareCleared(store.LayerCooldown, gone)
		return
	}
	cs := c.Conn.overrides.apply(e.policy.CooldownSettings(c.Conn.Category()))
	ladder := lockout.Settings{Enabled: true, BaseCooldown: cs.BaseCooldown, MaxCooldown: cs.MaxHintCooldown,
		MaxBackoffSteps: cs.MaxBackoffSteps, UseExponentialBackoff: true}
	switch {
	case v.Kind == verdict.KindRateLimit && v.Scope != verdict.ScopeConnection:
		if v.RetryAfter > 0 && cs.UseUpstreamRetryHints {
			e.locked(store.LayerCooldown, e.cools.LockFor(provider, c.Conn.ID, c.Model, min(v.RetryAfter, cs.MaxHintCooldown), v.Code))
			return
		}
		e.locked(store.LayerCooldown, e.cools.RecordFailure(provider, c.Conn.ID, c.Model, v.Status, v.Code, lockout.ScopeExact, ladder, 0))
	case recoverable(v.Kind):
		if n := e.policy.CooldownOptions().FailureStreak; n > 0 && streak >= n {
			// A streak's cooldown is capped like the connection's: a
			// recovered model is tried again within the bound.
			ladder.MaxCooldown = min(ladder.MaxCooldown, cooldown.MaxStreakCooldown)
			e.locked(store.LayerCooldown, e.cools.RecordFailure(provider, c.Conn.ID, c.Model, v.Status, v.Code, lockout.ScopeExact, ladder, 0))
			e.stats.resetStreak(c)
		}
	}
}

// pausesQueue reports a model-scoped limit whose body-declared hint (prose
// or a typed RetryInfo) is within the connection's queue wait budget: the
// gateway pauses the connection's queue for it (admission.observe).
func (e *Engine) pausesQueue(c *Conn, v verdict.Verdict) bool {
	switch v.Kind {
	case verdict.KindRateLimit, verdict.KindConcurrencyLimit:
	default:
		return false
	}
	if v.Scope == verdict.ScopeConnection || v.RetryAfter <= 0 || v.RetryAfter > e.queueMaxWait(c) {
		return false
	}
	return v.HintSource == verdict.HintBody || v.HintSource == verdict.HintGoogleRPCRetryInfo
}

// coolModelInstead writes a model cooldown for a connection-level verdict on
// a connection that opted out of cooling (disableCooling): the rule's own
// cooldown, else the upstream's hint, else the connection's ladder.
func (e *Engine) coolModelInstead(c Candidate, v verdict.Verdict) {
	provider := c.Conn.Provider.ID
	cs := c.Conn.overrides.apply(e.policy.CooldownSettings(c.Conn.Category()))
	switch {
	case v.FixedCooldown > 0:
		e.locked(store.LayerCooldown, e.cools.LockFor(provider, c.Conn.ID, c.Model, v.FixedCooldown, v.Code))
	case v.RetryAfter > 0 && cs.UseUpstreamRetryHints:
		e.locked(store.LayerCooldown, e.cools.LockFor(provider, c.Conn.ID, c.Model, min(v.RetryAfter, cs.MaxHintCooldown), v.Code))
	default:
		ladder := lockout.Settings{Enabled: true, BaseCooldown: cs.BaseCooldown, MaxCooldown: cs.MaxHintCooldown,
			MaxBackoffSteps: cs.MaxBackoffSteps, UseExponentialBackoff: true}
		e.locked(store.LayerCooldown, e.cools.RecordFailure(provider, c.Conn.ID, c.Model, v.Status, v.Code, lockout.ScopeExact, ladder, 0))
	}
}

// recoverable reports the failures that say nothing alone but, repeated, show
// the target (or, across models, the connection) is broken.
func recoverable(k verdict.Kind) bool {
	return k == verdict.KindServer || k == verdict.KindTransport || k == verdict.KindTimeout
}

// recordLockout applies the model lockout layer. It returns true when the
// failure is blamed on the model alone, so the connection itself is not cooled
// (the rest of its models keep serving). connRepeat: the request already
// counted a recoverable failure of the connection (see Ticket.Counted).
func (e *Engine) recordLockout(c Candidate, v verdict.Verdict, connRepeat bool) bool {
	if e.lockouts == nil {
		return false
	}
	provider := c.Conn.Provider.ID
	if v.OK() {
		n, gone := e.lockouts.DecayEntries(provider, c.Conn.ID, c.Model)
		e.shareCleared(store.LayerLockout, gone)
		if n > 0 && e.observer != nil {
			e.observer.LockoutChanged("decayed", lockout.Entry{Provider: provider, ConnectionID: c.Conn.ID, Model: c.Model})
		}
		return false
	}
	// A provider error rule with scope "model" locks this model alone, for the
	// rule's time; the connection and its other models keep serving.
	if v.ModelLock > 0 {
		e.locked(store.LayerLockout, e.lockouts.LockFor(provider, c.Conn.ID, c.Model, v.ModelLock, v.Code))
		return true
	}
	// A rule's honoured connection scope blames the account, never a model.
	if v.Rule != "" && v.Scope == verdict.ScopeConnection {
		return false
	}
	// A typed RetryInfo wait too long for the queue locks the exact model (≤ 24 h).
	if v.HintSource == verdict.HintGoogleRPCRetryInfo && v.RetryAfter > e.queueMaxWait(c.Conn) {
		e.locked(store.LayerLockout, e.lockouts.LockFor(provider, c.Conn.ID, c.Model, v.RetryAfter, v.Code))
		return true
	}
	set := e.policy.LockoutSettings()
	if !set.Enabled || !set.Counts(v.Status) {
		return false
	}
	switch v.Kind {
	case verdict.KindRateLimit, verdict.KindQuota, verdict.KindForbidden, verdict.KindNotFound,
		verdict.KindServer, verdict.KindTransport, verdict.KindTimeout:
	default:
		return false // account-level kinds (auth, ban, credits, concurrency) stay with the connection
	}
	if v.Kind == verdict.KindRateLimit && v.Scope == verdict.ScopeConnection {
		return false // the upstream said the whole account is limited
	}
	code := v.Code
	if code == verdict.CodeForbidden {
		code = verdict.CodeForbiddenLocked // not a rule's permanent denial: transient
	}
	e.locked(store.LayerLockout, e.lockouts.RecordFailure(provider, c.Conn.ID, c.Model, v.Status, code, "", set, v.RetryAfter))
	// The model is locked, not the connection; recoverable failures still count
	// towards the connection's cross-model streak (guide §2).
	if recoverable(v.Kind) && !connRepeat {
		e.recordCooldown(c.Conn, v)
	}
	return true
}

// queueMaxWait is a connection's queue wait budget: its
// rateLimitOverrides.maxWaitMs when set (clamped), else the settings'.
func (e *Engine) queueMaxWait(c *Conn) time.Duration {
	if o := c.Limits.Queue.MaxWaitMs; o != nil {
		return queue.ClampWait(time.Duration(*o) * time.Millisecond)
	}
	return e.policy.QueueMaxWait()
}

func (e *Engine) lockoutChanged(action string, entry lockout.Entry) {
	if e.observer != nil {
		e.observer.LockoutChanged(action, entry)
	}
}

// locked reports a lock written into layer's table and shares it.
func (e *Engine) locked(layer string, entry lockout.Entry) {
	e.lockoutChanged("locked", entry)
	if entry.Active(e.clk.Now()) {
		e.shareLock(modelLockRow(layer, entry, false))
	}
}

// shareCleared tells the other instances (team server) that these entries of
// layer were removed now: a tombstone per key, stamped with the clear time.
func (e *Engine) shareCleared(layer string, gone []lockout.Entry) {
	if e.locks == nil || len(gone) == 0 {
		return
	}
	now := e.clk.Now()
	for _, x := range gone {
		x.LockedAt, x.ExpiresAt = now, now
		e.shareLock(modelLockRow(layer, x, true))
	}
}

func (e *Engine) shareLock(r store.ModelLockRow) {
	if e.locks == nil {
		return
	}
	if err := e.locks.SaveModelLock(r); err != nil && e.onError != nil {
		e.onError(err)
	}
}

func modelLockRow(layer string, x lockout.Entry, cleared bool) store.ModelLockRow {
	return store.ModelLockRow{Layer: layer, Key: x.Key, Provider: x.Provider, ConnectionID: x.ConnectionID,
		Model: x.Model, Scope: string(x.Scope), Reason: x.Reason, Status: x.Status, FailureCount: x.FailureCount,
		LockedAt: x.LockedAt.UnixMilli(), ExpiresAt: x.ExpiresAt.UnixMilli(), Cleared: cleared}
}

// AdoptModelLocks takes the model lockouts, model cooldowns and clears other
// instances sharing the database wrote (see lockout.Table.Adopt: newer than
// this instance's entry wins, a tombstone removes it). Returns how many
// entries were taken or removed.
func (e *Engine) AdoptModelLocks(rows []store.ModelLockRow) int {
	var locks, cools []lockout.Remote
	for _, r := range rows {
		x := lockout.Remote{Entry: lockout.Entry{Provider: r.Provider, ConnectionID: r.ConnectionID, Model: r.Model,
			Scope: lockout.Scope(r.Scope), Key: r.Key, Reason: r.Reason, Status: r.Status, FailureCount: r.FailureCount,
			LockedAt: time.UnixMilli(r.LockedAt), ExpiresAt: time.UnixMilli(r.ExpiresAt)}, Cleared: r.Cleared}
		switch r.Layer {
		case store.LayerLockout:
			locks = append(locks, x)
		case store.LayerCooldown:
			cools = append(cools, x)
		}
	}
	n := e.cools.Adopt(cools)
	if e.lockouts != nil {
		n += e.lockouts.Adopt(locks)
	}
	return n
}

// Abandon gives the permits back without an outcome (panic, internal error).
func (t *Ticket) Abandon() {
	if t.done {
		return
	}
	t.done = true
	t.release()
	t.permit.Release()
}

// release ends an attempt that blames nobody: only the in-flight count changes.
func (t *Ticket) release() {
	s := t.e.stats
	s.mu.Lock()
	s.metaOf(t.cand).inFlight--
	s.mu.Unlock()
}

func (e *Engine) recordCooldown(c *Conn, v verdict.Verdict) {
	var now time.Time
	var set cooldown.Settings
	var opt cooldown.Options
	if !v.OK() { // a success needs no settings nor time: the hot path reads none
		now, set, opt = e.clk.Now(), c.overrides.apply(e.policy.CooldownSettings(c.Category())), e.policy.CooldownOptions()
	}
	c.mu.Lock()
	prev := c.cd
	var next cooldown.State
	var changed bool
	if v.OK() {
		next, changed = cooldown.Success(c.cd)
	} else {
		next, changed = cooldown.Apply(c.cd, v, set, opt, now)
	}
	if changed {
		c.cd = next
		c.cdSeq++
	}
	seq := c.cdSeq
	c.mu.Unlock()
	if !changed || CooldownFields(prev) == CooldownFields(next) {
		return // nothing persisted moved (e.g. only the in-memory failure streak)
	}
	if d, ok := e.store.(CooldownDecider); ok {
		// The database decides on the row as stored, with this instance's
		// failure streak (kept in memory only) as it was before the outcome.
		streak := prev.FailStreak
		v := v // captured here only: the parameter itself stays off the heap on the common path
		d.DecideCooldown(c.ID, func(stored store.CooldownFields) store.CooldownFields {
			st := CooldownFromFields(stored)
			st.FailStreak = streak
			if v.OK() {
				st, _ = cooldown.Success(st)
			} else {
				st, _ = cooldown.ApplyStored(st, v, set, opt, now)
			}
			return CooldownFields(st)
		}, func(stored store.CooldownFields, wrote bool) { e.adoptDecided(c, seq, stored, wrote) })
	} else if err := e.store.SaveCooldown(c.ID, CooldownFields(next)); err != nil && e.onError != nil {
		e.onError(err)
	}
	if e.observer != nil {
		e.observer.ConnectionStateChanged(c, next)
	}
}

// adoptDecided takes the state the shared database kept after this
// instance's change number seq — another instance's cooldown when this one
// lost the race — unless a newer local change has followed (its own decision
// comes next). The in-memory failure streak is kept. wrote: this instance's
// decision is the one the database took (reported to a DecisionObserver).
func (e *Engine) adoptDecided(c *Conn, seq uint64, stored store.CooldownFields, wrote bool) {
	next := CooldownFromFields(stored)
	if wrote {
		e.decided(c, next)
	}
	c.mu.Lock()
	if c.cdSeq != seq || CooldownFields(c.cd) == stored {
		c.mu.Unlock()
		return
	}
	next.FailStreak = c.cd.FailStreak
	c.cd = next
	c.mu.Unlock()
	if e.observer != nil {
		e.observer.ConnectionStateChanged(c, next)
	}
}

// decided tells a DecisionObserver of a state the database took.
func (e *Engine) decided(c *Conn, st cooldown.State) {
	if d, ok := e.observer.(DecisionObserver); ok {
		d.ConnectionStateDecided(c, st)
	}
}

// saveCooldown persists a state set outright (an operator clear, an egress
// sibling's cooldown): written as is, in order with the connection's other
// decisions when the store is shared.
func (e *Engine) saveCooldown(c *Conn, st cooldown.State) error {
	f := CooldownFields(st)
	if d, ok := e.store.(CooldownDecider); ok {
		d.DecideCooldown(c.ID, func(store.CooldownFields) store.CooldownFields { return f }, func(_ store.CooldownFields, wrote bool) {
			if wrote {
				e.decided(c, st)
			}
		})
		return nil
	}
	return e.store.SaveCooldown(c.ID, f)
}

// ClampCooldowns bounds every connection's loaded cooldown deadline to now +
// the longest cooldown its settings can set (cooldown.Settings.MaxCooldown):
// a deadline stored while the clock was ahead (a VM resumed with a wrong
// clock, RTC drift, an NTP step back) would otherwise keep the connection out
// of routing until that future instant. A clamped deadline is written back,
// so the stored row (and, on a team server, every instance) follows. It
// returns the connections clamped. Run it after loading the connections.
func (e *Engine) ClampCooldowns() []string {
	now := e.clk.Now()
	var clamped []string
	for _, c := range e.reg.All() {
		bound := now.Add(c.overrides.apply(e.policy.CooldownSettings(c.Category())).MaxCooldown())
		c.mu.Lock()
		st := c.cd
		if !st.RateLimitedUntil.After(bound) {
			c.mu.Unlock()
			continue
		}
		st.RateLimitedUntil = bound
		if st.LastErrorAt.After(now) {
			st.LastErrorAt = now
		}
		c.cd = st
		c.cdSeq++
		c.mu.Unlock()
		if err := e.saveCooldown(c, st); err != nil && e.onError != nil {
			e.onError(err)
		}
		if e.observer != nil {
			e.observer.ConnectionStateChanged(c, st)
		}
		clamped = append(clamped, c.ID)
	}
	return clamped
}

// SetCooldown replaces a connection's cooldown state (operator clear) and persists it.
func (e *Engine) SetCooldown(c *Conn, st cooldown.State) error {
	c.mu.Lock()
	c.cd = st
	c.cdSeq++
	c.mu.Unlock()
	if e.observer != nil {
		e.observer.ConnectionStateChanged(c, st)
	}
	return e.saveCooldown(c, st)
}

// transientCode reports whether a verdict code names a short-lived failure.
func transientCode(code string) bool {
	switch code {
	case verdict.CodeRateLimited, verdict.CodeConcurrencyLimited, verdict.CodeQuotaRestated, verdict.CodeServerError, verdict.CodeTransportError,
		verdict.CodeForbiddenLocked,
		verdict.CodeTimeout, verdict.CodeStreamStalled, "UPSTREAM_STREAM_ERROR", "STREAM_TRUNCATED", "EMPTY_RESPONSE":
		return true
	}
	return false
}

// ModelLock is one active model exclusion: a lockout (the opt-in layer) or a
// model cooldown (model-scoped evidence without it).
type ModelLock struct {
	lockout.Entry
	// Layer is "model_lockout" or "model_cooldown", as in Exclusion.Reason.
	Layer string
}

// ModelLocks lists the active model lockouts and model cooldowns.
func (e *Engine) ModelLocks() []ModelLock {
	var out []ModelLock
	for _, x := range e.lockouts.List() {
		out = append(out, ModelLock{Entry: x, Layer: "model_lockout"})
	}
	for _, x := range e.cools.List() {
		out = append(out, ModelLock{Entry: x, Layer: "model_cooldown"})
	}
	return out
}

// ClearModelLocks removes the lockouts and model cooldowns covering model on a
// connection ("" matches any provider / model); returns how many active ones went.
// On a team server the clears are shared: every instance drops them.
func (e *Engine) ClearModelLocks(provider, connectionID, model string) int {
	return e.clearedLockouts(e.lockouts.ClearEntries(provider, connectionID, model)) +
		e.clearedCools(e.cools.ClearEntries(provider, connectionID, model))
}

// ClearConnectionLocks removes every lockout and model cooldown of a connection.
func (e *Engine) ClearConnectionLocks(connectionID string) int {
	return e.clearedLockouts(e.lockouts.ClearConnectionEntries(connectionID)) +
		e.clearedCools(e.cools.ClearConnectionEntries(connectionID))
}

// ClearAllModelLocks removes every lockout and model cooldown.
func (e *Engine) ClearAllModelLocks() int {
	return e.ClearAllLockouts() + e.clearedCools(e.cools.ClearAllEntries())
}

// ClearAllLockouts removes every model lockout (the opt-in layer was turned
// off), leaving the model cooldowns.
func (e *Engine) ClearAllLockouts() int {
	return e.clearedLockouts(e.lockouts.ClearAllEntries())
}

// clearedLockouts and clearedCools share a clear's removed entries and
// return its count of active ones.
func (e *Engine) clearedLockouts(n int, gone []lockout.Entry) int {
	e.shareCleared(store.LayerLockout, gone)
	return n
}

func (e *Engine) clearedCools(n int, gone []lockout.Entry) int {
	e.shareCleared(store.LayerCooldown, gone)
	return n
}
