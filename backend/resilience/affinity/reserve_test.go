package affinity

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"omniroute/backend/clock"
)

// planFirst is routing's spread on one instance (spreadSessions): the
// account of accounts holding the fewest sessions here, the first among
// equals.
func planFirst(p *Pins, accounts []Account) string {
	best, bestN := accounts[0].ConnectionID, p.Occupancy(accounts[0].ConnectionID)
	for _, a := range accounts[1:] {
		if n := p.Occupancy(a.ConnectionID); n < bestN {
			best, bestN = a.ConnectionID, n
		}
	}
	return best
}

// TestBurstOfNewSessionsSpreadsOnOneInstance: N new sessions' first turns
// on one instance (no claimer: the desktop app), all planned before any of
// them is claimed — each plan reads the same occupancy and puts the same
// account first — then claimed and served at once. They end spread over
// the K accounts, at most one apart. Before the claim reserved the session
// on the least occupied account under the pin table's lock, every one went
// to the plans' first choice (the whole burst on one account).
func TestBurstOfNewSessionsSpreadsOnOneInstance(t *testing.T) {
	for _, tc := range []struct{ sessions, accounts int }{{12, 3}, {10, 4}, {50, 3}, {2, 2}} {
		t.Run(fmt.Sprintf("%d sessions over %d accounts", tc.sessions, tc.accounts), func(t *testing.T) {
			clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			sv := &saver{}
			p := New(clk, func() time.Duration { return time.Hour }, sv)
			spread := Spread{Pool: "oauth-pool"}
			for i := range tc.accounts {
				spread.Accounts = append(spread.Accounts, Account{ConnectionID: fmt.Sprintf("acct-%d", i), Provider: "oauth-pool"})
			}
			var planned, done sync.WaitGroup
			planned.Add(tc.sessions)
			start := make(chan struct{})
			for s := range tc.sessions {
				done.Go(func() {
					key := fmt.Sprintf("session-%d", s)
					<-start
					first := planFirst(p, spread.Accounts)
					planned.Done()
					planned.Wait() // every plan read the occupancy before any claim
					won := p.Claim(key, first, "oauth-pool", "", spread)
					if err := p.Served(key, won, "oauth-pool"); err != nil {
						t.Error(err)
					}
				})
			}
			close(start)
			done.Wait()
			per := map[string]int{}
			for _, a := range spread.Accounts {
				per[a.ConnectionID] = p.Occupancy(a.ConnectionID)
			}
			lo, hi := tc.sessions, 0
			for _, n := range per {
				lo, hi = min(lo, n), max(hi, n)
			}
			if hi-lo > 1 {
				t.Fatalf("%d new sessions at once ended %v over the accounts: max − min = %d, want ≤ 1", tc.sessions, per, hi-lo)
			}
			saved := map[string]string{}
			for _, pin := range sv.saved {
				saved[pin.SessionKey] = pin.ConnectionID
			}
			if len(saved) != tc.sessions {
				t.Fatalf("%d of %d sessions' pins written (a reservation is written when its turn is served)", len(saved), tc.sessions)
			}
			for key, conn := range saved {
				if got, _ := p.Pinned(key); got != conn {
					t.Fatalf("session %s pinned to %q here but written as %q", key, got, conn)
				}
			}
		})
	}
}

