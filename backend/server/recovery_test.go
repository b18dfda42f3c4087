package server_test

import (
	"testing"
	"time"

	"omniroute/tests/fakeupstream"
)

// TestOneRequestCountsOnceTowardTheBreaker (issue 40 B): a request whose
// target answers 503 to the attempt and to its in-place retry adds one
// failure to the provider breaker, as it adds one to the streaks; with the
// default threshold (12) the breaker opens at the 12th such request, not
// the 6th.
func TestOneRequestCountsOnceTowardTheBreaker(t *testing.T) {
	e := newEnv(t)
	e.patchResilience(map[string]any{"failover": map[string]any{"failureStreak": 0}}) // the breaker alone
	e.addEndpoint("wall", "key-a")
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503})
	const provider = "openai-compatible:wall"
	for i := 1; i <= 12; i++ {
		e.chat("wall/gpt-4o-mini", false, nil)
		hits := 2 * i // the attempt and its retry
		if i == 12 {
			hits-- // the attempt opened the breaker: its retry is refused
		}
		if got := e.up.Hits("key-a"); got != hits {
			t.Fatalf("request %d: %d upstream hits, want %d", i, got, hits)
		}
		ph := e.health()["providerHealth"].(map[string]any)
		p, _ := ph[provider].(map[string]any)
		want := "CLOSED"
		switch {
		case i == 12:
			want = "OPEN"
		case i >= 7:
			want = "DEGRADED"
		}
		if got := breakerState(e.health(), provider); got != want || (i < 12 && p["failures"].(float64) != float64(i)) {
			t.Fatalf("after request %d: %s with %v failures, want %s with %d", i, got, p["failures"], want, i)
		}
	}
}

// TestRecoveredPrimaryServesWithinTheBound (issue 40 B): with no setting
// changed, a combo's primary answers 503 for a long outage while its
// fallback serves every request; whatever the phase at which the primary
// recovers (the streak cooldowns climbing their ladder, the breaker open or
// probing), it serves again within 15 s of recovering (docs/FAILOVER.md
// "Prompt recovery"). A request arrives every second of the fake clock.
func TestRecoveredPrimaryServesWithinTheBound(t *testing.T) {
	for _, outage := range []time.Duration{16 * time.Second, 30 * time.Second, 45 * time.Second, 61 * time.Second} {
		t.Run(outage.String(), func(t *testing.T) {
			e := newEnv(t)
			primary := e.addEndpoint("prim", "key-a")
			fallback := e.addEndpoint("fall", "key-b")
			e.addCombo("steady", "priority", target("prim/gpt-4o-mini"), target("fall/gpt-4o-mini"))
			e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503})
			start := e.clk.Now()
			for e.clk.Now().Sub(start) < outage {
				resp, body := e.chat("steady", false, nil)
				if resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != fallback {
					t.Fatalf("at +%v of the outage: %d %s", e.clk.Now().Sub(start), resp.StatusCode, body)
				}
				e.clk.Advance(time.Second)
			}
			e.up.ClearFaults()
			recovered := e.clk.Now()
			for {
				resp, body := e.chat("steady", false, nil)
				if resp.StatusCode != 200 {
					t.Fatalf("after recovery: %d %s", resp.StatusCode, body)
				}
				if resp.Header.Get("X-OmniRoute-Selected-Connection-Id") == primary {
					break
				}
				if waited := e.clk.Now().Sub(recovered); waited > 15*time.Second {
					t.Fatalf("the recovered primary is still unused %v after recovering", waited)
				}
				e.clk.Advance(time.Second)
			}
		})
	}
}
