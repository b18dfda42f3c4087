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
	if got := p.Claim("s", "a", "prov"); got != "a" {
		t.Fatalf("without a claimer Claim = %q, want the local choice", got)
	}
	if _, ok := p.Pinned("s"); ok {
		t.Fatal("without a claimer Claim pinned the session (Served does)")
	}
	p.ShareWith(c)
	if got := p.Claim("taken", "a", "prov"); got != "x" {
		t.Fatalf("Claim of a session another instance pinned = %q, want x", got)
	}
	if got, _ := p.Pinned("taken"); got != "x" {
		t.Fatalf("the winner is not kept locally: %q", got)
	}
	if exp := p.m["taken"].ExpiresAt; !exp.Equal(t0.Add(time.Minute)) {
		t.Fatalf("the adopted pin expires at %v, want clamped to now+ttl", exp)
	}
	if got := p.Claim("s", "a", "prov"); got != "a" || len(c.calls) != 2 {
		t.Fatalf("first claim = %q after %d calls", got, len(c.calls))
	}
	if got := p.Claim("s", "a", "prov"); got != "a" || len(c.calls) != 2 {
		t.Fatalf("the next turn on the pinned connection asked the claimer again (%d calls)", len(c.calls))
	}
	if got := p.Claim("s", "b", "prov"); got != "b" || c.calls[2].Prev != "a" {
		t.Fatalf("a move = %q with prev %q, want b from a", got, c.calls[2].Prev)
	}
	c.err = errors.New("database down")
	if got := p.Claim("new", "z", "prov"); got != "z" {
		t.Fatalf("a failing claimer: %q, want the local choice", got)
	}
	if _, ok := p.Pinned("new"); ok {
		t.Fatal("a failed claim pinned the session (Served writes it behind)")
	}
}
