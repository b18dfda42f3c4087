package affinity

import (
	"errors"
	"testing"
	"time"

	"omniroute/backend/clock"
)

// claimer is a database that already holds a session's pin (held) or not.
type claimer struct {
	held  map[string]Pin
	calls []Pin
	err   error
}

func (c *claimer) ClaimPin(p Pin) (Pin, error) {
	c.calls = append(c.calls, p)
	if c.err != nil {
		return Pin{}, c.err
	}
	if cur, ok := c.held[p.SessionKey]; ok && cur.ConnectionID != p.Prev {
		return cur, nil
	}
	c.held[p.SessionKey] = p
	return p, nil
}

// TestClaim: a session's first attempt asks the claimer, which decides; the
// winner is kept locally (the next turn asks nothing), a move names the
// connection it leaves, and a failing claimer leaves the local choice.
func TestClaim(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(t0)
	ttl := func() time.Duration { return time.Minute }
	c := &claimer{held: map[string]Pin{"taken": {SessionKey: "taken", ConnectionID: "x", ExpiresAt: t0.Add(time.Hour)}}}
	p := New(clk, ttl, nil)
	if got := p.Claim("s", "a", "prov", "", Spread{}); got != "a" {
		t.Fatalf("without a claimer Claim = %q, want the local choice", got)
	}
	if _, ok := p.Pinned("s"); ok {
		t.Fatal("without a claimer Claim pinned the session (Served does)")
	}
	p.ShareWith(c)
	if got := p.Claim("taken", "a", "prov", "", Spread{}); got != "x" {
		t.Fatalf("Claim of a session another instance pinned = %q, want x", got)
	}
	if got, _ := p.Pinned("taken"); got != "x" {
		t.Fatalf("the winner is not kept locally: %q", got)
	}
	if exp := p.m["taken"].ExpiresAt; !exp.Equal(t0.Add(time.Minute)) {
		t.Fatalf("the adopted pin expires at %v, want clamped to now+ttl", exp)
	}
	if got := p.Claim("s", "a", "prov", "", Spread{}); got != "a" || len(c.calls) != 2 {
		t.Fatalf("first claim = %q after %d calls", got, len(c.calls))
	}
	if got := p.Claim("s", "a", "prov", "", Spread{}); got != "a" || len(c.calls) != 2 {
		t.Fatalf("the next turn on the pinned connection asked the claimer again (%d calls)", len(c.calls))
	}
	if got := p.Claim("s", "b", "prov", "a", Spread{}); got != "b" || c.calls[2].Prev != "a" {
		t.Fatalf("a move = %q with prev %q, want b from a", got, c.calls[2].Prev)
	}
	c.err = errors.New("database down")
	if got := p.Claim("new", "z", "prov", "", Spread{}); got != "z" {
		t.Fatalf("a failing claimer: %q, want the local choice", got)
	}
	if _, ok := p.Pinned("new"); ok {
		t.Fatal("a failed claim pinned the session (Served writes it behind)")
	}
}

// TestClaimMovesOnlyFromThePlannedPin: the claim race between instances.
// Instance B plans a new session's first turn (no pin yet: its first choice
// is "b"); before it claims, instance A's claim of "a" wins in the database
// and B adopts that pin from the change feed. B's claim must not name the
// adopted pin as the one it moves from — its plan never passed it over — so
// the database keeps A's pin and B's turn goes to "a". Before, Claim read
// the local pin at claim time, moved the session from "a" to "b" and split
// it. A real move (the plan saw "a" and chose "b") still moves it.
func TestClaimMovesOnlyFromThePlannedPin(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(t0)
	ttl := func() time.Duration { return time.Minute }
	db := &claimer{held: map[string]Pin{}}
	a, b := New(clk, ttl, nil), New(clk, ttl, nil)
	a.ShareWith(db)
	b.ShareWith(db)

	planned, _ := b.Pinned("s") // B's plan: no pin
	if got := a.Claim("s", "a", "prov", "", Spread{}); got != "a" {
		t.Fatalf("A's first claim = %q, want a", got)
	}
	if n := b.Adopt([]Pin{db.held["s"]}); n != 1 {
		t.Fatalf("B adopted %d pins, want A's", n)
	}
	if got := b.Claim("s", "b", "prov", planned, Spread{}); got != "a" {
		t.Fatalf("B's claim after adopting A's pin = %q (prev %q), want a: the session split", got, db.calls[len(db.calls)-1].Prev)
	}
	if held := db.held["s"].ConnectionID; held != "a" {
		t.Fatalf("the database holds %q, want A's pin a", held)
	}
	if got, _ := b.Pinned("s"); got != "a" {
		t.Fatalf("B's pin = %q, want a", got)
	}

	// A real move: B's plan saw "a" (ineligible now) and chose "b".
	if got := b.Claim("s", "b", "prov", "a", Spread{}); got != "b" || db.calls[len(db.calls)-1].Prev != "a" {
		t.Fatalf("a move from the planned pin = %q, want b from a", got)
	}
}

// spreadClaimer is a database whose least occupied account is least.
type spreadClaimer struct {
	least string
	calls []Pin
}

func (c *spreadClaimer) ClaimPin(p Pin) (Pin, error) {
	c.calls = append(c.calls, p)
	if len(p.Among) > 1 {
		p.ConnectionID = c.least
	}
	return p, nil
}

// TestClaimSpreadsANewSession: a new session's claim carries its spread
// (pool and accounts) and the claimer's choice among them is kept as the
// session's pin; a move, a session pinned here already, and a spread of
// one account claim the single connection.
func TestClaimSpreadsANewSession(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(t0)
	p := New(clk, func() time.Duration { return time.Minute }, nil)
	c := &spreadClaimer{least: "c"}
	p.ShareWith(c)
	spread := Spread{Pool: "oauth-pool", Accounts: []Account{{"a", "oauth-pool"}, {"b", "oauth-pool"}, {"c", "oauth-pool"}}}
	if got := p.Claim("s", "a", "oauth-pool", "", spread); got != "c" {
		t.Fatalf("a new session's spread claim = %q, want the claimer's least occupied c", got)
	}
	if last := c.calls[0]; last.Pool != "oauth-pool" || len(last.Among) != 3 {
		t.Fatalf("the claim carried pool %q and %d accounts, want oauth-pool and 3", last.Pool, len(last.Among))
	}
	if got, _ := p.Pinned("s"); got != "c" || p.m["s"].Among != nil {
		t.Fatalf("the session's pin = %q (among %v), want c alone", got, p.m["s"].Among)
	}
	if got := p.Claim("s", "c", "oauth-pool", "c", spread); got != "c" || len(c.calls) != 1 {
		t.Fatalf("the next turn asked the claimer again (%d calls)", len(c.calls))
	}
	if got := p.Claim("s", "a", "oauth-pool", "c", spread); got != "a" || len(c.calls[1].Among) != 0 {
		t.Fatalf("a move = %q carrying %d accounts, want a alone", got, len(c.calls[1].Among))
	}
	if got := p.Claim("t", "a", "oauth-pool", "", Spread{Pool: "oauth-pool", Accounts: spread.Accounts[:1]}); got != "a" || len(c.calls[2].Among) != 0 {
		t.Fatalf("a spread of one account = %q carrying %d accounts", got, len(c.calls[2].Among))
	}
	if got := p.Claim("s", "b", "oauth-pool", "", spread); got != "b" || len(c.calls[3].Among) != 0 {
		t.Fatalf("a session pinned here (adopted after its plan) claimed as new: %q carrying %d accounts", got, len(c.calls[3].Among))
	}
}
