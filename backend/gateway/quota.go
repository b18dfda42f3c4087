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
	remaining, limit := headerValue(h, "X-Ratelimit-Remaining-Requests"), headerValue(h, "X-Ratelimit-Limit-Requests")
	var resetAt time.Time
	if v := headerValue(h, "X-Ratelimit-Reset-Requests"); v != "" {
		if d, ok := verdict.ParseResetDuration(v); ok {
			resetAt = now.Add(d)
		}
	}
	if remaining == "" {
		remaining, limit = headerValue(h, "Anthropic-Ratelimit-Requests-Remaining"), headerValue(h, "Anthropic-Ratelimit-Requests-Limit")
		if v := headerValue(h, "Anthropic-Ratelimit-Requests-Reset"); v != "" {
			if d, ok := verdict.ParseResetTimestamp(v, now); ok {
				resetAt = now.Add(d)
			}
		}
	}
	frac := -1.0
	r, ok1 := number(remaining)
	l, ok2 := number(limit)
	if ok1 && ok2 && l > 0 && r >= 0 {
		frac = min(r/l, 1)
	}
	return frac, resetAt
}

// headerValue reads a header by its canonical name (every name here is one)
// straight from the map, skipping the check http.Header.Get makes per call.
func headerValue(h http.Header, canonical string) string {
	if v := h[canonical]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// number parses a numeric header value; an absent (empty) one is not a
// number, without the error value strconv would allocate for it.
func number(v string) (float64, bool) {
	if v == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	return f, err == nil
}

// The usage-window headers, by window, spelled canonically so that reading
// them allocates nothing (http.Header.Get canonicalises any other spelling).
type unifiedHeaders struct{ utilization, reset string }

type codexHeaders struct{ usedPercent, resetAfterSeconds, resetAt, windowMinutes string }

// observeWindows reads a subscription's usage windows from any upstream answer
// (Claude anthropic-ratelimit-unified-*, Codex x-codex-primary/secondary-*),
// stores them on the connection (health and the dashboard's quota meter) and
// feeds the most used window to the reset-aware strategies. Absent headers
// change nothing.
func observeWindows(t *routing.Ticket, c *routing.Conn, h http.Header, now time.Time) {
	q, ok := WindowsFromHeaders(h, now)
	if !ok {
		return
	}
	c.SetQuotaWindows(q)
	w := q.FiveHour
	if q.Weekly.Known() && (!w.Known() || q.Weekly.Utilization >= w.Utilization) {
		w = q.Weekly
	}
	if w.Known() {
		t.ObserveQuota(max(0, 1-w.Utilization), w.ResetsAt)
	}
}

// WindowsFromHeaders parses the 5-hour and weekly usage windows. Claude sends
// utilisation as a fraction and resets as Unix seconds; Codex sends percent
// used, the window length in minutes and seconds until reset (primary is the
// short window, secondary the weekly one; the length decides when given).
func WindowsFromHeaders(h http.Header, now time.Time) (routing.Quota, bool) {
	q := routing.Quota{FiveHour: routing.Window{Utilization: -1}, Weekly: routing.Window{Utilization: -1}, Daily: routing.Window{Utilization: -1}, ObservedAt: now}
	found := false
	if w, ok := unifiedWindow(h, unifiedHeaders{"Anthropic-Ratelimit-Unified-5h-Utilization", "Anthropic-Ratelimit-Unified-5h-Reset"}); ok {
		q.FiveHour, found = w, true
	}
	if w, ok := unifiedWindow(h, unifiedHeaders{"Anthropic-Ratelimit-Unified-7d-Utilization", "Anthropic-Ratelimit-Unified-7d-Reset"}); ok {
		q.Weekly, found = w, true
	}
	if s := headerValue(h, "Anthropic-Ratelimit-Unified-Status"); s != "" {
		q.Status, found = s, true
	}
	for i, names := range [...]codexHeaders{
		{"X-Codex-Primary-Used-Percent", "X-Codex-Primary-Reset-After-Seconds", "X-Codex-Primary-Reset-At", "X-Codex-Primary-Window-Minutes"},
		{"X-Codex-Secondary-Used-Percent", "X-Codex-Secondary-Reset-After-Seconds", "X-Codex-Secondary-Reset-At", "X-Codex-Secondary-Window-Minutes"},
	} {
		w, minutes, ok := codexWindow(h, names, now)
		if !ok {
			continue
		}
		found = true
		weekly := i == 1
		if minutes > 0 {
			weekly = minutes > 24*60
		}
		if weekly {
			q.Weekly = w
		} else {
			q.FiveHour = w
		}
	}
	return q, found
}

func unifiedWindow(h http.Header, names unifiedHeaders) (routing.Window, bool) {
	u, ok := number(headerValue(h, names.utilization))
	if !ok || u < 0 {
		return routing.Window{}, false
	}
	w := routing.Window{Utilization: min(u, 1)}
	if s, ok := number(headerValue(h, names.reset)); ok && s > 0 {
		w.ResetsAt = time.UnixMilli(int64(s * 1000)).UTC()
	}
	return w, true
}

func codexWindow(h http.Header, names codexHeaders, now time.Time) (routing.Window, int, bool) {
	p, ok := number(headerValue(h, names.usedPercent))
	if !ok || p < 0 {
		return routing.Window{}, 0, false
	}
	w := routing.Window{Utilization: min(p/100, 1)}
	if s, ok := number(headerValue(h, names.resetAfterSeconds)); ok && s >= 0 {
		w.ResetsAt = now.Add(time.Duration(s * float64(time.Second))).UTC()
	} else if s, ok := number(headerValue(h, names.resetAt)); ok && s > 0 {
		w.ResetsAt = time.Unix(int64(s), 0).UTC()
	}
	minutes, _ := strconv.Atoi(headerValue(h, names.windowMinutes))
	return w, minutes, true
}
