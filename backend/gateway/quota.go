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
	q := routing.Quota{FiveHour: routing.Window{Utilization: -1}, Weekly: routing.Window{Utilization: -1}, ObservedAt: now}
	found := false
	if w, ok := unifiedWindow(h, "5h"); ok {
		q.FiveHour, found = w, true
	}
	if w, ok := unifiedWindow(h, "7d"); ok {
		q.Weekly, found = w, true
	}
	if s := h.Get("anthropic-ratelimit-unified-status"); s != "" {
		q.Status, found = s, true
	}
	for i, name := range []string{"primary", "secondary"} {
		w, minutes, ok := codexWindow(h, name, now)
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

func unifiedWindow(h http.Header, name string) (routing.Window, bool) {
	u, err := strconv.ParseFloat(h.Get("anthropic-ratelimit-unified-"+name+"-utilization"), 64)
	if err != nil || u < 0 {
		return routing.Window{}, false
	}
	w := routing.Window{Utilization: min(u, 1)}
	if s, err := strconv.ParseFloat(h.Get("anthropic-ratelimit-unified-"+name+"-reset"), 64); err == nil && s > 0 {
		w.ResetsAt = time.UnixMilli(int64(s * 1000)).UTC()
	}
	return w, true
}

func codexWindow(h http.Header, name string, now time.Time) (routing.Window, int, bool) {
	p, err := strconv.ParseFloat(h.Get("x-codex-"+name+"-used-percent"), 64)
	if err != nil || p < 0 {
		return routing.Window{}, 0, false
	}
	w := routing.Window{Utilization: min(p/100, 1)}
	if s, err := strconv.ParseFloat(h.Get("x-codex-"+name+"-reset-after-seconds"), 64); err == nil && s >= 0 {
		w.ResetsAt = now.Add(time.Duration(s * float64(time.Second))).UTC()
	} else if s, err := strconv.ParseFloat(h.Get("x-codex-"+name+"-reset-at"), 64); err == nil && s > 0 {
		w.ResetsAt = time.Unix(int64(s), 0).UTC()
	}
	minutes, _ := strconv.Atoi(h.Get("x-codex-" + name + "-window-minutes"))
	return w, minutes, true
}
