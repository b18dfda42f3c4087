package gateway

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/clock"
	"omniroute/backend/errs"
	"omniroute/backend/jsonv"
	"omniroute/backend/pricing"
	"omniroute/backend/providers"
	"omniroute/backend/resilience/affinity"
	"omniroute/backend/resilience/verdict"
	"omniroute/backend/routing"
	"omniroute/backend/store"
	"omniroute/backend/translate"
)

type storeLog = store.RequestLog

// errFirstByteTimeout cancels an attempt whose upstream sent nothing in time.
var errFirstByteTimeout = errors.New("no response from upstream before the first-byte deadline")

// maxErrorBody bounds how much of an upstream error body is read for classification.
const maxErrorBody = 16 << 10

// maxResponseBody bounds a buffered (non-streaming) upstream response.
const maxResponseBody = 64 << 20

// run is the attempt loop: plan (a model or a combo, ordered, with every
// exclusion and its reason), then each candidate admitted through the
// resilience layers right before dispatch, failover on retryable verdicts only,
// bounded in-place retries of the transient, a hard cap on attempts and on
// time, and cooldown-aware waiting for combos when only short transient timers
// block (including the ones this request's own failures wrote). A failure
// excludes only the scope its verdict names: the target for a model-scoped
// failure, the whole connection only for account-level evidence.
func (g *Gateway) run(w http.ResponseWriter, r *http.Request, req *request) error {
	budget, maxAttempts := g.attemptLimits()
	lease, err := g.startPlan(r, req)
	if err != nil {
		return err
	}
	rs := &req.round
	rs.reset()
	clear(rs.countedBuf[:]) // no composite literal: its temporary would sit in run's frame, under every open stream
	rs.counted, rs.undenied = rs.countedBuf[:0], false
	var last *failure
	var refused error // the last admission refusal (gate or queue)
	plan := &req.plan
	waits := 0
	for {
		if err := g.planRound(req, lease); err != nil {
			return err
		}
		excluded := plan.Excluded
		queue := plan.Candidates
		for len(queue) > 0 {
			cand := queue[0]
			queue = queue[1:]
			if rs.wasTried(targetOf(cand)) {
				continue
			}
			if x := rs.skip(cand); x != nil {
				excluded = addExclusion(excluded, x)
				continue
			}
			if len(req.attempts) >= maxAttempts || g.clk.Now().Sub(req.start) > budget {
				queue = nil
				break
			}
			rs.tried = append(rs.tried, targetOf(cand))
			if x := g.toolLimitExclusion(cand, req); x != nil {
				excluded = addExclusion(excluded, x)
				continue
			}
			f, done, x := g.tryTarget(w, r, req, plan, cand, lease)
			if x != nil {
				excluded = addExclusion(excluded, x)
			}
			if f == nil && !done {
				continue
			}
			if done {
				g.pin(req.planIn.SessionKey, cand)
				return nil
			}
			if f.err != nil {
				return f.err
			}
			if f.clientGone {
				return nil
			}
			if f.refused != nil {
				refused = f.refused
				continue
			}
			last = f
			rs.undenied = rs.undenied || !deniedAccess(&f.v)
			rs.exclude(cand, &f.v)
			if f.v.Kind == verdict.KindContextLength && plan.Combo != nil {
				// A larger-context target, not the same model again.
				if larger := g.engine.LargerContext(plan.Combo, cand, queue); len(larger) > 0 {
					queue = larger
					continue
				}
			}
			if !f.v.Failover {
				req.upstreamStatus = f.v.Status
				return f.clientError()
			}
		}
		wait, ok := g.endRound(req, excluded, waits)
		if !ok {
			break
		}
		waits++
		if err := g.waitStep(r, req, wait); err != nil {
			return nil // the client went away while waiting
		}
		rs.reset()
	}
	return g.runFailed(req, plan, last, refused)
}

// addExclusion appends *x to excluded (out of line: no copy of an exclusion
// in the attempt loop's frame, which stays on the stack under every attempt).
//
//go:noinline
func addExclusion(excluded []routing.Exclusion, x *routing.Exclusion) []routing.Exclusion {
	return append(excluded, *x)
}

// startPlan sets the request's plan input: its model, access and session, or
// the lease it runs under.
//
//go:noinline
func (g *Gateway) startPlan(r *http.Request, req *request) (*leaseCtx, error) {
	in := &req.planIn
	*in = routing.PlanInput{Model: req.model, Access: req.client.access(), SessionKey: sessionKey(r)}
	lease, err := g.leaseContext(r, req)
	if err != nil {
		return nil, err
	}
	if lease != nil {
		in.LeaseOwner, in.LeaseConnection, in.SessionKey = lease.ownerHash, lease.connectionID, ""
	}
	if !req.candsUsed { // the first plan's candidates live in the request
		req.candsUsed, in.Buf = true, req.firstCands[:0]
	}
	return lease, nil
}

// planRound plans a round into req.plan. A leased request whose connection
// left routing moves its lease to another free eligible connection under the
// normal rules, in the same generation.
//
//go:noinline
func (g *Gateway) planRound(req *request, lease *leaseCtx) error {
	in := &req.planIn
	plan, err := g.engine.Plan(*in)
	in.Buf = nil // later plans (rounds, the picture after one) get their own
	if err != nil {
		return err
	}
	if lease != nil && len(plan.Candidates) == 0 {
		if plan, err = g.moveLease(req.client.KeyID, *in, lease); err != nil {
			return err
		}
		in.LeaseConnection = lease.connectionID
	}
	req.plan, req.planned = plan, true
	if lease == nil {
		g.claimPin(req)
	}
	return nil
}

