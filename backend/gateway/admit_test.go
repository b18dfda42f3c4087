package gateway

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/resilience/queue"
	"omniroute/backend/resilience/verdict"
	"omniroute/backend/routing"
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

// countingClock counts its reads.
type countingClock struct {
	clock.Fake
	reads int
}

func (c *countingClock) Now() time.Time { c.reads++; return c.Fake.Now() }

// An unprotected connection with a free gate slot is admitted without
// reading the clock (nothing waited: queued 0); a protected one reads it
// once, for its wait budget's deadline, and, going straight through (no
// wait, no pacing), paces at that time and queued 0 without a second read.
func TestAdmitFreeSlotReadsNoClock(t *testing.T) {
	for _, tc := range []struct {
		name      string
		protected bool
		reads     int
	}{
		{"unprotected, free slot", false, 0},
		{"protected", true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &countingClock{Fake: *clock.NewFake(time.Unix(1_000, 0))}
			g := benchGateway()
			g.clk = clk
			conn := &routing.Conn{ID: "c1", BreakerKey: "openai-compatible"}
			conn.Limits.Protection = tc.protected
			a, err := g.admit(context.Background(), &routing.Plan{}, routing.Candidate{Conn: conn, Model: "gpt-4o-mini"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer a.release()
			if a.permit == nil || a.queued != 0 || a.reason != "" {
				t.Fatalf("admission: permit %v, queued %v, reason %q", a.permit, a.queued, a.reason)
			}
			if clk.reads != tc.reads {
				t.Fatalf("%d clock reads, want %d", clk.reads, tc.reads)
			}
			if st := g.gate.Get(AccountKey(conn.ID)); st.InFlight != 1 {
				t.Fatalf("gate in flight %d, want 1", st.InFlight)
			}
		})
	}
}

// A protected connection's admission that waited (its pacing turn) still
// times the wait for the request log: the second of two admissions 30 ms
// apart (minTimeMs) queues exactly that long, the first queued 0 (fake time:
// the pacing's timer runs in a synctest bubble).
func TestAdmitPacedWaitIsTimed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := benchGateway()
		g.clk = clock.Real{} // time.Now and the pacing's timer are the bubble's
		conn := &routing.Conn{ID: "c1", BreakerKey: "openai-compatible"}
		conn.Limits.Protection = true
		minTime := int64(30)
		conn.Limits.Queue.MinTimeMs = &minTime
		cand := routing.Candidate{Conn: conn, Model: "gpt-4o-mini"}
		first, err := g.admit(context.Background(), &routing.Plan{}, cand, nil)
		if err != nil {
			t.Fatal(err)
		}
		first.release()
		second, err := g.admit(context.Background(), &routing.Plan{}, cand, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer second.release()
		if first.queued != 0 {
			t.Errorf("the first admission queued %v, want 0 (its turn was free)", first.queued)
		}
		if second.queued != 30*time.Millisecond || second.reason == "" {
			t.Errorf("the paced admission queued %v (reason %q), want 30ms and a reason", second.queued, second.reason)
		}
	})
}

// BenchmarkAdmit: a candidate's admission on an unprotected connection with
// a free slot (every request's), on the wall clock.
func BenchmarkAdmit(b *testing.B) {
	g := benchGateway()
	g.clk = clock.Real{}
	cand := routing.Candidate{Conn: &routing.Conn{ID: "c1", BreakerKey: "openai-compatible"}, Model: "gpt-4o-mini"}
	plan := &routing.Plan{}
	var slot admission
	b.ReportAllocs()
	for b.Loop() {
		a, err := g.admit(context.Background(), plan, cand, &slot)
		if err != nil {
			b.Fatal(err)
		}
		a.release()
	}
}

// BenchmarkAdmitProtected: the same on a protected connection (its queue:
// every API-key connection's, autoEnableApiKeyProviders), which goes
// straight through: no wait, no pacing.
func BenchmarkAdmitProtected(b *testing.B) {
	g := benchGateway()
	g.clk = clock.Real{}
	conn := &routing.Conn{ID: "c1", BreakerKey: "openai-compatible"}
	conn.Limits.Protection = true
	cand := routing.Candidate{Conn: conn, Model: "gpt-4o-mini"}
	plan := &routing.Plan{}
	var slot admission
	b.ReportAllocs()
	for b.Loop() {
		a, err := g.admit(context.Background(), plan, cand, &slot)
		if err != nil {
			b.Fatal(err)
		}
		a.release()
	}
}
