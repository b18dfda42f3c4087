package gateway

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"omniroute/backend/config"
	"omniroute/backend/errs"
	"omniroute/backend/resilience/gate"
	"omniroute/backend/resilience/queue"
	"omniroute/backend/resilience/verdict"
	"omniroute/backend/routing"
)

// admission is one candidate's passage through the concurrency gate (guide
// §4) and, on a protected connection, the request queue (§5), held until the
// attempt and its same-target retries end. Release is idempotent.
type admission struct {
	permit *gate.Permit
	// held and keys back permit when the gate admits at once: one
	// allocation per admission instead of three.
	held      gate.Permit
	keys      [4]gate.Key
	q         *queue.Queue
	settings  queue.Settings
	protected bool
	// queued is the time spent waiting for a slot, pacing or a pause.
	queued time.Duration
	// reason says what the request waited for ("" when it did not wait).
	reason string
	// execExpired is set when the execution bound (executionMaxWaitMs) ended
	// the attempt.
	execExpired atomic.Bool
	// team releases the connection's team-wide slot (nil: none held).
	team func()
}

func (a *admission) release() {
	if a != nil {
		a.permit.Release()
		if a.team != nil {
			// The slot goes back off the request's goroutine: the answer
			// does not wait for the database statement.
			go a.team()
			a.team = nil
		}
	}
}

// TeamLimits holds a connection's limits across the instances of a team
// server (backend/teamlimits).
type TeamLimits interface {
	// Slot takes one of the connection's max slots before deadline: ok
	// false (nil error) when none came free in time; a nil release with ok
	// when nothing is held (limits per instance, or the database does not
	// answer: the instance's own limit applies alone).
	Slot(ctx context.Context, connectionID string, max int, deadline time.Time) (release func(), ok bool, err error)
	// SlotPair is Slot for two limits at once (a connection's
	// maxConcurrent and a model's cap on it): both slots or neither, in
	// one statement; full names the limit found full when ok is false.
	SlotPair(ctx context.Context, a string, maxA int, b string, maxB int, deadline time.Time) (release func(), ok bool,
		full string, err error)
	// Pace takes and waits for the connection's next dispatch turn, one per
	// interval across the instances; shared false: pace locally.
	// refusedUntil is set when the turn would come after deadline.
	Pace(ctx context.Context, connectionID string, interval time.Duration, now, deadline time.Time) (waited time.Duration,
		refusedUntil time.Time, shared bool, err error)
}

// execCuts reports whether the execution bound, raised to the first-byte
// timeout fb when that is longer, expires together with it: the bound then
// answers 504 RATE_LIMIT_EXECUTION_TIMEOUT instead of failing over. A longer
// bound never cuts a response that has started.
func (a *admission) execCuts(fb time.Duration) bool {
	return a != nil && a.protected && a.settings.ExecutionMaxWait <= fb
}

// errExecution cancels an attempt that reached the execution bound (executionMaxWaitMs).
var errExecution = errors.New("the attempt reached the execution bound (executionMaxWaitMs)")

// settle follows an attempt's outcome: a failure the execution bound caused
// ends the request with 504 RATE_LIMIT_EXECUTION_TIMEOUT (returned), any
// other verdict's body retry hint may pause the queue (nil returned).
func (a *admission) settle(f *failure, done bool, now time.Time) *failure {
	if f == nil || a == nil {
		return nil
	}
	if !done && a.execExpired.Load() {
		return &failure{v: f.v, err: execTimeout(a)}
	}
	a.observe(f.v, now)
	return nil
}

// GateKeys names the composite gate's counters of a candidate, outermost
// first: global → provider → account (the connection) → model (the exact
// upstream model id after routing).
func GateKeys(c routing.Candidate) []gate.Key {
	n := newKeyNames(c)
	k := n.gateKeys(c)
	return k[:]
}

// keyNames are one target's gate counter and queue names.
type keyNames struct{ provider, account, model, queue, teamModel string }

func newKeyNames(c routing.Candidate) *keyNames {
	return &keyNames{provider: "provider:" + c.Conn.BreakerKey, account: AccountKey(c.Conn.ID),
		model: "model:" + c.Conn.ID + "/" + c.Model, queue: QueueKey(c.Conn), teamModel: TeamModelKey(c.Conn.ID, c.Model)}
}

// gateKeys are GateKeys with these names; the limits are read live.
func (n *keyNames) gateKeys(c routing.Candidate) [4]gate.Key {
	return [4]gate.Key{
		{Name: "global"},
		{Name: n.provider},
		{Name: n.account, Limit: c.Conn.Limits.MaxConcurrent},
		{Name: n.model, Limit: c.Conn.Limits.ModelCap(c.Model)},
	}
}

