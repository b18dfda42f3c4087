package gateway

import (
	"time"

	"omniroute/backend/errs"
	"omniroute/backend/resilience/verdict"
	"omniroute/backend/routing"
)

// terminalError answers a request no candidate could serve, naming why: the
// resilience timers that excluded targets (with Retry-After), or the last failure.
func terminalError(req *request, last *failure, excluded []routing.Exclusion) error {
	if last == nil {
		return exclusionError(excluded)
	}
	v := last.v
	soonest := soonestTimed(excluded)
	switch v.Kind {
	case verdict.KindRateLimit, verdict.KindConcurrencyLimit, verdict.KindQuota:
		wait := v.RetryAfter
		if wait <= 0 || (soonest > 0 && soonest < wait) {
			wait = soonest
		}
		if wait <= 0 {
			wait = time.Second
		}
		e := errs.New(errs.RateLimited, "RATE_LIMITED", "every connection for %q is rate limited; last: %s", req.model, v.Message)
		return e.WithRetryAfter(wait)
	case verdict.KindNotFound:
		return errs.New(errs.NotFound, "MODEL_NOT_FOUND", "no upstream serves %q: %s", req.model, v.Message).WithParam("model")
	case verdict.KindTimeout:
		return errs.New(errs.Timeout, "UPSTREAM_TIMEOUT", "no upstream answered %q in time after %d attempt(s)", req.model, len(req.attempts))
	}
	e := errs.New(errs.Upstream, "ALL_ATTEMPTS_FAILED", "all %d attempt(s) for %q failed; last: %s", len(req.attempts), req.model, v.Message)
	e.Details = diagnostics(excluded)
	return e
}

// exclusionError is the answer when every candidate was excluded before dispatch.
func exclusionError(excluded []routing.Exclusion) error {
	soonest := soonestTimed(excluded)
	if soonest > 0 {
		e := errs.New(errs.Unavailable, "all_targets_cooling_down",
			"every target is excluded by a resilience timer; retry in %ds", int(soonest.Round(time.Second)/time.Second))
		e.Details = diagnostics(excluded)
		return e.WithRetryAfter(soonest)
	}
	e := errs.New(errs.Unavailable, "ALL_TARGETS_SKIPPED", "every target is unavailable (terminal account state); fix or replace the credentials")
	e.Details = diagnostics(excluded)
	return e
}

func soonestTimed(excluded []routing.Exclusion) time.Duration {
	var soonest time.Duration
	for _, x := range excluded {
		if x.Timed() && (soonest == 0 || x.Remaining < soonest) {
			soonest = x.Remaining
		}
	}
	return soonest
}

func diagnostics(excluded []routing.Exclusion) map[string]any {
	if len(excluded) == 0 {
		return nil
	}
	items := make([]map[string]any, 0, len(excluded))
	for _, x := range excluded {
		item := map[string]any{"target": x.Provider + "/" + x.Model, "connectionId": x.ConnectionID,
			"reason": x.Reason, "remainingMs": x.Remaining.Milliseconds()}
		if x.Detail != "" {
			item["detail"] = x.Detail
		}
		items = append(items, item)
	}
	return map[string]any{"diagnostics": map[string]any{"excluded": items}}
}
