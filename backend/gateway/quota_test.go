package gateway

import (
	"net/http"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestQuotaHeadersParse(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		h    map[string]string
		frac float64
		wait time.Duration
	}{
		{"openai", map[string]string{"x-ratelimit-remaining-requests": "25", "x-ratelimit-limit-requests": "100", "x-ratelimit-reset-requests": "6m0s"}, 0.25, 6 * time.Minute},
		{"anthropic", map[string]string{"anthropic-ratelimit-requests-remaining": "9", "anthropic-ratelimit-requests-limit": "10",
			"anthropic-ratelimit-requests-reset": now.Add(30 * time.Second).Format(time.RFC3339)}, 0.9, 30 * time.Second},
		{"none", map[string]string{}, -1, 0},
		{"garbage", map[string]string{"x-ratelimit-remaining-requests": "x", "x-ratelimit-limit-requests": "0"}, -1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.h {
				h.Set(k, v)
			}
			frac, reset := quotaFromHeaders(h, now)
			if frac != tt.frac || (tt.wait == 0) != reset.IsZero() || (!reset.IsZero() && reset.Sub(now) != tt.wait) {
				t.Fatalf("frac %v reset %v", frac, reset)
			}
		})
	}
}

func TestWindowsFromHeaders(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	tests := []struct {
		name           string
		h              http.Header
		ok             bool
		five, week     float64
		fiveAt, weekAt time.Time
		status         string
	}{
		{"none", hdr("x-ratelimit-remaining-requests", "5"), false, -1, -1, time.Time{}, time.Time{}, ""},
		{"claude unified", hdr("anthropic-ratelimit-unified-5h-utilization", "0.25", "anthropic-ratelimit-unified-5h-reset", "1767232800",
			"anthropic-ratelimit-unified-7d-utilization", "0.5", "anthropic-ratelimit-unified-7d-reset", "1767830400",
			"anthropic-ratelimit-unified-status", "allowed"), true, 0.25, 0.5,
			time.Unix(1767232800, 0).UTC(), time.Unix(1767830400, 0).UTC(), "allowed"},
		{"codex by window length", hdr("x-codex-primary-used-percent", "80", "x-codex-primary-window-minutes", "10080",
			"x-codex-primary-reset-after-seconds", "60", "x-codex-secondary-used-percent", "5", "x-codex-secondary-window-minutes", "300",
			"x-codex-secondary-reset-after-seconds", "30"), true, 0.05, 0.8, now.Add(30 * time.Second), now.Add(time.Minute), ""},
		{"codex default order, utilisation capped", hdr("x-codex-primary-used-percent", "150", "x-codex-secondary-used-percent", "1",
			"x-codex-secondary-reset-at", "1767232800"), true, 1, 0.01, time.Time{}, time.Unix(1767232800, 0).UTC(), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, ok := WindowsFromHeaders(tt.h, now)
			if ok != tt.ok || q.FiveHour.Utilization != tt.five || q.Weekly.Utilization != tt.week ||
				!q.FiveHour.ResetsAt.Equal(tt.fiveAt) || !q.Weekly.ResetsAt.Equal(tt.weekAt) || q.Status != tt.status {
				t.Fatalf("got %+v ok %v", q, ok)
			}
		})
	}
}
