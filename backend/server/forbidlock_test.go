package server_test

import (
	"testing"

	"omniroute/tests/fakeupstream"
)

// TestOrdinaryForbiddenLockIsTransient (issue 40 D): with model lockout on,
// an ordinary 403 (no rule naming a permanent denial) locks the model for a
// while; a request refused by that lock is answered as transient, 503 with
// Retry-After, never the permanent 403 UPSTREAM_FORBIDDEN clients do not
// retry.
func TestOrdinaryForbiddenLockIsTransient(t *testing.T) {
	e := newEnv(t)
	e.patchResilience(map[string]any{"modelLockout": map[string]any{"enabled": true, "baseCooldownMs": 5000}})
	e.addEndpoint("gate", "key-a")
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 403, Times: 1})
	// The 403 itself, then a request refused by the lock it wrote.
	for i := 1; i <= 2; i++ {
		resp, body := e.chat("gate/gpt-4o-mini", false, nil)
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "5" || errorCode(body) != "all_targets_cooling_down" {
			t.Fatalf("request %d, locked by an ordinary 403: %d (Retry-After %q) %s", i, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	}
}
