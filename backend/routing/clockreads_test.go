package routing

import (
	"sync/atomic"
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/resilience/verdict"
)

// countingClock counts its reads.
type countingClock struct {
	clock.Fake
	reads atomic.Int64
}

func (c *countingClock) Now() time.Time { c.reads.Add(1); return c.Fake.Now() }

// A successful attempt's bookkeeping reads the clock twice: the target's
// last-good time (Ticket.settle) and the breaker's outcome. The reach, the
// connection cooldown and the empty lockout and model-cooldown tables need
// no time on a success; every read costs ≈ 70 ns of CPU on the benchmark
// machine, per attempt. A failure still reads it where the time is kept.
func TestSuccessfulFinishReadsTheClockTwice(t *testing.T) {
	clk := &countingClock{Fake: *clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	e := benchEngineOn(t, clk)
	p, err := e.Plan(PlanInput{Model: "p0/gpt-4o-mini"})
	if err != nil {
		t.Fatal(err)
	}
	cand := p.Candidates[0]
	tk, x := e.Admit(cand)
	if x != nil {
		t.Fatalf("refused: %+v", x)
	}
	clk.reads.Store(0)
	tk.Finish(verdict.Verdict{Kind: verdict.KindSuccess, Status: 200})
	if n := clk.reads.Load(); n != 2 {
		t.Fatalf("a successful Finish read the clock %d times, want 2", n)
	}

	// A transport failure still stamps the miss with the time.
	tk, x = e.Admit(cand)
	if x != nil {
		t.Fatalf("refused: %+v", x)
	}
	clk.Advance(time.Minute)
	tk.Finish(verdict.Verdict{Kind: verdict.KindTransport, Message: "dial refused", CountsForBreaker: true})
	if r := cand.Conn.Reach(); r.Misses != 1 || !r.Since.Equal(clk.Fake.Now()) {
		t.Fatalf("reach after a transport failure = %+v, want one miss since %v", r, clk.Fake.Now())
	}
}

// A plan checks its candidates at the time it read for them: one read for
// the plan and its checks (the breaker keeps its own), not one more per
// candidate.
func TestPlanChecksAtItsOwnRead(t *testing.T) {
	clk := &countingClock{Fake: *clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	e := benchEngineOn(t, clk)
	if _, err := e.Plan(PlanInput{Model: "p0/gpt-4o-mini"}); err != nil { // warm: the registry's first resolve
		t.Fatal(err)
	}
	clk.reads.Store(0)
	p, err := e.Plan(PlanInput{Model: "p0/gpt-4o-mini"})
	if err != nil || len(p.Candidates) == 0 {
		t.Fatalf("plan %+v, %v", p, err)
	}
	if n := clk.reads.Load(); n != 2 {
		t.Fatalf("a plan of one candidate read the clock %d times, want 2 (the plan's, the breaker's status)", n)
	}
}
