package gateway

import (
	"time"

	"omniroute/backend/errs"
	"omniroute/backend/resilience/rules"
	"omniroute/backend/resilience/verdict"
	"omniroute/backend/routing"
)

// terminalError answers a request no candidate could serve, exactly as the
// guide's "Depuração" and §4 say: the resilience timers that excluded targets
// (503 all_targets_cooling_down with Retry-After and diagnostics), short
// rate-limit lockouts (429 rate_limit_error with retry_after / reset_at), only
// quota / auth / not-found exclusions (503 ALL_TARGETS_SKIPPED, with
// Retry-After when a connection cooldown ends by itself), permanent denials (403),
// nothing executable (404 no_executable_targets), every free target leased by
// others (429 LEASE_CAPACITY_UNAVAILABLE), or the last attempt's failure.
func terminalError(req *request, last *failure, plan routing.Plan, now time.Time) error {
	if last != nil {
		return attemptsFailed(req, last, plan, now)
	}
	x := plan.Excluded
	if len(x) == 0 {
		return errs.New(errs.NotFound, "no_executable_targets", "nothing can execute %q: no active connection serves it", req.model).WithParam("model")
	}
	if e := leaseCapacity(plan); e != nil {
		return e
	}
	if allReason(x, "tool_limit") {
		e := errs.New(errs.Invalid, rules.CodeToolCountLimit, "no target of %q takes %d tools (learnt from their refusals); send fewer tools", req.model, req.toolCount()).WithParam("tools")
		e.Details = diagnostics(x)
		return e
	}
	if allDenied(x) {
		e := errs.New(errs.Permission, verdict.CodeForbidden,
			"the upstream denies access to %q on every connection that serves it (a permanent denial; locked for %ds)", req.model, seconds(soonest(x, false)))
		e.Details = diagnostics(x)
		return e
	}
	transient, timed := soonest(x, true), soonest(x, false)
	if q := soonestQuota(x); q > 0 && transient == 0 && onlyTimed(x) {
		return quotaExhausted(req, q, now, plan)
	}
	if transient > 0 && onlyLockouts(x) {
		return rateLimited(req, "every target is in a short transient lockout or quota window", transient, now, plan)
	}
	if timed > 0 && transient > 0 {
		return coolingDown(req, transient, "", plan)
	}
	if back := soonestConnection(x); back > 0 {
		// A connection comes back when its cooldown ends (e.g. a few
		// seconds after a generic 403): say when.
		e := errs.New(errs.Unavailable, "ALL_TARGETS_SKIPPED",
			"every target of %q is unavailable (quota, credentials, access); a connection comes back in %ds; see diagnostics", req.model, seconds(back))
		e.Details = diagnostics(x)
		e.NoRetry = back > noRetryAfter
		return e.WithRetryAfter(back)
	}
	e := errs.New(errs.Unavailable, "ALL_TARGETS_SKIPPED",
		"every target of %q is unavailable for a reason that does not pass by itself (quota, credentials, model not found); see diagnostics", req.model)
	e.Details = diagnostics(x)
	e.NoRetry = true
	return e
}

// noRetryAfter: a 503 whose soonest return is further away than this tells
// the client not to retry by itself (x-should-retry: false): an agent that
// retries blindly for minutes shows its user nothing meanwhile.
const noRetryAfter = time.Minute

// coolingDown is the 503 of a request whose every target is held by a
// transient timer (a cooldown, a lock, an open breaker): Retry-After is the
// earliest real return, and past a minute the client is told not to retry.
func coolingDown(req *request, back time.Duration, last string, plan routing.Plan) error {
	e := errs.New(errs.Unavailable, "all_targets_cooling_down",
		"every target of %q is excluded by a resilience timer; retry in %ds%s", req.model, seconds(back), last)
	e.Details = diagnostics(plan.Excluded)
	e.NoRetry = back > noRetryAfter
	return e.WithRetryAfter(back)
}

// allRateLimited is the 429 for a request whose targets are all limited: it
// says to retry after wait (the soonest eligibility), else the last verdict's
// hint, else one second.
func allRateLimited(req *request, last verdict.Verdict, wait time.Duration, now time.Time, plan routing.Plan) error {
	if wait <= 0 {
		wait = last.RetryAfter
	}
	if wait <= 0 {
		wait = time.Second
	}
	return rateLimited(req, "every target is rate limited; last: "+last.Message, wait, now, plan)
}