// maxKeyNames bounds the names cache: connections reloaded after an edit are
// new targets, so the cache starts over rather than grow without end.
const maxKeyNames = 4096

// names returns a target's counter and queue names, built once per target
// instead of concatenated on every request.
func (g *Gateway) names(c routing.Candidate) *keyNames {
	t := targetOf(c)
	if n, ok := g.keyNames.Load(t); ok {
		return n.(*keyNames)
	}
	if g.keyNameCount.Add(1) > maxKeyNames {
		g.keyNames.Clear()
		g.keyNameCount.Store(1)
	}
	n, _ := g.keyNames.LoadOrStore(t, newKeyNames(c))
	return n.(*keyNames)
}

// AccountKey is the gate counter of one connection.
func AccountKey(connID string) string { return "account:" + connID }

// QueueKey is the request queue of one connection (provider+connection).
func QueueKey(c *routing.Conn) string { return c.BreakerKey + "|" + c.ID }

// queueSettings resolves a connection's queue settings: env < persisted
// (already in rs) < the connection's rateLimitOverrides.
func queueSettings(rs config.RequestQueue, c *routing.Conn) queue.Settings {
	ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	return queue.Effective(queue.Settings{MaxWait: ms(rs.MaxWaitMs), ExecutionMaxWait: ms(rs.ExecutionMaxWaitMs),
		MaxDepth: rs.MaxQueueDepth}, c.Limits.Queue)
}

// admit takes a candidate through the gate and the queue. The depth check
// comes first, before any other work for this candidate (no translation has
// happened yet); then the gate permit (all counters or none) and the pacing
// turn, both within the wait budget maxWaitMs. A refusal never reaches the
// upstream and blames nobody: no breaker, cooldown or lockout hears of it.
// The error is an *errs.Error, or ctx's error when the client went away; the
// admission is returned either way, with the time spent (a refused one holds
// nothing). It is slot when slot is not nil (the request's first admission,
// which lives in the request).
func (g *Gateway) admit(ctx context.Context, plan *routing.Plan, cand routing.Candidate, slot *admission) (*admission, error) {
	rs := g.resilience()
	a := slot
	if a == nil {
		a = new(admission)
	}
	*a = admission{settings: queueSettings(rs.RequestQueue, cand.Conn), protected: cand.Conn.Protected(rs.RequestQueue.AutoEnableAPIKeyProviders)}
	names := g.names(cand)
	quotaShare := plan.Combo != nil && plan.Combo.Config.QuotaShare
	failOpen := quotaShare && rs.QuotaShareConcurrencyLimit.Enabled
	a.keys = names.gateKeys(cand)
	keys := a.keys[:]
	if quotaShare && !failOpen {
		keys[2].Limit = 0 // quota-share serialisation switched off: the account is only counted
	}
	if !a.protected && (g.team == nil || (keys[2].Limit == 0 && keys[3].Limit == 0)) && g.gate.TryAcquireInto(&a.held, keys) {
		// The common case: no queue on the connection, no team-wide slot to
		// take, and a free slot. Nothing waited, so no clock is read (queued
		// stays 0).
		a.permit = &a.held
		return a, nil
	}
	return g.admitWait(ctx, a, cand, names, keys, failOpen)
}

