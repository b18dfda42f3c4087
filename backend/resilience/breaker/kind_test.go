package breaker_test

import (
	"testing"
	"time"

	"omniroute/backend/resilience/breaker"
)

// failOf reports n counted failures of kind k through permits.
func failOf(t *testing.T, b *breaker.Breaker, k breaker.FailureKind, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		p, ok := b.Allow()
		if !ok {
			t.Fatalf("failure %d: Allow refused in state %s", i+1, b.State())
		}
		p.FailureOf(k)
	}
}

// TestDefaultProfileHasNoKindHolds: the guide's default for every failure
// kind is "no cooldownByKind value": each kind holds for resetTimeout.
func TestDefaultProfileHasNoKindHolds(t *testing.T) {
	for _, category := range []string{"oauth", "apikey", "local"} {
		if got := breaker.DefaultProfile(category).OpenByKind; got != (breaker.KindHolds{}) {
			t.Errorf("DefaultProfile(%q).OpenByKind = %+v, want all zero (resetTimeout)", category, got)
		}
	}
}

// TestOpenHoldPerFailureKind drives each kind of opening failure on a fake
// clock and checks the OPEN hold to the millisecond: one ms before its end the
// breaker is OPEN with 1 ms to go, one ms after it lets the probe through. The
// gateway's probe interval (15 s) caps every hold, a per-kind one included.
func TestOpenHoldPerFailureKind(t *testing.T) {
	holds := breaker.KindHolds{Server: 10 * time.Second, Transport: 5 * time.Second, Timeout: 0}
	tests := []struct {
		name     string
		kind     breaker.FailureKind
		holds    breaker.KindHolds
		probe    time.Duration
		wantHold time.Duration
	}{
		{"server uses its hold", breaker.FailureServer, holds, breaker.DefaultProbeInterval, 10 * time.Second},
		{"transport uses its hold", breaker.FailureTransport, holds, breaker.DefaultProbeInterval, 5 * time.Second},
		{"unset kind: resetTimeout capped by the probe interval", breaker.FailureTimeout, holds, breaker.DefaultProbeInterval, 15 * time.Second},
		{"unknown kind: resetTimeout capped by the probe interval", "", holds, breaker.DefaultProbeInterval, 15 * time.Second},
		{"unset kind, no probe interval: resetTimeout", breaker.FailureTimeout, holds, 0, 30 * time.Second},
		{"kind hold over the probe interval is capped", breaker.FailureServer, breaker.KindHolds{Server: 40 * time.Second}, breaker.DefaultProbeInterval, 15 * time.Second},
		{"kind hold over resetTimeout, no probe interval", breaker.FailureServer, breaker.KindHolds{Server: 40 * time.Second}, 0, 40 * time.Second},
	}
	for _, tt := range tests {
		for _, off := range []time.Duration{-time.Millisecond, time.Millisecond} {
			t.Run(tt.name+"/"+off.String(), func(t *testing.T) {
				p := breaker.DefaultProfile("apikey") // resetTimeout 30 s
				p.OpenByKind, p.ProbeInterval = tt.holds, tt.probe
				b, clk := newBreaker(t, p)
				failOf(t, b, tt.kind, p.FailureThreshold)
				s := b.Status()
				if s.State != breaker.Open || s.RetryAfter != tt.wantHold || s.LastFailureKind != tt.kind {
					t.Fatalf("after opening: %s, RetryAfter %v, kind %q; want OPEN, %v, %q", s.State, s.RetryAfter, s.LastFailureKind, tt.wantHold, tt.kind)
				}
				clk.Advance(tt.wantHold + off)
				_, allowed := b.Allow()
				if off < 0 {
					if allowed || b.State() != breaker.Open || b.RetryAfter() != time.Millisecond {
						t.Fatalf("1 ms before the hold ends: allowed %v, %s, RetryAfter %v; want refused, OPEN, 1ms", allowed, b.State(), b.RetryAfter())
					}
					return
				}
				if !allowed || b.State() != breaker.HalfOpen {
					t.Fatalf("1 ms after the hold ends: allowed %v, %s; want the HALF_OPEN probe", allowed, b.State())
				}
			})
		}
	}
}

// TestFailedProbeReopensForItsKind: a failed HALF_OPEN probe re-opens for
// the hold of its own failure's kind, not the one that first opened.
func TestFailedProbeReopensForItsKind(t *testing.T) {
	p := breaker.DefaultProfile("apikey")
	p.OpenByKind = breaker.KindHolds{Server: 10 * time.Second, Transport: 3 * time.Second}
	p.ProbeInterval = breaker.DefaultProbeInterval
	b, clk := newBreaker(t, p)
	failOf(t, b, breaker.FailureServer, p.FailureThreshold)
	clk.Advance(10 * time.Second)
	failOf(t, b, breaker.FailureTransport, 1) // the probe fails on a reset
	if got := b.RetryAfter(); got != 3*time.Second {
		t.Fatalf("RetryAfter after a failed transport probe = %v, want 3s", got)
	}
	clk.Advance(3*time.Second - time.Millisecond)
	if got := b.State(); got != breaker.Open {
		t.Fatalf("1 ms before the re-open ends: %s, want OPEN", got)
	}
	clk.Advance(2 * time.Millisecond)
	if got := b.State(); got != breaker.HalfOpen {
		t.Fatalf("1 ms after the re-open ends: %s, want HALF_OPEN", got)
	}
}

// TestDegradedQuietWindowPerKind: a DEGRADED breaker decays to CLOSED after
// the longest OPEN hold of its last failure's kind (guide §1), not resetTimeout's.
func TestDegradedQuietWindowPerKind(t *testing.T) {
	p := breaker.DefaultProfile("apikey") // degrades at 7, quiet window 30 s by default
	p.OpenByKind = breaker.KindHolds{Transport: 5 * time.Second}
	for _, tc := range []struct {
		kind  breaker.FailureKind
		quiet time.Duration
	}{{breaker.FailureTransport, 5 * time.Second}, {breaker.FailureServer, 30 * time.Second}} {
		t.Run(string(tc.kind), func(t *testing.T) {
			b, clk := newBreaker(t, p)
			failOf(t, b, tc.kind, p.DegradationThreshold)
			clk.Advance(tc.quiet - time.Millisecond)
			if got := b.State(); got != breaker.Degraded {
				t.Fatalf("1 ms before the quiet window ends: %s, want DEGRADED", got)
			}
			clk.Advance(2 * time.Millisecond)
			if got := b.State(); got != breaker.Closed {
				t.Fatalf("1 ms after the quiet window ends: %s, want CLOSED", got)
			}
		})
	}
}

// TestKindHoldsNormalize: unset and negative holds mean resetTimeout; set
// ones are clamped to [1s, 1h] like resetTimeout.
func TestKindHoldsNormalize(t *testing.T) {
	p := breaker.Profile{OpenByKind: breaker.KindHolds{Server: -time.Second, Transport: 10 * time.Millisecond, Timeout: 2 * time.Hour}}.Normalize()
	want := breaker.KindHolds{Server: 0, Transport: time.Second, Timeout: time.Hour}
	if p.OpenByKind != want {
		t.Fatalf("normalized OpenByKind = %+v, want %+v", p.OpenByKind, want)
	}
}
