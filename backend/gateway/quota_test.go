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
