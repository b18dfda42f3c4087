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

	"omniroute/backend/errs"
	"omniroute/backend/providers"
	"omniroute/backend/resilience/affinity"
	"omniroute/backend/resilience/verdict"
	"omniroute/backend/routing"
	"omniroute/backend/store"
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
// bounded same-target retries in combos, a hard cap on attempts and on time,
// and cooldown-aware waiting for combos when only short transient timers block.
func (g *Gateway) run(w http.ResponseWriter, r *http.Request, req *request) error {
	set := g.general()
	in := routing.PlanInput{Model: req.model, Access: req.client.Access, SessionKey: sessionKey(r)}
	lease, err := g.leaseContext(r, req)
	if err != nil {
		return err
	}
	if lease != nil {
		in.LeaseOwner, in.LeaseConnection, in.SessionKey = lease.ownerHash, lease.connectionID, ""
	}
	budget := time.Duration(set.RetryBudgetMs) * time.Millisecond
	tried := map[string]bool{}     // candidates attempted in this round
	exhausted := map[string]bool{} // connections that failed at account level in this request
	var last *failure
	var plan routing.Plan
	waits := 0
	for {
		plan, err = g.engine.Plan(in)
		if err != nil {
			return err
		}
		if lease != nil && len(plan.Candidates) == 0 {
			// The leased connection is out of routing: the same generation moves
			// to another free eligible connection under the normal rules.
			if plan, err = g.moveLease(req.client.KeyID, in, lease); err != nil {
				return err
			}
			in.LeaseConnection = lease.connectionID
		}
		excluded := plan.Excluded
		queue := plan.Candidates
		for len(queue) > 0 {
			cand := queue[0]
			queue = queue[1:]
			if tried[cand.Key()] || exhausted[cand.Conn.ID] {
				continue
			}
			if len(req.attempts) >= set.MaxAttempts || g.clk.Now().Sub(req.start) > budget {
				queue = nil
				break
			}
			tried[cand.Key()] = true
			f, done, x := g.tryTarget(w, r, req, plan, cand, lease)
			if x != nil {
				excluded = append(excluded, *x)
			}
			if f == nil && !done {
				continue
			}
			if done {
				g.pin(in.SessionKey, cand)
				return nil
			}
			if f.err != nil {
				return f.err
			}
			if f.clientGone {
				return nil
			}
			last = f
			if f.v.CoolConnection || f.v.Terminal != "" {
				exhausted[cand.Conn.ID] = true
			}
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
		plan.Excluded = excluded
		wait, ok := g.cooldownWait(plan, req, waits)
		if !ok {
			break
		}
		waits++
		req.steps = append(req.steps, AttemptRecord{Verdict: "wait", Code: "cooldown_wait", StartMs: msSince(req.start, g.clk.Now()),
			LatencyMs: wait.Milliseconds()})
		if err := sleepCtx(r.Context(), wait); err != nil {
			return nil // the client went away while waiting
		}
		tried, exhausted = map[string]bool{}, map[string]bool{}
	}
	if last == nil {
		// Refused without an upstream answer: the log keeps every exclusion and its reason.
		at := msSince(req.start, g.clk.Now())
		for _, x := range plan.Excluded {
			req.steps = append(req.steps, AttemptRecord{ConnectionID: x.ConnectionID, Provider: x.Provider, Model: x.Model,
				Verdict: "excluded", Code: x.Reason, Detail: x.Detail, StartMs: at, RemainingMs: x.Remaining.Milliseconds()})
		}
	}
	return terminalError(req, last, plan, g.clk.Now())
}

// tryTarget admits and attempts one candidate, with the combo's same-target
// retries for transient failures (backoff with jitter, honouring Retry-After).
func (g *Gateway) tryTarget(w http.ResponseWriter, r *http.Request, req *request, plan routing.Plan, cand routing.Candidate,
	lease *leaseCtx) (*failure, bool, *routing.Exclusion) {
	retries := 0
	if plan.Combo != nil {
		retries = 1
		if n := plan.Combo.Config.MaxRetriesPerTarget; n != nil {
			retries = *n
		}
	}
	set := g.general()
	if g.resil != nil {
		if rs := g.resil(); rs.QuotaShareConcurrencyLimit.Enabled {
			release := g.engine.AcquireSlot(r.Context(), cand, time.Duration(rs.RequestQueue.MaxWaitMs)*time.Millisecond)
			defer release()
		}
	}
	var prev *failure
	for attempt := 0; ; attempt++ {
		ticket, x := g.engine.Admit(cand)
		if x != nil {
			// Refused now; after a failed attempt the real failure still stands.
			return prev, false, x
		}
		ticket.Combo = plan.Combo
		if lease != nil {
			if err := g.leases.Fence(req.client.KeyID, lease.owner, lease.generation, cand.Conn.ID); err != nil {
				ticket.Abandon()
				return &failure{err: err}, false, nil
			}
		}
		f, done := g.attempt(w, r, req, cand, ticket)
		if done || f.err != nil || f.clientGone || attempt >= retries || len(req.attempts) >= set.MaxAttempts {
			return f, done, nil
		}
		switch f.v.Kind {
		case verdict.KindServer, verdict.KindTransport, verdict.KindTimeout:
		default:
			return f, false, nil
		}
		if f.v.CoolConnection {
			return f, false, nil // the connection is cooling: a retry would be refused
		}
		prev = f
		delay := backoff(attempt, f.v.RetryAfter)
		if delay > 5*time.Second {
			return f, false, nil
		}
		if sleepCtx(r.Context(), delay) != nil {
			return &failure{v: f.v, clientGone: true}, false, nil
		}
	}
}

// backoff is the same-target retry delay: the upstream's hint when it gave one,
// otherwise 250 ms doubling per retry with up to 25 % jitter.
func backoff(attempt int, hint time.Duration) time.Duration {
	if hint > 0 {
		return hint
	}
	d := 250 * time.Millisecond << attempt
	return d + time.Duration(rand.Int64N(int64(d/4)+1))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// cooldownWait decides whether a combo request waits out a short transient
// exclusion instead of failing (comboCooldownWait): only timers that are
// transient (never quota, auth or not-found), within maxWaitMs, the attempt
// count and the time budget.
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
		if !x.Transient || x.Remaining <= 0 {
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
}

func (f *failure) clientError() error {
	e := errs.New(errs.Upstream, f.v.Code, "%s", f.v.Message)
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
	rec    AttemptRecord
	ticket *routing.Ticket
}

func (a *attemptCtx) finish(v verdict.Verdict) {
	a.ticket.Finish(v)
	a.rec.Verdict, a.rec.Code, a.rec.LatencyMs = string(v.Kind), v.Code, msSince(a.t0, a.g.clk.Now())
	a.req.attempts = append(a.req.attempts, a.rec)
	if a.g.meter != nil {
		a.g.meter.Attempt(a.rec.Provider, a.rec.Verdict)
	}
}

// attempt runs one upstream attempt. done is true when a response (success, or
// an error after bytes were committed) has been written to the client.
func (g *Gateway) attempt(w http.ResponseWriter, r *http.Request, req *request, cand routing.Candidate, ticket *routing.Ticket) (f *failure, done bool) {
	set := g.general()
	a := &attemptCtx{g: g, w: w, r: r, req: req, cand: cand, t0: g.clk.Now(), ticket: ticket,
		codec: newCodec(req.format, cand.Conn.Provider.Format),
		rec:   AttemptRecord{ConnectionID: cand.Conn.ID, Provider: cand.Conn.BreakerKey, Model: cand.Model, StartMs: msSince(req.start, g.clk.Now())}}
	defer func() {
		if p := recover(); p != nil {
			ticket.Abandon()
			panic(p)
		}
	}()
	exec, ok := g.executors.For(cand.Conn.Provider.Format)
	if !ok {
		ticket.Abandon()
		v := verdict.Verdict{Kind: verdict.KindBadRequest, Failover: true, Code: "FORMAT_NOT_SUPPORTED",
			Message: "this gateway cannot speak " + string(cand.Conn.Provider.Format) + " to " + cand.Conn.Provider.ID}
		a.rec.Verdict, a.rec.Code = string(v.Kind), v.Code
		req.attempts = append(req.attempts, a.rec)
		return &failure{v: v}, false
	}
	body, err := req.upstreamBody(a.codec)
	if err != nil {
		ticket.Abandon()
		return &failure{err: err}, false
	}

	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	a.ctx, a.cancel = ctx, cancel
	firstByte := time.AfterFunc(time.Duration(set.FirstByteTimeoutMs)*time.Millisecond, func() { cancel(errFirstByteTimeout) })
	defer firstByte.Stop()

	resp, err := exec.Do(ctx, cand.Conn.Target(cand.Model), providers.Call{Body: body, Stream: req.stream})
	if err != nil {
		v := g.classifyErr(ctx, r, err, cand)
		a.finish(v)
		return &failure{v: v, clientGone: v.Kind == verdict.KindClientCanceled}, false
	}
	defer resp.Body.Close()
	a.rec.Status = resp.StatusCode
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		errBody, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		v := verdict.Classify(verdict.Outcome{Status: resp.StatusCode, Header: resp.Header, Body: errBody, Provider: cand.Conn.Provider.ID, Now: g.clk.Now()})
		a.finish(v)
		return &failure{v: v}, false
	}
	observeQuota(ticket, resp.Header, g.clk.Now())
	if req.stream && isEventStream(resp) {
		return a.relayStream(firstByte, resp)
	}
	return a.relayJSON(firstByte, resp)
}

func isEventStream(resp *http.Response) bool {
	ct := resp.Header.Get("Content-Type")
	return len(ct) >= 17 && ct[:17] == "text/event-stream"
}

// relayJSON buffers a JSON answer, translates it to the client's format and writes it.
func (a *attemptCtx) relayJSON(firstByte *time.Timer, resp *http.Response) (*failure, bool) {
	g, req := a.g, a.req
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody+1))
	if err == nil && len(body) > maxResponseBody {
		err = errors.New("the upstream's answer exceeds the 64 MiB limit")
	}
	if err != nil {
		v := g.classifyErr(a.ctx, a.r, err, a.cand)
		a.finish(v)
		return &failure{v: v, clientGone: v.Kind == verdict.KindClientCanceled}, false
	}
	firstByte.Stop()
	out, err := a.codec.response(body, req.body)
	if err != nil {
		v := verdict.Verdict{Kind: verdict.KindServer, Scope: verdict.ScopeExact, Failover: true, Code: "UPSTREAM_BAD_RESPONSE",
			Message: "the upstream's answer could not be read: " + err.Error()}
		a.finish(v)
		return &failure{v: v}, false
	}
	h := a.w.Header()
	h.Set("Content-Type", "application/json")
	setServedHeaders(h, a.cand, len(req.attempts)+1)
	if m := gjson.GetBytes(out, "model").String(); m != "" {
		h.Set(HeaderModel, m)
	}
	a.w.WriteHeader(http.StatusOK)
	_, _ = a.w.Write(out)
	a.finish(verdict.Verdict{Kind: verdict.KindSuccess, Status: resp.StatusCode})
	g.served(req, a.cand, http.StatusOK, out)
	return nil, true
}