// claimPin decides a session's pin before its first attempt is dispatched:
// the plan's first choice is claimed (moved from the pin the plan saw, if
// any; a new session over the accounts of its spread), and when another
// instance pinned the session first, or the occupancy at the claim chose
// another account of the spread (the team's on a team server, this
// instance's reservations on one), that connection, if a candidate, goes
// first.
//
//go:noinline
func (g *Gateway) claimPin(req *request) {
	key, c := req.planIn.SessionKey, req.plan.Candidates
	if key == "" || g.pins == nil || len(c) == 0 {
		return
	}
	won := g.pins.Claim(key, c[0].Conn.ID, c[0].Conn.BreakerKey, req.plan.Pinned, g.spreadOf(&req.plan))
	if won == c[0].Conn.ID {
		return
	}
	for i := 1; i < len(c); i++ {
		if c[i].Conn.ID == won {
			first := c[i]
			copy(c[1:i+1], c[:i])
			c[0] = first
			return
		}
	}
}

// spreadOf is a new session's spread for its pin claim: the plan's leading
// accounts its spread ordered (routing.Plan.Spread). A team server's
// database picks the least occupied of them team-wide; a single instance's
// pin table reserves the least occupied here, in one step with the pin, so
// a burst of new sessions planned on the same occupancy still spreads.
//
//go:noinline
func (g *Gateway) spreadOf(plan *routing.Plan) affinity.Spread {
	n := plan.Spread
	if n < 2 || plan.Pinned != "" || n > len(plan.Candidates) {
		return affinity.Spread{}
	}
	accounts := make([]affinity.Account, n)
	for i, c := range plan.Candidates[:n] {
		accounts[i] = affinity.Account{ConnectionID: c.Conn.ID, Provider: c.Conn.BreakerKey}
	}
	return affinity.Spread{Pool: plan.Candidates[0].Conn.Provider.ID, Accounts: accounts}
}

// endRound takes the picture after a round (the layers' exclusions now and
// the round's own) and decides whether to wait for a cooldown and go again.
//
//go:noinline
func (g *Gateway) endRound(req *request, excluded []routing.Exclusion, waits int) (time.Duration, bool) {
	req.plan.Excluded, req.round.eligibleNow = g.currentExclusions(req.planIn, excluded)
	return g.cooldownWait(req.plan, req, waits)
}

// attemptLimits is the request's cap on attempts and on retry time.
//
//go:noinline
func (g *Gateway) attemptLimits() (budget time.Duration, maxAttempts int) {
	set := g.general()
	return time.Duration(set.RetryBudgetMs) * time.Millisecond, set.MaxAttempts
}

// waitStep records a cooldown wait in the request's steps and sleeps it; an
// error means the client went away.
//
//go:noinline
func (g *Gateway) waitStep(r *http.Request, req *request, wait time.Duration) error {
	req.steps = append(req.steps, AttemptRecord{Verdict: "wait", Code: "cooldown_wait", StartMs: msSince(req.start, g.clk.Now()),
		LatencyMs: wait.Milliseconds()})
	return clock.Sleep(r.Context(), wait)
}

// runFailed ends a request no target served: the last admission refusal, or
// the terminal error with every exclusion kept in the log.
//
//go:noinline
func (g *Gateway) runFailed(req *request, plan *routing.Plan, last *failure, refused error) error {
	if last == nil && refused != nil {
		return refused
	}
	if last == nil {
		// Refused without an upstream answer: the log keeps every exclusion and its reason.
		at := msSince(req.start, g.clk.Now())
		for _, x := range plan.Excluded {
			req.steps = append(req.steps, AttemptRecord{ConnectionID: x.ConnectionID, Provider: x.Provider, Model: x.Model,
				Verdict: "excluded", Code: x.Reason, Detail: x.Detail, StartMs: at, RemainingMs: x.Remaining.Milliseconds()})
		}
	}
	g.logAllExcluded(*plan, req)
	return terminalError(req, last, *plan, g.clk.Now())
}

// round is one pass over the plan: which targets were attempted and which
// connections failed at account level (excluded whole, with the reason). A
// request tries a handful of targets, so short slices (in the request, reused
// by each round) serve where maps would cost allocations or stack.
type round struct {
	// bill is the served answer's model and usage, for pricing (kept only
	// when the gateway has a Spend hook).
	bill      bill
	tried     []target     // targets attempted in this round
	exhausted []exhaustion // connections failed at account level
	triedBuf  [4]target
	exhBuf    [2]exhaustion
	// counted are the targets whose recoverable failure (5xx, reset,
	// timeout) this request already counted towards the failure streaks, kept
	// across rounds (reset only by run): one request alone never cools a
	// connection or a model (guide §2), whatever its in-place retries.
	counted    []target
	countedBuf [2]target
	// undenied: some attempt of this request failed for another reason than
	// a permanent access denial (kept across rounds, reset only by run).
	undenied bool
	// eligibleNow: after the last round, some target of the plan may be
	// tried now (endRound).
	eligibleNow bool
}

// deniedAccess reports a permanent denial of the model on this account
// (agentrouter's "无权访问模型", GLM's 1220): a rule's model-scoped
// forbidden, which locks the model and never passes by retrying.
func deniedAccess(v *verdict.Verdict) bool {
	return v.Kind == verdict.KindForbidden && v.ModelLock > 0
}

// streaksCounted says which failure streaks this request already added to
// for c: its target's, its connection's (through any of its models) and its
// provider breaker's (through any of its connections).
// Out of line, as noteFailure: tryTarget's frame sits under every open stream.
//
//go:noinline
func (rs *round) streaksCounted(c routing.Candidate) routing.Counted {
	var n routing.Counted
	for _, t := range rs.counted {
		if t.conn.BreakerKey == c.Conn.BreakerKey {
			n.Provider = true
		}
		if t.conn == c.Conn {
			n.Conn = true
			if t.model == c.Model {
				n.Target = true
			}
		}
	}
	return n
}

