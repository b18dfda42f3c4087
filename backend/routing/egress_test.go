package routing

import (
	"fmt"
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/providers/registry"
	"omniroute/backend/resilience/breaker"
	"omniroute/backend/resilience/cooldown"
	"omniroute/backend/resilience/lockout"
	"omniroute/backend/resilience/verdict"
	"omniroute/backend/store"
)

// TestEgressSiblings: a 429 on an IP-bucketed connection cools the siblings
// that left from the same IP until the failed one's deadline, and nothing
// else: another IP, an unknown IP, an opted-out connection, a terminal one,
// one already cooling longer, and a provider that is not IP-bucketed.
func TestEgressSiblings(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	reg := NewRegistry(registry.Catalog(nil))
	row := func(id, provider string, overrides string) store.Connection {
		return store.Connection{ID: id, Provider: provider, Name: id, Priority: 1, IsActive: true, Models: `["m"]`,
			RateLimitOverrides: overrides, TestStatus: "active"}
	}
	rows := []store.Connection{row("failed", "opencode", "{}"), row("sibling", "opencode", "{}"), row("other-ip", "opencode", "{}"),
		row("unknown-ip", "opencode", "{}"), row("opted-out", "opencode", `{"disableCooling":true}`), row("terminal", "opencode", "{}"),
		row("longer", "opencode", "{}"), row("not-bucketed", "openai", "{}")}
	if err := reg.Load(rows, plainBox{}); err != nil {
		t.Fatal(err)
	}
	e := NewEngine(EngineDeps{Registry: reg, Clock: clk, Lockouts: lockout.New(clk), Store: nopStore{}, Policy: testPolicy{},
		Breakers: breaker.NewRegistry(clk, func(string) breaker.Profile { return breaker.DefaultProfile("apikey") }, nil)})
	for _, id := range []string{"failed", "sibling", "opted-out", "terminal", "longer", "not-bucketed"} {
		e.RecordEgress(id, "127.0.0.2")
	}
	e.RecordEgress("other-ip", "127.0.0.3")
	get := func(id string) *Conn { c, _ := reg.Get(id); return c }
	get("terminal").cd = cooldown.State{Terminal: verdict.TerminalBanned, TestStatus: verdict.TerminalBanned}
	longUntil := clk.Now().Add(time.Hour)
	get("longer").cd = cooldown.State{RateLimitedUntil: longUntil, TestStatus: cooldown.StatusUnavailable}

	v := verdict.Verdict{Kind: verdict.KindRateLimit, Status: 429, CoolConnection: true, Scope: verdict.ScopeConnection, Failover: true, Code: verdict.CodeRateLimited}
	ticket, x := e.Admit(Candidate{Conn: get("failed"), Model: "m"})
	if x != nil {
		t.Fatal(x)
	}
	ticket.Finish(v)
	until := get("failed").Cooldown().RateLimitedUntil
	if !until.After(clk.Now()) {
		t.Fatalf("the failed connection is not cooling: %+v", get("failed").Cooldown())
	}
	want := map[string]bool{"sibling": true}
	for _, c := range reg.All() {
		if c.ID == "failed" {
			continue
		}
		st := c.Cooldown()
		cooledHere := st.ErrorCode == CodeEgressBucket
		if cooledHere != want[c.ID] {
			t.Errorf("%s cooled by the egress lock: %v, want %v (%+v)", c.ID, cooledHere, want[c.ID], st)
		}
		if c.ID == "sibling" && (!st.RateLimitedUntil.Equal(until) || st.Terminal != "") {
			t.Errorf("sibling until %v terminal %q, want %v and never terminal", st.RateLimitedUntil, st.Terminal, until)
		}
	}
	if got := get("longer").Cooldown().RateLimitedUntil; !got.Equal(longUntil) {
		t.Errorf("a longer cooldown was shortened: %v", got)
	}
	if get("terminal").Cooldown().Terminal != verdict.TerminalBanned {
		t.Error("a terminal state was overwritten")
	}
	// A non-limit failure (500) or a non-429 quota never spreads.
	clk.Advance(2 * time.Hour)
	for _, nv := range []verdict.Verdict{{Kind: verdict.KindServer, Status: 500, Failover: true},
		{Kind: verdict.KindQuota, Status: 403, CoolConnection: true}} {
		e.RecordEgress("other-ip", "127.0.0.2")
		before := fmt.Sprint(get("other-ip").Cooldown())
		tk, x := e.Admit(Candidate{Conn: get("sibling"), Model: "m"})
		if x != nil {
			t.Fatalf("sibling not admitted after its cooldown: %+v", x)
		}
		tk.Finish(nv)
		if after := fmt.Sprint(get("other-ip").Cooldown()); after != before {
			t.Errorf("%s spread to an IP sibling: %s", nv.Kind, after)
		}
	}
}
