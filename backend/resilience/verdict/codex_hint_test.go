package verdict

import (
	"net/http"
	"testing"
	"time"
)

// TestCodexUsageLimitHint: the Codex backend's usage-limit 429 says when the
// window resets in its JSON body; that is the cooldown hint.
func TestCodexUsageLimitHint(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		body string
		want time.Duration
	}{
		{`{"error":{"type":"usage_limit_reached","message":"The usage limit has been reached","resets_in_seconds":1800}}`, 30 * time.Minute},
		{`{"error":{"type":"usage_limit_reached","resets_at":` + "1767229200" + `}}`, time.Hour},
		{`{"error":{"type":"usage_limit_reached","resets_in_seconds":0}}`, 0},
	}
	for _, c := range cases {
		if d, _ := HintFromResponse(http.Header{}, []byte(c.body), now); d != c.want {
			t.Errorf("%s: %v, want %v", c.body, d, c.want)
		}
	}
	v := Classify(Outcome{Status: 429, Body: []byte(cases[0].body), Provider: "codex", Now: now})
	if v.RetryAfter != 30*time.Minute || !v.Failover {
		t.Fatalf("verdict %+v", v)
	}
}