// noteFailure records a failed attempt's target when its failure counted
// towards the streaks.
//
//go:noinline
func (rs *round) noteFailure(c routing.Candidate, v *verdict.Verdict) {
	if v.Kind != verdict.KindServer && v.Kind != verdict.KindTransport && v.Kind != verdict.KindTimeout {
		return
	}
	t := targetOf(c)
	for _, x := range rs.counted {
		if x == t {
			return
		}
	}
	rs.counted = append(rs.counted, t)
}

// exhaustion is a connection's account-level failure in a round.
type exhaustion struct {
	conn string // connection id
	code string // the failure's code
}

// reset starts a new round.
func (rs *round) reset() { rs.tried, rs.exhausted = rs.triedBuf[:0], rs.exhBuf[:0] }

// target identifies a candidate within one request (as Candidate.Key does,
// without building a string).
type target struct {
	conn  *routing.Conn
	model string
}

func targetOf(c routing.Candidate) target { return target{c.Conn, c.Model} }

// wasTried reports whether t was attempted in this round.
func (rs *round) wasTried(t target) bool {
	for _, x := range rs.tried {
		if x == t {
			return true
		}
	}
	return false
}

// exclude applies a failure's scope: the target is always done for the round;
// the connection only when the verdict blames the account (a connection
// cooldown or a terminal state). Model-scoped failures leave the connection's
// other models to be tried.
func (rs *round) exclude(c routing.Candidate, v *verdict.Verdict) {
	if !v.CoolConnection && v.Terminal == "" {
		return
	}
	for i := range rs.exhausted {
		if rs.exhausted[i].conn == c.Conn.ID {
			rs.exhausted[i].code = v.Code
			return
		}
	}
	rs.exhausted = append(rs.exhausted, exhaustion{conn: c.Conn.ID, code: v.Code})
}

// skip returns the exclusion of a candidate whose connection failed at account
// level earlier in this round, so no target is left out without a reason.
func (rs *round) skip(c routing.Candidate) *routing.Exclusion {
	for _, x := range rs.exhausted {
		if x.conn == c.Conn.ID {
			return &routing.Exclusion{ConnectionID: c.Conn.ID, Provider: c.Conn.BreakerKey, Model: c.Model,
				Reason: "connection_failed", Detail: x.code}
		}
	}
	return nil
}

// currentExclusions is the up-to-date picture after a round: the layers'
// exclusions now (cooldowns and locks this request's own failures wrote
// included) plus the round's own refusals that the layers do not record.
//
// eligible reports whether some target may be tried now (a target that
// failed without being locked may): when none may, the failure is answered
// as the timers that hold them (503 with the soonest return), not as 502.
func (g *Gateway) currentExclusions(in routing.PlanInput, round []routing.Exclusion) (_ []routing.Exclusion, eligible bool) {
	in.DryRun = true
	fresh, err := g.engine.Plan(in)
	if err != nil {
		return round, true
	}
	out := fresh.Excluded
	seen := make(map[string]bool, len(out))
	for _, x := range out {
		seen[x.ConnectionID+"|"+x.Model] = true
	}
	for _, x := range round {
		if !seen[x.ConnectionID+"|"+x.Model] {
			out = append(out, x)
		}
	}
	return out, len(fresh.Candidates) > 0
}

// tryTarget admits and attempts one candidate, retrying a transient failure in
// place (see retryDelay) within the attempt cap and the time budget.
func (g *Gateway) tryTarget(w http.ResponseWriter, r *http.Request, req *request, plan *routing.Plan, cand routing.Candidate,
	lease *leaseCtx) (*failure, bool, *routing.Exclusion) {
	retries := g.retriesPerTarget(plan)
	budget, maxAttempts := g.attemptLimits()
	adm, refused := g.admitTarget(r, req, plan, cand)
	if refused != nil {
		return refused, false, nil
	}
	defer adm.release()
	var prev *failure
	for attempt := 0; ; attempt++ {
		var slot *routing.Ticket
		if !req.ticketUsed { // the request's first ticket lives in the request
			req.ticketUsed, slot = true, &req.firstTicket
		}
		ticket, x := g.engine.AdmitIn(cand, slot)
		if x != nil {
			// Refused now; after a failed attempt the real failure still stands.
			return prev, false, x
		}
		ticket.Combo = plan.Combo
		ticket.Counted = req.round.streaksCounted(cand)
		ticket.Queued = adm.protected
		if lease != nil {
			if err := g.leases.Fence(req.client.KeyID, lease.owner, lease.generation, cand.Conn.ID); err != nil {
				ticket.Abandon()
				return &failure{err: err}, false, nil
			}
		}
		f, done := g.attempt(w, r, req, cand, ticket)
		if f == nil {
			return nil, done, nil // served: nothing to settle (no clock read)
		}
		req.round.noteFailure(cand, &f.v)
		if end := adm.settle(f, done, g.clk.Now()); end != nil {
			return end, false, nil
		}
		if done || f.err != nil || f.clientGone || attempt >= retries || len(req.attempts) >= maxAttempts {
			return f, done, nil
		}
		delay, ok := g.retryWithin(f, attempt, req, budget)
		if !ok {
			return f, false, nil
		}
		prev = f
		if clock.Sleep(r.Context(), delay) != nil {
			return &failure{v: f.v, clientGone: true}, false, nil
		}
	}
}

// admitTarget takes the candidate's admission (gate and queue); a refusal
// comes back as the failure the loop moves on from.
//
//go:noinline
func (g *Gateway) admitTarget(r *http.Request, req *request, plan *routing.Plan, cand routing.Candidate) (*admission, *failure) {
	adm, refused := g.admit(r.Context(), plan, cand, req.firstSlot(&req.admUsed, &req.firstAdm))
	req.noteAdmission(adm, refused)
	if refused != nil {
		return nil, &failure{refused: refused, clientGone: r.Context().Err() != nil}
	}
	return adm, nil
}