// admitWait is admit for a protected connection (its queue first) or a
// saturated gate: everything that may wait, timed for the request log.
//
//go:noinline
func (g *Gateway) admitWait(ctx context.Context, a *admission, cand routing.Candidate, names *keyNames, keys []gate.Key, failOpen bool) (*admission, error) {
	start := g.clk.Now()
	// waited: something that may block ran (a team statement, the gate's
	// wait, pacing). Until then the time is still start: no clock is read,
	// and a request that went straight through queued 0.
	waited := false
	defer func() {
		if waited {
			a.queued = g.clk.Now().Sub(start)
		}
	}()
	deadline := start.Add(a.settings.MaxWait)
	if a.protected {
		a.q = g.queues.For(names.queue)
		if err := a.q.Enter(a.settings.MaxDepth); err != nil {
			return a, queueError(err)
		}
		defer a.q.Leave()
		if g.team != nil && a.settings.MaxDepth > 0 {
			waited = true
			leave, err := g.teamQueue(ctx, cand, a.settings.MaxDepth, start)
			if err != nil {
				return a, err
			}
			if leave != nil {
				defer leave()
			}
		}
		// A pause longer than the budget refuses at once, before the gate:
		// waiting for a slot behind a paused request would only burn the
		// budget (docs/CONCURRENCY.md).
		if err := queue.CheckPause(start, a.q.PausedUntil(), deadline); err != nil {
			return a, queueError(err)
		}
	}
	maxWaiting := 0
	if !a.protected && !failOpen {
		maxWaiting = a.settings.MaxDepth // the queue's depth bounds the gate's waiters too
	}
	var permit *gate.Permit
	var err error
	// A protected connection, or one with a team-wide slot to take, has not
	// tried the gate yet (an unprotected one found it full: one more try).
	if g.gate.TryAcquireInto(&a.held, keys) {
		permit = &a.held
	} else {
		waited = true
		permit, err = g.waitGate(ctx, a, keys, maxWaiting, deadline)
	}
	switch {
	case err == nil:
		a.permit = permit
		if permit.WaitedOn != "" {
			a.reason = waitReason(permit.WaitedOn)
		}
	case failOpen && gate.IsTimeout(err):
		a.reason = "quota-share gate fail-open"
	case ctx.Err() != nil:
		return a, ctx.Err()
	default:
		return a, gateError(err, a.protected, a.settings.MaxWait)
	}
	if g.team != nil && (keys[2].Limit > 0 || keys[3].Limit > 0) && a.permit != nil {
		waited = true // a team-wide slot's statement
	}
	if g.team != nil && keys[2].Limit > 0 && keys[3].Limit > 0 && a.permit != nil {
		// Both limits: both slots in one statement, both or neither.
		if err := g.teamSlotPair(ctx, a, cand.Conn.ID, names.teamModel, keys[2], keys[3], deadline); err != nil {
			return a, err
		}
	} else if g.team != nil && keys[2].Limit > 0 && a.permit != nil {
		if err := g.teamSlot(ctx, a, cand.Conn.ID, keys[2], deadline, "connection maxConcurrent (team-wide)"); err != nil {
			return a, err
		}
	} else if g.team != nil && keys[3].Limit > 0 && a.permit != nil {
		if err := g.teamSlot(ctx, a, names.teamModel, keys[3], deadline, "modelConcurrency (team-wide)"); err != nil {
			return a, err
		}
	}
	if a.protected {
		now := start
		if waited {
			now = g.clk.Now()
		}
		paused := a.q.PausedUntil().After(now)
		paced, err := g.pace(ctx, a, cand, now, deadline)
		if err != nil || paced > 0 || g.team != nil {
			waited = true
		}
		if err != nil {
			a.release()
			a.permit = nil
			if ctx.Err() != nil {
				return a, ctx.Err()
			}
			return a, queueError(err)
		}
		if paced > 0 && a.reason == "" {
			a.reason = "pacing (requestsPerMinute / minTimeMs)"
			if paused {
				a.reason = "paused by the upstream's retry hint"
			}
		}
	}
	return a, nil
}

// teamSlot takes one of a limit's slots across a team server's instances
// (slots: the connection's ID for its maxConcurrent, TeamModelKey for a
// modelConcurrency cap) after the instance's own gate admitted the request,
// within the same wait budget; a refusal releases the gate's permit and the
// slots already taken, and answers as the gate does.
func (g *Gateway) teamSlot(ctx context.Context, a *admission, slots string, key gate.Key, deadline time.Time, reason string) error {
	start := g.clk.Now()
	release, ok, err := g.team.Slot(ctx, slots, key.Limit, deadline)
	return g.teamHeld(a, release, ok, err, key, start, reason)
}

// teamSlotPair is teamSlot for a connection's maxConcurrent (slots conn,
// gate key connKey) and a model's cap on it (slots model, modelKey) at
// once: both slots or neither, one statement per try. A refusal names the
// limit found full.
func (g *Gateway) teamSlotPair(ctx context.Context, a *admission, conn, model string, connKey, modelKey gate.Key, deadline time.Time) error {
	start := g.clk.Now()
	release, ok, full, err := g.team.SlotPair(ctx, conn, connKey.Limit, model, modelKey.Limit, deadline)
	key, reason := connKey, "connection maxConcurrent (team-wide)"
	if full == model {
		key, reason = modelKey, "modelConcurrency (team-wide)"
	}
	return g.teamHeld(a, release, ok, err, key, start, reason)
}

