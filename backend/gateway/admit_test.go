package gateway

import (
	"testing"
	"time"

	"omniroute/backend/resilience/queue"
	"omniroute/backend/resilience/verdict"
)

// A body-declared retry hint paces (pauses) a protected connection's queue,
// except a typed Google RetryInfo longer than maxWaitMs, which is a model
// lockout instead; header hints and unprotected connections never pause.
func TestObservePausesOnBodyHints(t *testing.T) {
	now := time.Unix(1_000, 0)
	const maxWait = 30 * time.Second
	for _, tc := range []struct {
		name      string
		protected bool
		v         verdict.Verdict
		want      time.Duration // pause length, 0 = none
	}{
		{"prose hint within maxWait", true, verdict.Verdict{Kind: verdict.KindRateLimit, RetryAfter: 5 * time.Second, HintSource: verdict.HintBody}, 5 * time.Second},
		{"prose hint beyond maxWait keeps the pause", true, verdict.Verdict{Kind: verdict.KindRateLimit, RetryAfter: time.Minute, HintSource: verdict.HintBody}, time.Minute},
		{"RetryInfo at maxWait", true, verdict.Verdict{Kind: verdict.KindRateLimit, RetryAfter: maxWait, HintSource: verdict.HintGoogleRPCRetryInfo}, maxWait},
		{"RetryInfo 1ms past maxWait is a lockout", true, verdict.Verdict{Kind: verdict.KindRateLimit, RetryAfter: maxWait + time.Millisecond, HintSource: verdict.HintGoogleRPCRetryInfo}, 0},
		{"header hint", true, verdict.Verdict{Kind: verdict.KindRateLimit, RetryAfter: 5 * time.Second, HintSource: verdict.HintRetryAfter}, 0},
		{"quota-shaped 429 (RESOURCE_EXHAUSTED)", true, verdict.Verdict{Kind: verdict.KindQuota, Status: 429, RetryAfter: 10 * time.Second, HintSource: verdict.HintGoogleRPCRetryInfo}, 10 * time.Second},
		{"server error", true, verdict.Verdict{Kind: verdict.KindServer, RetryAfter: 5 * time.Second, HintSource: verdict.HintBody}, 0},
		{"unprotected", false, verdict.Verdict{Kind: verdict.KindRateLimit, RetryAfter: 5 * time.Second, HintSource: verdict.HintBody}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &admission{q: &queue.Queue{}, protected: tc.protected, settings: queue.Settings{MaxWait: maxWait}}
			a.observe(tc.v, now)
			got := time.Duration(0)
			if p := a.q.PausedUntil(); !p.IsZero() {
				got = p.Sub(now)
			}
			if got != tc.want {
				t.Fatalf("pause = %v, want %v", got, tc.want)
			}
		})
	}
}

// The execution bound cuts only when it is not longer than the first-byte
// timeout it is raised to, and only on protected connections.
func TestExecCuts(t *testing.T) {
	fb := 2 * time.Second
	for _, tc := range []struct {
		exec      time.Duration
		protected bool
		want      bool
	}{
		{fb - time.Millisecond, true, true},
		{fb, true, true},
		{fb + time.Millisecond, true, false},
		{fb, false, false},
	} {
		a := &admission{protected: tc.protected, settings: queue.Settings{ExecutionMaxWait: tc.exec}}
		if got := a.execCuts(fb); got != tc.want {
			t.Errorf("exec %v protected %v: %v, want %v", tc.exec, tc.protected, got, tc.want)
		}
	}
	var none *admission
	if none.execCuts(fb) {
		t.Error("no admission cuts")
	}
}