// retryWithin is retryDelay for a failed attempt, kept within the request's
// retry budget.
//
//go:noinline
func (g *Gateway) retryWithin(f *failure, attempt int, req *request, budget time.Duration) (time.Duration, bool) {
	delay, ok := g.retryDelay(f.v, attempt)
	if !ok || g.clk.Now().Add(delay).Sub(req.start) > budget {
		return 0, false
	}
	return delay, true
}

// retriesPerTarget is how many in-place retries a target gets: the combo's
// maxRetriesPerTarget, or failover.retriesPerTarget for a plain model.
func (g *Gateway) retriesPerTarget(plan *routing.Plan) int {
	if plan.Combo != nil {
		if n := plan.Combo.Config.MaxRetriesPerTarget; n != nil {
			return *n
		}
		return 1
	}
	if g.resil == nil {
		return 1
	}
	return g.resil().Failover.RetriesPerTarget
}

// retryDelay decides whether a failed attempt is retried on the same target
// and after how long: a 5xx or a reset before the first byte (after the
// upstream's hint, else a short jittered backoff), and a 429 whose hint is at
// most failover.retryMaxHintMs (after the hint plus jitter, so the cooldown the
// 429 wrote has passed). Timeouts, account-level failures without a short
// hint and everything else move on at once.
func (g *Gateway) retryDelay(v verdict.Verdict, attempt int) (time.Duration, bool) {
	maxHint := 5 * time.Second
	if g.resil != nil {
		maxHint = time.Duration(g.resil().Failover.RetryMaxHintMs) * time.Millisecond
	}
	switch v.Kind {
	case verdict.KindServer, verdict.KindTransport:
		if v.CoolConnection || v.RetryAfter > maxHint {
			return 0, false
		}
		return backoff(attempt, v.RetryAfter), true
	case verdict.KindRateLimit, verdict.KindConcurrencyLimit:
		if v.RetryAfter <= 0 || v.RetryAfter > maxHint {
			return 0, false
		}
		return backoff(attempt, v.RetryAfter), true
	}
	return 0, false
}

// backoff is the in-place retry delay: the upstream's hint plus up to 10 %
// jitter (never less than the hint: the cooldown it wrote must have passed),
// otherwise 250 ms doubling per retry with up to 25 % jitter.
func backoff(attempt int, hint time.Duration) time.Duration {
	if hint > 0 {
		return hint + retryMargin + time.Duration(rand.Int64N(int64(hint/10)+1))
	}
	d := 250 * time.Millisecond << attempt
	return d + time.Duration(rand.Int64N(int64(d/4)+1))
}

// retryMargin keeps an in-place retry after a hint clear of the cooldown
// boundary the hint wrote.
const retryMargin = 20 * time.Millisecond

// cooldownWait decides whether a combo request waits out a short transient
// exclusion instead of failing (comboCooldownWait): only rate-limit-class
// locks (guide §4: a 429 window, never quota, auth, not-found, nor a broken
// upstream's 5xx, transport, timeout or open-breaker timer, which are answered
// at once with their Retry-After), within maxWaitMs, the attempt count and the
// time budget. plan.Excluded is the current picture, so the cooldowns this
// request's own failures wrote count too.
func (g *Gateway) cooldownWait(plan routing.Plan, req *request, waits int) (time.Duration, bool) {
	if plan.Combo == nil || g.resil == nil {
		return 0, false
	}
	cw := g.resil().ComboCooldownWait
	if !cw.Enabled || waits >= cw.MaxAttempts {
		return 0, false
	}
	var soonest time.Duration
	for _, x := range plan.Excluded {
		if !x.Transient || x.Remaining <= 0 || !waitable(x) {
			continue
		}
		if soonest == 0 || x.Remaining < soonest {
			soonest = x.Remaining
		}
	}
	maxWait := time.Duration(cw.MaxWaitMs) * time.Millisecond
	left := time.Duration(cw.BudgetMs)*time.Millisecond - g.clk.Now().Sub(req.start)
	if soonest <= 0 || soonest > maxWait || soonest > left {
		return 0, false
	}
	return soonest + 50*time.Millisecond, true
}

// waitable reports an exclusion a combo may wait out: a model lock or
// cooldown written by a rate or concurrency limit, a connection cooled by
// one, or a restated quota's short declared window. A leased connection, an
// open breaker and a lock a broken upstream wrote are not: waiting on them
// held every request for the breaker's reset and then failed it anyway.
func waitable(x routing.Exclusion) bool {
	if x.Reason == "connection_cooldown" && x.Detail == "quota_restated" {
		return true
	}
	return rateLimitExclusion(x) && x.Cause != verdict.CodeQuotaExhausted
}

// sessionKey reads the session affinity headers (never forwarded upstream).
func sessionKey(r *http.Request) string {
	for _, h := range []string{"X-Session-Id", "X-Codex-Session-Id", "X-Omniroute-Session"} {
		if v := r.Header.Get(h); v != "" {
			return affinity.Key(v)
		}
	}
	return ""
}

func (g *Gateway) pin(key string, c routing.Candidate) {
	if key == "" || g.pins == nil {
		return
	}
	_ = g.pins.Served(key, c.Conn.ID, c.Conn.BreakerKey)
}

// failure is a failed attempt the loop may fail over from.
type failure struct {
	v          verdict.Verdict
	clientGone bool
	// err ends the request at once (e.g. a request that cannot be translated).
	err error
	// refused is an admission refusal (gate or queue): the next candidate is
	// tried, and it is the answer when no candidate serves.
	refused error
	// upCode and upParam are the upstream's own error.code and error.param
	// (an OpenAI-shaped error body), relayed with its client error.
	upCode, upParam string
}