// teamHeld keeps a team-wide slot's release in the admission, or answers a
// refusal (key's) as the gate does, giving back the gate's permit and the
// slots already taken.
func (g *Gateway) teamHeld(a *admission, release func(), ok bool, err error, key gate.Key, start time.Time, reason string) error {
	if err == nil && !ok {
		err = gateError(&gate.Error{Code: gate.CodeTimeout, Key: key.Name, Limit: key.Limit}, a.protected, a.settings.MaxWait)
	}
	if err != nil {
		a.release()
		a.permit = nil
		return err
	}
	if prev := a.team; prev != nil && release != nil {
		a.team = func() { release(); prev() }
	} else if release != nil {
		a.team = release
	}
	if a.reason == "" && g.clk.Now().Sub(start) >= 50*time.Millisecond {
		a.reason = reason
	}
	return nil
}

// TeamModelKey names the team-wide slots of one upstream model's
// modelConcurrency cap on a connection among the shared slots.
func TeamModelKey(connID, model string) string { return "model|" + connID + "|" + model }

// teamQueue counts the caller in the connection's queue across a team
// server's instances (maxQueueDepth team-wide): one of MaxDepth queue
// tickets, held like a slot until the caller leaves the queue, taken at once
// or refused with RATE_LIMIT_QUEUE_FULL. leave is nil when nothing is held.
func (g *Gateway) teamQueue(ctx context.Context, cand routing.Candidate, maxDepth int, now time.Time) (leave func(), err error) {
	leave, ok, err := g.team.Slot(ctx, TeamQueueKey(cand.Conn.ID), maxDepth, now)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, queueError(&queue.Error{Code: queue.CodeQueueFull, RetryAfter: time.Second,
			Message: fmt.Sprintf("the connection's request queue is full across the team's instances (maxQueueDepth %d); retry shortly", maxDepth)})
	}
	return leave, nil
}

// TeamQueueKey names a connection's team-wide queue tickets among the
// shared slots (apart from its maxConcurrent slots).
func TeamQueueKey(connID string) string { return "queue|" + connID }

// pace waits for a protected connection's dispatch turn: team-wide on a
// team server whose database answers, else in the instance's queue.
func (g *Gateway) pace(ctx context.Context, a *admission, cand routing.Candidate, now, deadline time.Time) (time.Duration, error) {
	if g.team != nil && a.settings.Interval > 0 {
		if err := queue.CheckPause(now, a.q.PausedUntil(), deadline); err != nil {
			return 0, err
		}
		start := now
		if p := a.q.PausedUntil(); p.After(now) {
			start = p
		}
		waited, refused, shared, err := g.team.Pace(ctx, cand.Conn.ID, a.settings.Interval, start, deadline)
		if shared {
			if err == nil && !refused.IsZero() {
				err = &queue.Error{Code: queue.CodeQueueTimeout, RetryAfter: refused.Sub(now),
					Message: fmt.Sprintf("the connection's pacing (team-wide) has no turn within the wait budget (next in %s)",
						refused.Sub(now).Round(time.Millisecond))}
			}
			return waited, err // the wait includes the pause
		}
	}
	return a.q.Pace(ctx, now, deadline, a.settings.Interval)
}

// errPausedPastBudget ends a gate wait when the connection's queue is
// paused past the caller's budget.
var errPausedPastBudget = errors.New("the connection's queue was paused past the wait budget")

// waitGate waits for the gate's permit within the wait budget. On a
// protected connection a pause declared meanwhile that ends after deadline
// (the request holding the slot met a body retry hint) refuses the caller at
// once with RATE_LIMIT_QUEUE_TIMEOUT instead of letting it wait its budget out.
//
//go:noinline
func (g *Gateway) waitGate(ctx context.Context, a *admission, keys []gate.Key, maxWaiting int, deadline time.Time) (*gate.Permit, error) {
	wctx, cancel := context.WithTimeout(ctx, a.settings.MaxWait)
	defer cancel()
	if !a.protected {
		return g.gate.Acquire(wctx, keys, maxWaiting)
	}
	pctx, stopWait := context.WithCancelCause(wctx)
	defer stopWait(nil)
	var pausedUntil time.Time // written before stopWait, read after Acquire saw it
	stop := a.q.WatchPause(func(until time.Time) {
		if until.After(deadline) {
			pausedUntil = until
			stopWait(errPausedPastBudget)
		}
	})
	permit, err := g.gate.Acquire(pctx, keys, maxWaiting)
	stop()
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(pctx), errPausedPastBudget) {
		return nil, queueError(queue.CheckPause(g.clk.Now(), pausedUntil, deadline))
	}
	return permit, err
}

