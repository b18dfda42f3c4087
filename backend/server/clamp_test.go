package server_test

import (
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"omniroute/backend/store"
)

// TestLoadedDeadlinesAreClamped (issue 36 item 6): a cooldown and an OPEN
// breaker written while the clock was a year ahead block for the longest of
// their kind from the start (24 h for a cooldown with the defaults, one
// reset timeout for the breaker), not for a year. Boundaries ±1 ms.
func TestLoadedDeadlinesAreClamped(t *testing.T) {
	e := newEnv(t)
	cooled := e.addEndpoint("cooled", "key-a")
	e.addEndpoint("opened", "key-b")
	e.patchResilience(map[string]any{"providerBreaker": map[string]any{"apiKey": map[string]any{"resetTimeoutMs": 30000}}})
	e.stop()

	ahead := e.clk.Now().Add(365 * 24 * time.Hour).UnixMilli()
	st, err := store.Open(filepath.Join(e.dir, "omniroute.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SaveCooldown(cooled, store.CooldownFields{RateLimitedUntil: ahead, TestStatus: "unavailable",
		LastError: "rate limited", LastErrorType: "rate_limit", LastErrorAt: ahead, BackoffLevel: 1}); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveBreaker(store.BreakerRow{Provider: "openai-compatible:opened", State: "OPEN", Failures: 12, OpenCycles: 1,
		LastFailureAt: ahead, OpenedAt: ahead, StateChangedAt: ahead}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	e.start()
	loaded := e.clk.Now()

	// The cooldown: clamped to exactly now + 24 h, written back.
	code, m := e.mgmt("GET", "/api/providers/"+cooled, nil)
	c, _ := m["connection"].(map[string]any)
	if want := loaded.Add(24 * time.Hour).UTC().Format(time.RFC3339); code != http.StatusOK || c["rateLimitedUntil"] != want {
		t.Fatalf("rateLimitedUntil = %v (%d), want %s", c["rateLimitedUntil"], code, want)
	}

	// The breaker: OPEN for one probe interval (15 s, under the 30 s reset
	// timeout) from the load, then a probe.
	if s := breakerState(e.health(), "openai-compatible:opened"); s != "OPEN" {
		t.Fatalf("breaker after load: %s, want OPEN", s)
	}
	e.clk.Advance(15*time.Second - time.Millisecond)
	if resp, body := e.chat("opened/gpt-4o-mini", false, nil); resp.StatusCode == http.StatusOK {
		t.Fatalf("1 ms before the clamped hold ends the breaker let a request through: %s", body)
	}
	e.clk.Advance(time.Millisecond)
	if resp, body := e.chat("opened/gpt-4o-mini", false, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("at the clamped hold's end: %d %s, want the probe served", resp.StatusCode, body)
	}

	// The cooldown ends at now + 24 h, not in a year.
	e.clk.Set(loaded.Add(24*time.Hour - time.Millisecond))
	if resp, _ := e.chat("cooled/gpt-4o-mini", false, nil); resp.StatusCode == http.StatusOK {
		t.Fatal("1 ms before the clamped cooldown ends the connection served")
	}
	e.clk.Set(loaded.Add(24 * time.Hour))
	if resp, body := e.chat("cooled/gpt-4o-mini", false, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("at the clamped cooldown's end: %d %s, want served", resp.StatusCode, body)
	}
}