func (f *failure) clientError() error {
	e := errs.New(errs.Upstream, f.v.Code, "%s", f.v.Message)
	e.UpstreamCode = f.upCode
	if f.upParam != "" {
		e.Param = f.upParam
	}
	switch f.v.Kind {
	case verdict.KindBadRequest, verdict.KindContextLength, verdict.KindContentPolicy:
		e.Class = errs.Invalid
	case verdict.KindNotFound:
		e.Class = errs.NotFound
	}
	return e
}

// attemptCtx bundles one attempt's state for the relays.
type attemptCtx struct {
	g      *Gateway
	w      http.ResponseWriter
	r      *http.Request
	req    *request
	cand   routing.Candidate
	codec  codec
	ctx    context.Context
	cancel context.CancelCauseFunc
	t0     time.Time
	fb     time.Duration // the first-byte timeout in effect
	// hdrShort is how much shorter the wait for a stream's headers is than
	// fb (streamFirstByteTimeoutMs); headersIn gives it back.
	hdrShort time.Duration
	resp     *http.Response   // the upstream's answer, closed by end
	target   providers.Target // where the attempt goes (the executor reads it)
	rec      AttemptRecord
	ticket   *routing.Ticket
	// deliveredEndsInSpace: the text this broken attempt delivered ended in
	// white space, which its continuation's prefill leaves out.
	deliveredEndsInSpace bool
	// delivered is the text this broken attempt delivered, which a
	// continuation must not repeat (repeatGuard).
	delivered string
	// tm is the attempt's one timer, from the gateway's pool: first byte,
	// then the stream watchdog (startTimer).
	tm *attemptTimer
	// stream is the relay state of a streamed answer (newStreamState).
	stream streamState
	// served backs the values of the headers naming what served the answer,
	// and clen the digits of its Content-Length (written once).
	served servedValues
	clen   [20]byte
	// callStore backs the upstream request's URL, header values and body reader.
	callStore providers.CallStorage
	// answeredAt is when the upstream's answer headers arrived (call): the
	// time its rate windows and quota headers are read at.
	answeredAt time.Time
}

func (a *attemptCtx) finish(v verdict.Verdict) {
	a.ticket.Finish(v)
	a.rec.Verdict, a.rec.Code, a.rec.LatencyMs = string(v.Kind), v.Code, msSince(a.t0, a.g.clk.Now())
	if v.Kind != verdict.KindSuccess && a.rec.Detail == "" {
		// The upstream's or the transport's own words ("unexpected EOF",
		// "connection refused", the upstream's error message), without the
		// connection's credential: the log says what the client was told.
		a.rec.Detail = attemptDetail(v.Message, a.r, a.cand)
	}
	a.req.attempts = append(a.req.attempts, a.rec)
	if a.g.meter != nil {
		a.g.meter.Attempt(a.rec.Provider, a.rec.Verdict)
	}
}

// attempt runs one upstream attempt. done is true when a response (success, or
// an error after bytes were committed) has been written to the client.
//
// Its frame stays on the stack for as long as a stream is relayed, under
// every frame of the relay and of net/http's writes: the work that needs
// large locals (setting up, the upstream call, failures) is done in helpers
// that have returned by then, so an open stream fits an 8 KiB stack.
func (g *Gateway) attempt(w http.ResponseWriter, r *http.Request, req *request, cand routing.Candidate, ticket *routing.Ticket) (f *failure, done bool) {
	a := g.newAttempt(w, r, req, cand, ticket)
	defer a.end()
	resp, f := a.call()
	if f != nil {
		return f, false
	}
	a.resp = resp
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return a.upstreamFailure(resp), false
	}
	observeQuota(ticket, resp.Header, a.answeredAt)
	if req.stream && isEventStream(resp) {
		if a.hdrShort > 0 {
			a.headersIn()
		}
		return a.relayStream(resp)
	}
	return a.relayJSON(resp)
}

// newAttempt sets up the attempt's state: in the request for its first
// attempt (no allocation), else in a new one.
//
//go:noinline
func (g *Gateway) newAttempt(w http.ResponseWriter, r *http.Request, req *request, cand routing.Candidate, ticket *routing.Ticket) *attemptCtx {
	var a *attemptCtx
	if req.attemptUsed {
		a = new(attemptCtx)
	} else { // the request's first attempt lives in the request
		req.attemptUsed, a = true, &req.firstAttempt
		*a = attemptCtx{}
	}
	now := g.clk.Now()
	a.g, a.w, a.r, a.req, a.cand, a.t0, a.ticket = g, w, r, req, cand, now, ticket
	a.codec = codecFor(req.format, &cand.Conn.Provider, cand.Model)
	if translate.IsOllama(req.format) {
		a.codec.now = g.wall.Now // only these stamp their answers: no method value per chat attempt
	}
	a.codec.gemini = req.gemini
	if a.codec.upstream == translate.GeminiEmbed {
		geminiEmbedTarget(&a.codec, cand.Conn.Provider.Dialect, cand.Model)
	}
	a.rec.ConnectionID, a.rec.Provider, a.rec.Model = cand.Conn.ID, cand.Conn.BreakerKey, cand.Model
	a.rec.StartMs = msSince(req.start, now)
	return a
}

// geminiEmbedTarget completes an embeddings codec to a Gemini-wire target:
// the batch names the target's model; a Gemini dialect (a provider
// module's) has no batchEmbedContents here, so its codec is left on the plain
// Gemini wire, which unsupported() passes over.
//
//go:noinline
func geminiEmbedTarget(c *codec, dialect providers.Dialect, model string) {
	if dialect != "" {
		c.upstream = translate.Gemini
		return
	}
	c.gemini.model = model
}

// end, deferred by attempt, closes the upstream answer, stops the attempt's
// timer and cancels its context (once call made one); after a panic it also
// gives the ticket back before the panic goes on. One deferred call keeps
// attempt's frame small.
func (a *attemptCtx) end() {
	p := recover()
	if a.resp != nil {
		a.resp.Body.Close()
	}
	a.stopTimer()
	if a.cancel != nil {
		a.cancel(nil)
	}
	if p != nil {
		a.ticket.Abandon()
		panic(p)
	}
}

