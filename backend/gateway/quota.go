package gateway

import (
	"net/http"
	"strconv"
	"time"

	"omniroute/backend/resilience/verdict"
	"omniroute/backend/routing"
)

// observeQuota feeds the quota window an upstream reports on a success (OpenAI
// x-ratelimit-* or Anthropic anthropic-ratelimit-* headers) to the reset-aware
// and reset-window strategies. Absent headers change nothing.
func observeQuota(t *routing.Ticket, h http.Header, now time.Time) {
	if frac, resetAt := quotaFromHeaders(h, now); frac >= 0 || !resetAt.IsZero() {
		t.ObserveQuota(frac, resetAt)
	}
}

// quotaFromHeaders reads the remaining fraction of the request quota (−1 when
// unknown) and when it resets (zero when unknown).
func quotaFromHeaders(h http.Header, now time.Time) (float64, time.Time) {
	remaining, limit := h.Get("x-ratelimit-remaining-requests"), h.Get("x-ratelimit-limit-requests")
	var resetAt time.Time
	if d, ok := verdict.ParseResetDuration(h.Get("x-ratelimit-reset-requests")); ok {
		resetAt = now.Add(d)
	}
	if remaining == "" {
		remaining, limit = h.Get("anthropic-ratelimit-requests-remaining"), h.Get("anthropic-ratelimit-requests-limit")
		if d, ok := verdict.ParseResetTimestamp(h.Get("anthropic-ratelimit-requests-reset"), now); ok {
			resetAt = now.Add(d)
		}
	}
	frac := -1.0
	r, err1 := strconv.ParseFloat(remaining, 64)
	l, err2 := strconv.ParseFloat(limit, 64)
	if err1 == nil && err2 == nil && l > 0 && r >= 0 {
		frac = min(r/l, 1)
	}
	return frac, resetAt
}