// attemptsFailed maps the attempts' verdicts when attempts were made: every
// attempt limited (rate, concurrency or quota) → 429 with Retry-After = the
// real soonest eligibility (the earliest timed exclusion now, which includes
// the cooldowns these attempts wrote), quota only → 429 QUOTA_EXHAUSTED with
// the announced reset; otherwise the last attempt's verdict decides, and 502
// is left for genuine upstream breakage.
func attemptsFailed(req *request, last *failure, plan routing.Plan, now time.Time) error {
	v := last.v
	if v.Code == rules.CodeToolCountLimit {
		return errs.New(errs.Invalid, v.Code, "no target takes this many tools (%d): %s", req.toolCount(), v.Message).WithParam("tools")
	}
	if deniedAccess(&v) && !req.round.undenied {
		// Every attempt met a permanent denial: the upstream's own status
		// (403) reaches the client, which must not retry it.
		req.upstreamStatus = v.Status
		e := errs.New(errs.Permission, v.Code, "%s", v.Message)
		e.Details = diagnostics(plan.Excluded)
		return e
	}
	if v.ClientRetryAfter > 0 {
		// A restated error (a quota reported as 403) announces its own window.
		e := rateLimited(req, "every target is out of quota for now; last: "+v.Message, v.ClientRetryAfter, now, plan)
		if ee := errs.As(e); ee != nil && v.Code != "" {
			ee.Code = v.Code
			if v.Code == verdict.CodeQuotaRestated {
				ee.Code = verdict.CodeQuotaExhausted
			}
		}
		return e
	}
	if kinds := attemptKinds(req); kinds.limited && !kinds.other {
		if kinds.onlyQuota {
			if q := soonestQuota(plan.Excluded); q > 0 {
				return quotaExhausted(req, q, now, plan)
			}
		}
		return allRateLimited(req, v, soonest(plan.Excluded, false), now, plan)
	}
	switch v.Kind {
	case verdict.KindRateLimit, verdict.KindConcurrencyLimit:
		return allRateLimited(req, v, soonest(plan.Excluded, true), now, plan)
	case verdict.KindServer, verdict.KindTransport, verdict.KindTimeout, verdict.KindStall, verdict.KindForbidden:
		if back := soonest(plan.Excluded, true); back > 0 && !req.round.eligibleNow {
			// Every target is now held by a timer (a streak's cooldown, an
			// open breaker): said at once with when one comes back.
			return coolingDown(req, back, "; last: "+v.Message, plan)
		}
	}
	switch v.Kind {
	case verdict.KindNotFound:
		return errs.New(errs.NotFound, "MODEL_NOT_FOUND", "no upstream serves %q: %s", req.model, v.Message).WithParam("model")
	case verdict.KindTimeout:
		e := errs.New(errs.Timeout, "UPSTREAM_TIMEOUT", "no upstream answered %q in time after %d attempt(s)", req.model, len(req.attempts))
		e.Details = diagnostics(plan.Excluded)
		return e
	}
	e := errs.New(errs.Upstream, "ALL_ATTEMPTS_FAILED", "all %d attempt(s) for %q failed; last: %s", len(req.attempts), req.model, v.Message)
	e.Details = diagnostics(plan.Excluded)
	return e
}

// limitKinds summarises the verdicts of a request's attempts.
type limitKinds struct {
	limited   bool // some attempt hit a rate, concurrency or quota limit
	onlyQuota bool // every limited attempt was a quota exhaustion
	other     bool // some attempt failed for another reason
}

func attemptKinds(req *request) limitKinds {
	k := limitKinds{onlyQuota: true}
	for _, a := range req.attempts {
		switch verdict.Kind(a.Verdict) {
		case verdict.KindRateLimit, verdict.KindConcurrencyLimit:
			k.limited, k.onlyQuota = true, false
		case verdict.KindQuota:
			k.limited = true
		case verdict.KindClientCanceled:
		default:
			k.other = true
		}
	}
	return k
}

// quotaExhausted is the 429 when only exhausted quotas block: Retry-After is
// the earliest announced reset (or the long default cooldown).
func quotaExhausted(req *request, wait time.Duration, now time.Time, plan routing.Plan) error {
	e := errs.New(errs.RateLimited, "QUOTA_EXHAUSTED", "the upstream quota for %q is exhausted; it resets in %ds", req.model, seconds(wait))
	e.Details = map[string]any{"retry_after": seconds(wait), "reset_at": now.Add(wait).UTC().Format(time.RFC3339)}
	for k, v := range diagnostics(plan.Excluded) {
		e.Details[k] = v
	}
	return e.WithRetryAfter(wait)
}

// soonestQuota is the earliest end of a quota cooldown among the exclusions.
func soonestQuota(excluded []routing.Exclusion) time.Duration {
	var s time.Duration
	for _, x := range excluded {
		if x.Detail != string(verdict.KindQuota) || !x.Timed() {
			continue
		}
		if s == 0 || x.Remaining < s {
			s = x.Remaining
		}
	}
	return s
}

// onlyTimed reports whether every exclusion ends by itself.
func onlyTimed(excluded []routing.Exclusion) bool {
	for _, x := range excluded {
		if !x.Timed() {
			return false
		}
	}
	return len(excluded) > 0
}

// rateLimited is the 429 with retry_after / reset_at from the earliest expiry.
func rateLimited(req *request, why string, wait time.Duration, now time.Time, plan routing.Plan) error {
	e := errs.New(errs.RateLimited, "rate_limit_error", "%s (%q)", why, req.model)
	e.Details = map[string]any{"retry_after": seconds(wait), "reset_at": now.Add(wait).UTC().Format(time.RFC3339)}
	for k, v := range diagnostics(plan.Excluded) {
		e.Details[k] = v
	}
	return e.WithRetryAfter(wait)
}