// call sends the upstream request under the attempt's context and timer.
// A failure before an answer (no executor, no body, transport error) comes
// back as the failure, with the attempt finished. Its helpers are out of
// line: the transport's frames sit on top of this one while it waits.
//
//go:noinline
func (a *attemptCtx) call() (*http.Response, *failure) {
	exec, body, f := a.prepare()
	if f != nil {
		return nil, f
	}
	resp, err := a.callUpstream(exec, body)
	if err != nil {
		return nil, a.transportFailure(err)
	}
	a.answeredAt = a.g.clk.Now() // the answer's headers arrived: its windows and quota are read at this time
	observeWindows(a.ticket, a.cand.Conn, resp.Header, a.answeredAt)
	if a.req.cap != nil {
		a.captureAnswer(resp)
	}
	a.rec.Status = resp.StatusCode
	return resp, nil
}

// prepare finds the executor, builds the upstream body and starts the
// attempt's context and timer.
//
//go:noinline
func (a *attemptCtx) prepare() (providers.Executor, []byte, *failure) {
	g, req, cand := a.g, a.req, a.cand
	format := cand.Conn.Provider.FormatOf(cand.Model)
	exec, ok := g.executors.For(format)
	if !ok || a.codec.unsupported() {
		a.ticket.Abandon()
		v := verdict.Verdict{Kind: verdict.KindBadRequest, Failover: true, Code: "FORMAT_NOT_SUPPORTED",
			Message: "this gateway cannot speak " + string(format) + " to " + cand.Conn.Provider.ID}
		if ok {
			v.Message = cand.Conn.Provider.ID + " (" + string(format) + " wire) serves no " + string(req.format) + " endpoint"
		}
		a.rec.Verdict, a.rec.Code, a.rec.Detail = string(v.Kind), v.Code, attemptDetail(v.Message, a.r, cand)
		req.attempts = append(req.attempts, a.rec)
		return nil, nil, &failure{v: v}
	}
	body, err := req.upstreamBody(a.codec)
	if err == nil {
		body, err = targetBody(&cand.Conn.Provider, format, a.codec, body)
	}
	if err != nil {
		a.ticket.Abandon()
		return nil, nil, &failure{err: err}
	}
	a.target = cand.Conn.Target(cand.Model)
	if req.cap != nil {
		a.captureUpstream(body)
	}
	set := g.general()
	a.fb = time.Duration(set.FirstByteTimeoutMs) * time.Millisecond
	a.ctx, a.cancel = context.WithCancelCause(a.r.Context())
	hdr := a.fb
	if req.stream && cand.Conn.Category() != "local" && !waitsAtTheWall(a.target.Account) {
		// A stream's headers come at once: a shorter wait for them
		// (streamFirstByteTimeoutMs), the long one for its first frame.
		hdr = min(hdr, time.Duration(set.StreamFirstByteTimeoutMs)*time.Millisecond)
	}
	a.hdrShort = a.fb - hdr
	a.startTimer(hdr, req.adm.execCuts(hdr))
	return exec, body, nil
}

// waitsAtTheWall reports an account opted into the usage wall's low-priority
// lane or limit reset (guide §2): its executor may wait before the headers
// (slot_busy pauses, a reset claim) within the request's first-byte budget,
// so the short header wait of streams does not apply to it: the executor
// judges its waits against the same deadline the attempt's timer keeps.
func waitsAtTheWall(acc providers.Account) bool { return acc.LowPriorityMode || acc.AutoLimitReset }

// headersIn gives a stream whose headers arrived the rest of the long
// first-byte wait for its first progress frame (streamFirstByteTimeoutMs
// bounded only the headers).
//
//go:noinline
func (a *attemptCtx) headersIn() {
	a.extendFirstByte(a.hdrShort, a.req.adm.execCuts(a.fb))
}

// callUpstream is the upstream call, with the connection's credentials.
//
//go:noinline
func (a *attemptCtx) callUpstream(exec providers.Executor, body []byte) (*http.Response, error) {
	g, cand := a.g, a.cand
	cred := credentialed{next: exec, creds: g.creds, conn: cand.Conn, deadline: a.t0.Add(a.fb)}
	return cred.Do(g.egressContext(a.ctx, cand), &a.target,
		providers.Call{Body: body, Stream: a.req.stream, Path: a.codec.path(), Anthropic: a.codec.anthropicHeaders(a.r.Header), Storage: &a.callStore})
}

// transportFailure classifies and records an upstream call that brought no answer.
//
//go:noinline
func (a *attemptCtx) transportFailure(err error) *failure {
	v := a.g.classifyErr(a.ctx, a.r, err, a.cand)
	a.finish(v)
	return &failure{v: v, clientGone: v.Kind == verdict.KindClientCanceled}
}

// upstreamFailure reads and classifies an upstream's non-2xx answer.
//
//go:noinline
func (a *attemptCtx) upstreamFailure(resp *http.Response) *failure {
	g, cand := a.g, a.cand
	errBody, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	v := redacted(g.upstreamVerdict(resp.StatusCode, resp.Header, errBody, a.r, cand), a.r, cand)
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		v.Code, v.Message = "UPSTREAM_REDIRECT", redirectMessage(resp.StatusCode)
	}
	g.learnToolLimit(v, errBody, cand, a.req)
	a.finish(v)
	f := &failure{v: v}
	f.upCode, f.upParam = upstreamErrorIDs(errBody)
	return f
}

