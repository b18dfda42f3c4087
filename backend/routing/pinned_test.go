package routing

import "testing"

// TestPlanReportsThePinItWasOrderedBy: a plan names the session pin it saw
// ("" before the session has one), the pin going first; the gateway's pin
// claim moves a session only from that pin.
func TestPlanReportsThePinItWasOrderedBy(t *testing.T) {
	e, pins := spreadEngine(t)
	p, err := e.Plan(PlanInput{Model: "m", SessionKey: "s"})
	if err != nil || p.Pinned != "" {
		t.Fatalf("a new session's plan: Pinned %q, %v; want none", p.Pinned, err)
	}
	if err := pins.Served("s", "acct-c", "claude"); err != nil {
		t.Fatal(err)
	}
	p, err = e.Plan(PlanInput{Model: "m", SessionKey: "s"})
	if err != nil || p.Pinned != "acct-c" || p.Candidates[0].Conn.ID != "acct-c" {
		t.Fatalf("a pinned session's plan: Pinned %q, first %s, %v; want acct-c first", p.Pinned, p.Candidates[0].Conn.ID, err)
	}
	if p, _ := e.Plan(PlanInput{Model: "m"}); p.Pinned != "" {
		t.Fatalf("a plan without a session: Pinned %q", p.Pinned)
	}
}