// leaseCapacity is the 429 when eligible connections exist but every free one
// is held by another owner's lease.
func leaseCapacity(plan routing.Plan) error {
	if plan.Eligible == 0 {
		return nil
	}
	var earliest time.Duration
	for _, x := range plan.Excluded {
		if x.Reason != "lease_held" {
			continue
		}
		if earliest == 0 || x.Remaining < earliest {
			earliest = x.Remaining
		}
	}
	if earliest == 0 {
		return nil
	}
	// Retry-After is the target that returns first, whatever holds it: a
	// 2 min lock beside a 30 min lease is a 2 min wait (issue 40 E).
	first := 0
	for i, x := range plan.Excluded {
		if x.Timed() && (x.Remaining < plan.Excluded[first].Remaining || !plan.Excluded[first].Timed()) {
			first = i
		}
	}
	back := plan.Excluded[first]
	retry := min(max(seconds(back.Remaining), 1), 3600)
	why := "held by another session's exclusive lease"
	if back.Reason != "lease_held" {
		why = back.Reason
		if back.Detail != "" {
			why += " (" + back.Detail + ")"
		}
	}
	e := errs.New(errs.RateLimited, "LEASE_CAPACITY_UNAVAILABLE",
		"every eligible connection is held by another session's exclusive lease or excluded; the first to return is %s/%s in %ds (%s)",
		back.Provider, back.Model, retry, why)
	e.Type = "lease_error"
	e.Top = map[string]any{"state": "WAITING_FOR_CAPACITY", "reason": "NO_FREE_ELIGIBLE_CONNECTION", "retryAfter": retry,
		"eligibleCount": plan.Eligible, "freeCount": 0}
	return e.WithRetryAfter(time.Duration(retry) * time.Second)
}

// soonest is the earliest expiry among timed exclusions (only transient ones when asked).
func soonest(excluded []routing.Exclusion, transientOnly bool) time.Duration {
	var s time.Duration
	for _, x := range excluded {
		if !x.Timed() || (transientOnly && !x.Transient) || x.Reason == "lease_held" {
			continue
		}
		if s == 0 || x.Remaining < s {
			s = x.Remaining
		}
	}
	return s
}

// soonestConnection is the earliest end of a connection cooldown among the
// exclusions (0: none): the account comes back by itself then. A model's
// not-found lock is left out: the model will hardly be there sooner.
func soonestConnection(excluded []routing.Exclusion) time.Duration {
	var s time.Duration
	for _, x := range excluded {
		if x.Reason != "connection_cooldown" || !x.Timed() {
			continue
		}
		if s == 0 || x.Remaining < s {
			s = x.Remaining
		}
	}
	return s
}

// rateLimitExclusion reports a model lock or cooldown written by a rate,
// concurrency or quota limit, or a connection cooled by a rate or concurrency
// limit: the exclusions a 429 describes. A lock a broken upstream wrote
// (5xx, reset, timeout) is not one: the guide answers 429 for rate-limit
// locks only, and 503 with Retry-After for the other transient ones.
func rateLimitExclusion(x routing.Exclusion) bool {
	switch x.Reason {
	case "model_lockout", "model_cooldown":
		switch x.Cause {
		case verdict.CodeRateLimited, verdict.CodeConcurrencyLimited, verdict.CodeQuotaExhausted, verdict.CodeQuotaRestated:
			return true
		}
		return false
	case "connection_cooldown":
		return x.Detail == string(verdict.KindRateLimit) || x.Detail == string(verdict.KindConcurrencyLimit)
	}
	return false
}

func allReason(excluded []routing.Exclusion, reason string) bool {
	for _, x := range excluded {
		if x.Reason != reason {
			return false
		}
	}
	return len(excluded) > 0
}

// allDenied reports whether every exclusion is a permanent access denial.
func allDenied(excluded []routing.Exclusion) bool {
	for _, x := range excluded {
		if !x.Denied() {
			return false
		}
	}
	return len(excluded) > 0
}

func onlyLockouts(excluded []routing.Exclusion) bool {
	any := false
	for _, x := range excluded {
		restated := x.Reason == "connection_cooldown" && x.Detail == "quota_restated"
		if !rateLimitExclusion(x) && !restated {
			return false
		}
		any = any || x.Transient
	}
	return any
}

func seconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	return s
}

func diagnostics(excluded []routing.Exclusion) map[string]any {
	if len(excluded) == 0 {
		return nil
	}
	items := make([]map[string]any, 0, len(excluded))
	for _, x := range excluded {
		item := map[string]any{"target": x.Provider + "/" + x.Model, "connectionId": x.ConnectionID,
			"reason": x.Reason, "remainingMs": x.Remaining.Milliseconds(), "transient": x.Transient}
		if x.Detail != "" {
			item["detail"] = x.Detail
		}
		items = append(items, item)
	}
	return map[string]any{"diagnostics": map[string]any{"excluded": items}}
}
