//go:build !race

package routing

import (
	"testing"

	"omniroute/backend/resilience/verdict"
)

// Allocation pins of the per-request routing work. Not built under -race,
// whose instrumentation changes allocation counts.

// TestPlanAndTicketAllocations: planning a model one connection serves costs
// one allocation (the candidate list), and an attempt's ticket from admission
// to a successful verdict one (the ticket, which holds the breaker permit);
// the per-target bookkeeping builds no key strings.
func TestPlanAndTicketAllocations(t *testing.T) {
	e := benchEngine(t)
	var cand Candidate
	plan := testing.AllocsPerRun(100, func() {
		p, err := e.Plan(PlanInput{Model: "p0/gpt-4o-mini"})
		if err != nil || len(p.Candidates) != 1 {
			t.Fatalf("plan: %v %+v", err, p)
		}
		cand = p.Candidates[0]
	})
	ticket := testing.AllocsPerRun(100, func() {
		tk, x := e.Admit(cand)
		if x != nil {
			t.Fatalf("refused: %+v", x)
		}
		tk.Finish(verdict.Verdict{Kind: verdict.KindSuccess, Status: 200})
	})
	if plan > 1 || ticket > 1 {
		t.Fatalf("allocations: plan %v (want ≤ 1), ticket %v (want ≤ 1)", plan, ticket)
	}
	if n := testing.AllocsPerRun(100, func() { e.ToolLimit(cand.Conn.ID, cand.Model) }); n != 0 {
		t.Fatalf("%v allocations per tool-limit lookup, want 0", n)
	}
}