// upstreamErrorIDs reads an OpenAI-shaped error body's error.code and
// error.param when they are strings that look like identifiers (a code or a
// field path, never free text: nothing of the upstream's message leaks).
//
//go:noinline
func upstreamErrorIDs(body []byte) (code, param string) {
	if !jsonv.Valid(body) {
		return "", ""
	}
	e := gjson.GetBytes(body, "error")
	if !e.IsObject() {
		return "", ""
	}
	if c := e.Get("code"); c.Type == gjson.String && isIdent(c.Str) {
		code = c.Str
	}
	if p := e.Get("param"); p.Type == gjson.String && isIdent(p.Str) {
		param = p.Str
	}
	return code, param
}

// isIdent reports a short identifier: letters, digits and _ . - [ ].
func isIdent(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-' || c == '[' || c == ']') {
			return false
		}
	}
	return true
}

func isEventStream(resp *http.Response) bool {
	ct := resp.Header.Get("Content-Type")
	return len(ct) >= 17 && ct[:17] == "text/event-stream"
}

// relayJSON buffers a JSON answer, translates it to the client's format and writes it.
func (a *attemptCtx) relayJSON(resp *http.Response) (*failure, bool) {
	g, req := a.g, a.req
	body, err := readAnswer(resp)
	if err != nil {
		v := g.classifyErr(a.ctx, a.r, err, a.cand)
		a.finish(v)
		return &failure{v: v, clientGone: v.Kind == verdict.KindClientCanceled}, false
	}
	a.stopTimer()
	out, text, top, err := a.codec.response(body, req.body)
	if err != nil {
		v := redacted(verdict.Verdict{Kind: verdict.KindServer, Scope: verdict.ScopeExact, Failover: true, Code: "UPSTREAM_BAD_RESPONSE",
			Message: "the upstream's answer could not be read: " + err.Error()}, a.r, a.cand)
		a.finish(v)
		return &failure{v: v}, false
	}
	top.get(text)
	setServedHeaders(a.w.Header(), &a.served, a.cand, req.earlierAttempts+len(req.attempts)+1, top.model.String(),
		"Content-Type", "application/json", "Content-Length", view(strconv.AppendInt(a.clen[:0], int64(len(out)), 10)),
		"Date", g.httpDate())
	g.armWrite(a.w)
	a.w.WriteHeader(http.StatusOK)
	_, _ = a.w.Write(out)
	a.finish(verdict.Verdict{Kind: verdict.KindSuccess, Status: resp.StatusCode})
	g.served(req, a.cand, http.StatusOK, text, top.usage)
	return nil, true
}

// readAnswer reads a buffered upstream answer of at most maxResponseBody
// bytes: into one buffer of its declared length when it declares one (the
// common case), else growing as io.ReadAll does.
func readAnswer(resp *http.Response) ([]byte, error) {
	if n := resp.ContentLength; n >= 0 && n <= maxResponseBody {
		body := make([]byte, n)
		if _, err := io.ReadFull(resp.Body, body); err != nil {
			return nil, err
		}
		return body, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody+1))
	if err == nil && len(body) > maxResponseBody {
		err = errors.New("the upstream's answer exceeds the 64 MiB limit")
	}
	return body, err
}

// classifyErr turns a transport error into a verdict, naming the real cause.
func (g *Gateway) classifyErr(ctx context.Context, r *http.Request, err error, cand routing.Candidate) verdict.Verdict {
	if v, ok := refreshVerdict(ctx, r, err); ok {
		return v
	}
	if errors.Is(err, providers.ErrNoExecutor) && r.Context().Err() == nil {
		return noExecutorVerdict(cand)
	}
	if r.Context().Err() != nil {
		err = context.Canceled
	} else if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		switch {
		case errors.Is(cause, errFirstByteTimeout), errors.Is(cause, errFirstToken), errors.Is(cause, errDeadline), errors.Is(cause, errExecution):
			err = context.DeadlineExceeded
		case errors.Is(cause, verdict.ErrStall):
			err = cause
		}
	}
	v := verdict.Classify(verdict.Outcome{Err: err, Provider: cand.Conn.Provider.ID, Now: g.clk.Now(), Secrets: knownSecrets(r, cand)})
	if ie := (*providers.InterimStatusError)(nil); v.Kind != verdict.KindClientCanceled && errors.As(err, &ie) {
		v.Code, v.Status = "UPSTREAM_BAD_STATUS", ie.Status
	}
	return redacted(v, r, cand)
}

// noExecutorVerdict is a call whose target's dialect has no executor
// (providers.ErrNoExecutor): the gateway cannot speak to that target, so it
// is passed over as FORMAT_NOT_SUPPORTED, like a wire the gateway does not
// speak, and is no evidence against the upstream (no breaker, cooldown or
// lock).
func noExecutorVerdict(cand routing.Candidate) verdict.Verdict {
	p := cand.Conn.Provider
	return verdict.Verdict{Kind: verdict.KindBadRequest, Failover: true, Code: "FORMAT_NOT_SUPPORTED",
		Message: "this gateway has no executor for " + p.ID + "'s " + string(p.Dialect) + " dialect of the " + string(p.FormatOf(cand.Model)) + " wire"}
}

// served records a served answer in the log row and its bill; usage is
// body's top-level "usage" (read by the answer check's walk).
func (g *Gateway) served(req *request, cand routing.Candidate, status int, body string, usage gjson.Result) {
	req.log.Status = status
	req.log.ConnectionID = cand.Conn.ID
	req.log.Provider = cand.Conn.BreakerKey
	if len(body) == 0 {
		return
	}
	u, x := readUsageBill(usage) // one walk for the log and the bill
	if translate.IsOllama(req.format) && u == (usageCounts{}) {
		u.in, u.out = tokensOf(gjson.Get(body, "prompt_eval_count")), tokensOf(gjson.Get(body, "eval_count"))
	}
	if translate.IsGemini(req.format) && u == (usageCounts{}) {
		// Google counts thoughts apart from the candidates; the log's completion holds both.
		m := gjson.Get(body, "usageMetadata")
		u.in, u.cached = tokensOf(m.Get("promptTokenCount")), tokensOf(m.Get("cachedContentTokenCount"))
		u.out = sumTokens(tokensOf(m.Get("candidatesTokenCount")), tokensOf(m.Get("thoughtsTokenCount")))
	}
	if u.out <= 0 && req.format != translate.Embeddings && req.format != translate.OllamaEmbed {
		req.relayed = answerTextBytes(body) // no output count: charged by its text
	}
	req.log.PromptTokens, req.log.CompletionTokens, req.log.CachedTokens = u.in, u.out, u.cached
	if g.spend != nil {
		req.round.bill = bill{model: cand.Model, usage: billUsage(u, x), ok: true}
	}
}