// observe feeds an attempt's verdict to the queue: a body-declared retry hint
// (Gemini RetryInfo, "retry after Ns" text) pauses a protected connection's
// queue, unless it is a typed Google RetryInfo longer than maxWaitMs — that
// one is an exact model lockout (the engine records it) and the queue keeps
// serving the connection's other models.
func (a *admission) observe(v verdict.Verdict, now time.Time) {
	if a == nil || !a.protected || v.RetryAfter <= 0 {
		return
	}
	switch v.Kind {
	case verdict.KindRateLimit, verdict.KindConcurrencyLimit, verdict.KindQuota:
	default:
		if v.Status != 429 {
			return
		}
	}
	switch v.HintSource {
	case verdict.HintGoogleRPCRetryInfo:
		if v.RetryAfter > a.settings.MaxWait {
			return
		}
	case verdict.HintBody:
	default:
		return
	}
	a.q.Pause(now.Add(min(v.RetryAfter, queue.MaxWait)))
}

func waitReason(key string) string {
	switch {
	case len(key) > 8 && key[:8] == "account:":
		return "connection maxConcurrent"
	case len(key) > 6 && key[:6] == "model:":
		return "modelConcurrency"
	}
	return "concurrency gate"
}

// queueError maps a queue refusal to the wire: 503 with Retry-After.
func queueError(err error) error {
	var qe *queue.Error
	if !errors.As(err, &qe) {
		return err
	}
	return errs.New(errs.Unavailable, qe.Code, "%s", qe.Message).WithRetryAfter(max(qe.RetryAfter, time.Second))
}

// gateError maps a gate refusal: on a protected connection the wait budget is
// the queue's (RATE_LIMIT_QUEUE_TIMEOUT), otherwise the gate's own codes.
func gateError(err error, protected bool, budget time.Duration) error {
	var ge *gate.Error
	if !errors.As(err, &ge) {
		return err
	}
	if ge.Code == gate.CodeTimeout && protected {
		return queueError(queue.Timeout(budget))
	}
	return errs.New(errs.Unavailable, ge.Code, "%s", ge.Error()).WithRetryAfter(time.Second)
}

// execTimeout is the 504 of an execution bound that ended an attempt.
func execTimeout(a *admission) error {
	return errs.New(errs.Timeout, queue.CodeExecutionTimeout,
		"the upstream did not answer within the execution bound (executionMaxWaitMs %d, raised to the first-byte timeout); the upstream request was cancelled",
		a.settings.ExecutionMaxWait.Milliseconds())
}

// resilience returns the live resilience settings (the guide's defaults when
// the gateway was built without them).
func (g *Gateway) resilience() *config.Resilience {
	if g.resil != nil {
		return g.resil()
	}
	d := config.DefaultResilience(func(string) string { return "" })
	return &d
}

// AdmissionState is the live gate and queue state of one connection.
type AdmissionState struct {
	InFlight int `json:"inFlight"`
	// Waiting counts callers waiting for the connection's gate counter.
	Waiting int `json:"waiting"`
	// Queued counts callers in the connection's request queue (not yet dispatched).
	Queued int `json:"queued"`
	// PausedUntil is the end of a body-hint pause (zero: none).
	PausedUntil time.Time `json:"-"`
}

// Admission reports a connection's live gate and queue counters.
func (g *Gateway) Admission(c *routing.Conn) AdmissionState {
	cnt := g.gate.Get(AccountKey(c.ID))
	st := AdmissionState{InFlight: cnt.InFlight, Waiting: cnt.Waiting}
	if q, ok := g.queues.Get(QueueKey(c)); ok {
		st.Queued, st.PausedUntil = q.Queued(), q.PausedUntil()
	}
	return st
}

// AdmissionIdle reports whether no gate permit is held, nobody waits and
// every queue is empty (tests check it after load).
func (g *Gateway) AdmissionIdle() bool { return g.gate.Idle() && g.queues.Queued() == 0 }

// noteAdmission records a candidate's queue time and wait reason, or the code
// that refused it, for the request log (times summed over candidates; the last
// reason wins).
func (req *request) noteAdmission(a *admission, refused error) {
	req.adm = a
	req.log.QueueMs += a.queued.Milliseconds()
	if code := refusalCode(refused); code != "" {
		req.log.QueueReason = code
	} else if a.reason != "" {
		req.log.QueueReason = a.reason
	}
}

// refusalCode is the code of an admission refusal ("" for none), apart from
// noteAdmission so the errors.As target is allocated only on a refusal.
func refusalCode(refused error) string {
	if refused == nil {
		return ""
	}
	var e *errs.Error
	if errors.As(refused, &e) {
		return e.Code
	}
	return ""
}