// TestReservationKeepsOneSessionTogether: concurrent first turns of ONE new
// session on one instance all go to the account the first claim reserved,
// whatever their plans put first, and the session's pin is written once.
// A session with a live pin keeps it; a move or a spread of one account
// reserves nothing (Served pins them, as before).
func TestReservationKeepsOneSessionTogether(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	sv := &saver{}
	p := New(clk, func() time.Duration { return time.Hour }, sv)
	spread := Spread{Pool: "oauth-pool", Accounts: []Account{{"a", "oauth-pool"}, {"b", "oauth-pool"}, {"c", "oauth-pool"}}}
	_ = p.Served("busy-1", "a", "oauth-pool")
	_ = p.Served("busy-2", "b", "oauth-pool")
	sv.saved = nil
	const turns = 20
	got := make([]string, turns)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range turns {
		wg.Go(func() {
			<-start
			first := spread.Accounts[i%3].ConnectionID // plans made at different moments
			got[i] = p.Claim("s", first, "oauth-pool", "", spread)
			_ = p.Served("s", got[i], "oauth-pool")
		})
	}
	close(start)
	wg.Wait()
	for i, c := range got {
		if c != "c" {
			t.Fatalf("turn %d of one new session went to %q (turns %v), want every turn on c, the least occupied", i, c, got)
		}
	}
	if len(sv.saved) != 1 || sv.saved[0].ConnectionID != "c" || sv.saved[0].Prev != "" {
		t.Fatalf("the session's pin written %d times (%+v), want once on c naming no previous pin", len(sv.saved), sv.saved)
	}
	if won := p.Claim("busy-1", "c", "oauth-pool", "", spread); won != "a" {
		t.Fatalf("a session with a live pin on a claimed %q, want its pin a", won)
	}
	if won := p.Claim("moved", "b", "oauth-pool", "a", Spread{}); won != "b" {
		t.Fatalf("a move claimed %q, want the plan's b", won)
	}
	if won := p.Claim("one", "b", "oauth-pool", "", Spread{Pool: "oauth-pool", Accounts: spread.Accounts[1:2]}); won != "b" {
		t.Fatalf("a spread of one account claimed %q, want b", won)
	}
	for _, key := range []string{"moved", "one"} {
		if _, ok := p.Pinned(key); ok {
			t.Fatalf("%s: pinned by its claim without a spread (Served pins it)", key)
		}
	}
}

// TestReservationOnAFailingClaimer: a team server whose database does not
// answer reserves a new session on this instance's least occupied account,
// as a single instance does, so a burst during an outage spreads here too.
func TestReservationOnAFailingClaimer(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := New(clk, func() time.Duration { return time.Hour }, nil)
	p.ShareWith(&claimer{held: map[string]Pin{}, err: fmt.Errorf("database down")})
	spread := Spread{Pool: "oauth-pool", Accounts: []Account{{"a", "oauth-pool"}, {"b", "oauth-pool"}}}
	first := p.Claim("s1", "a", "oauth-pool", "", spread)
	second := p.Claim("s2", "a", "oauth-pool", "", spread)
	if first != "a" || second != "b" {
		t.Fatalf("two new sessions during an outage claimed %q and %q, want a and b", first, second)
	}
}

// TestSweepAtExpiry: a pin expiring at T is kept by a sweep at T − 1 ms and
// dropped by one at T + 1 ms, its connection's occupancy with it; a
// reservation expires the same way.
func TestSweepAtExpiry(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(t0)
	ttl := time.Minute
	p := New(clk, func() time.Duration { return ttl }, nil)
	_ = p.Served("served", "a", "oauth-pool")
	p.Claim("reserved", "a", "oauth-pool", "", Spread{Pool: "oauth-pool", Accounts: []Account{{"a", "oauth-pool"}, {"b", "oauth-pool"}}})
	clk.Advance(time.Second)
	_ = p.Served("later", "a", "oauth-pool") // expires at T + 1 s
	expiry := t0.Add(ttl)                    // T
	clk.Set(expiry.Add(-time.Millisecond))
	if n := p.Sweep(); n != 0 || p.Occupancy("a") != 2 || p.Occupancy("b") != 1 {
		t.Fatalf("sweep at T − 1 ms dropped %d pins (occupancy a %d, b %d), want none (2, 1)", n, p.Occupancy("a"), p.Occupancy("b"))
	}
	clk.Set(expiry.Add(time.Millisecond))
	if n := p.Sweep(); n != 2 || p.Occupancy("a") != 1 || p.Occupancy("b") != 0 {
		t.Fatalf("sweep at T + 1 ms dropped %d pins (occupancy a %d, b %d), want the two expired at T (1, 0)", n, p.Occupancy("a"), p.Occupancy("b"))
	}
	if len(p.reserved) != 0 {
		t.Fatalf("an expired reservation outlived its sweep: %v", p.reserved)
	}
	if got, ok := p.Pinned("later"); !ok || got != "a" {
		t.Fatalf("the pin expiring at T + 1 s was swept at T + 1 ms: %q %v", got, ok)
	}
}