// bill is what an answer is priced from: the upstream model that served it
// and the usage it reported.
type bill struct {
	model string
	usage pricing.Usage
	ok    bool
	// cut: the usage is what had arrived when a stream stopped before its
	// end (the client left, or the upstream broke after the first bytes).
	cut bool
}

// billUsage is what pricing needs of a usage object besides c: every prompt
// token (Anthropic's input_tokens leaves out cache reads and writes, which it
// counts apart), the cache writes and the reasoning tokens. Read only when
// the gateway prices answers, from what the request log's own walk kept (x).
func billUsage(c usageCounts, x billExtras) pricing.Usage {
	return billOf(c, tokensOf(x.write), reasoningOf(x), x.cacheRead)
}

// reasoningOf is the reasoning tokens billExtras kept, both spellings added.
func reasoningOf(x billExtras) int {
	return sumTokens(tokensOf(x.reasoning[0]), tokensOf(x.reasoning[1]))
}

// billOf is billUsage over counts already read (a stream's, read on arrival).
func billOf(c usageCounts, write, reasoning int, cacheRead bool) pricing.Usage {
	p := pricing.Usage{Prompt: c.in, Output: c.out, CacheRead: c.cached, CacheWrite: write, Reasoning: reasoning}
	if write > 0 || cacheRead {
		p.Prompt = sumTokens(p.Prompt, sumTokens(c.cached, write))
	}
	return p
}

// billExtras is what the usage walk keeps for billUsage: the first
// cache_creation_input_tokens, completion_tokens_details.reasoning_tokens and
// output_tokens_details.reasoning_tokens (each read as a Get reads it), and
// whether cache_read_input_tokens is there. Raw results: nothing is parsed
// unless the answer is priced.
type billExtras struct {
	write     gjson.Result
	reasoning [2]gjson.Result
	cacheRead bool
}

// usageOf is a translator's usage as pricing reads it, each count clamped
// to 0 … maxUsageTokens (every wire a translator reads: Anthropic, Gemini,
// Responses, a provider module's own wire, Ollama, ...).
func usageOf(u translate.Usage) pricing.Usage {
	return clampUsage(pricing.Usage{Prompt: u.InputTokens, Output: u.OutputTokens, CacheRead: u.CacheReadTokens,
		CacheWrite: u.CacheWriteTokens, Reasoning: u.ReasoningTokens})
}

// usageCounts is what the request log keeps of an answer's usage object.
type usageCounts struct{ in, out, cached int }

// readUsage reads an OpenAI, Responses or Anthropic usage object in one walk
// over its members (a repeated key is read as a Get reads it: the first):
// input tokens prompt_tokens + input_tokens, output tokens completion_tokens
// + output_tokens, and the cached prompt tokens from the first of
// prompt_tokens_details.cached_tokens, input_tokens_details.cached_tokens,
// cache_read_input_tokens and prompt_cache_hit_tokens (DeepSeek's spelling)
// that is positive.
func readUsage(u gjson.Result) usageCounts {
	c, _ := readUsageBill(u)
	return c
}

// readUsageBill is readUsage also keeping, in the same walk, what billUsage
// reads (a Get per field walked the object four more times).
func readUsageBill(u gjson.Result) (usageCounts, billExtras) {
	var x billExtras
	var prompt, input, completion, output gjson.Result
	var cached [4]gjson.Result // the cached counts, in the order of precedence above
	u.ForEach(func(k, v gjson.Result) bool {
		var dst *gjson.Result
		switch k.Str {
		case "prompt_tokens":
			dst = &prompt
		case "input_tokens":
			dst = &input
		case "completion_tokens":
			dst = &completion
		case "output_tokens":
			dst = &output
		case "prompt_tokens_details", "input_tokens_details":
			// A dotted Get reads the first such object that has the
			// member, so a repeated key is read the same way.
			i := 0
			if k.Str == "input_tokens_details" {
				i = 1
			}
			if n := v.Get("cached_tokens"); n.Exists() && !cached[i].Exists() {
				cached[i] = n
			}
		case "completion_tokens_details", "output_tokens_details":
			i := 0
			if k.Str == "output_tokens_details" {
				i = 1
			}
			if n := v.Get("reasoning_tokens"); n.Exists() && !x.reasoning[i].Exists() {
				x.reasoning[i] = n
			}
		case "cache_creation_input_tokens":
			dst = &x.write
		case "cache_read_input_tokens":
			dst = &cached[2]
		case "prompt_cache_hit_tokens":
			dst = &cached[3]
		}
		if dst != nil && !dst.Exists() {
			*dst = v
		}
		return true
	})
	// Each count clamped to 0 … maxUsageTokens before they are added: a
	// negative count gives no budget back, a huge one never wraps.
	c := usageCounts{in: sumTokens(tokensOf(prompt), tokensOf(input)), out: sumTokens(tokensOf(completion), tokensOf(output))}
	for _, r := range cached {
		if v := r.Int(); v > 0 {
			c.cached = clampTokens(v)
			break
		}
	}
	x.cacheRead = cached[2].Exists()
	return c, x
}

func itoa(n int) string { return strconv.Itoa(n) }