// classifyErr turns a transport error into a verdict, naming the real cause.
func (g *Gateway) classifyErr(ctx context.Context, r *http.Request, err error, cand routing.Candidate) verdict.Verdict {
	if r.Context().Err() != nil {
		err = context.Canceled
	} else if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		switch {
		case errors.Is(cause, errFirstByteTimeout), errors.Is(cause, errFirstToken), errors.Is(cause, errDeadline):
			err = context.DeadlineExceeded
		case errors.Is(cause, verdict.ErrStall):
			err = cause
		}
	}
	return verdict.Classify(verdict.Outcome{Err: err, Provider: cand.Conn.Provider.ID, Now: g.clk.Now()})
}

func (g *Gateway) served(req *request, cand routing.Candidate, status int, body []byte) {
	req.log.Status = status
	req.log.ConnectionID = cand.Conn.ID
	req.log.Provider = cand.Conn.BreakerKey
	if len(body) == 0 {
		return
	}
	u := gjson.GetBytes(body, "usage")
	in := u.Get("prompt_tokens").Int() + u.Get("input_tokens").Int()
	out := u.Get("completion_tokens").Int() + u.Get("output_tokens").Int()
	req.log.PromptTokens, req.log.CompletionTokens = int(in), int(out)
	req.log.CachedTokens = cachedTokens(u)
}

// cachedTokens reads the cached prompt tokens of an OpenAI, Responses or
// Anthropic usage object (DeepSeek spells it prompt_cache_hit_tokens).
func cachedTokens(u gjson.Result) int {
	for _, path := range []string{"prompt_tokens_details.cached_tokens", "input_tokens_details.cached_tokens",
		"cache_read_input_tokens", "prompt_cache_hit_tokens"} {
		if v := u.Get(path).Int(); v > 0 {
			return int(v)
		}
	}
	return 0
}

func itoa(n int) string { return strconv.Itoa(n) }
