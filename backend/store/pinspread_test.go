package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

var spreadAccounts = []PinChoice{{"a", "p"}, {"b", "p"}, {"c", "p"}}

// TestClaimSpreadPin: a new session goes to the account holding the fewest
// live pins (the first in the caller's order among equals; expired pins not
// counted); a session with a live pin keeps it, however occupied its
// account; an expired one is replaced.
func TestClaimSpreadPin(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		ctx := context.Background()
		for i, conn := range []string{"a", "a", "b", "c"} {
			exp := int64(5000)
			if i == 3 {
				exp = 1000 // c's only pin has expired at 1000
			}
			if err := s.SavePin(AffinityPin{SessionKey: fmt.Sprintf("old-%d", i), ConnectionID: conn, Provider: "p", ExpiresAt: exp, UpdatedAt: 1}); err != nil {
				t.Fatal(err)
			}
		}
		pin := func(key string) AffinityPin { return AffinityPin{SessionKey: key, ExpiresAt: 9000, UpdatedAt: 1000} }
		steps := []struct {
			name, key string
			among     []PinChoice
			want      string
		}{
			{"the empty account (its pin expired)", "s1", spreadAccounts, "c"},
			{"b and c hold one each: the first of them in order", "s2", spreadAccounts, "b"},
			{"the same counts, another order", "s3", []PinChoice{{"c", "p"}, {"b", "p"}, {"a", "p"}}, "c"},
			{"a live pin holds, on the busiest account", "old-0", spreadAccounts, "a"},
			{"an expired pin is replaced (2 pins on each)", "old-3", []PinChoice{{"b", "p"}, {"a", "p"}}, "b"},
			{"one account", "s4", []PinChoice{{"a", "q"}}, "a"},
		}
		for _, st := range steps {
			got, err := s.ClaimSpreadPin(ctx, pin(st.key), "p", st.among, 1000)
			if err != nil || got.ConnectionID != st.want || got.SessionKey != st.key {
				t.Fatalf("%s: ClaimSpreadPin(%s) = %+v, %v; want connection %s", st.name, st.key, got, err, st.want)
			}
		}
		live, err := s.LivePins(1000)
		if err != nil {
			t.Fatal(err)
		}
		stored := map[string]string{}
		for _, p := range live {
			stored[p.SessionKey] = p.ConnectionID + "/" + p.Provider
		}
		if stored["s1"] != "c/p" || stored["old-3"] != "b/p" || stored["old-0"] != "a/p" || stored["s4"] != "a/q" {
			t.Fatalf("stored pins %v", stored)
		}
		if _, err := s.ClaimSpreadPin(ctx, pin("s5"), "p", nil, 1000); err == nil {
			t.Fatal("a spread claim over no account was accepted")
		}
	})
}

// TestPostgresClaimSpreadPinAcrossInstances: 30 new sessions claimed at once
// through two handles (two instances), each seeing the three accounts in
// its own order, end 10 on each account; and 40 first claims of one session
// at once, half spread claims and half single-connection claims
// (store.ClaimPin), all get the same pin.
func TestPostgresClaimSpreadPinAcrossInstances(t *testing.T) {
	a, b := twoInstances(t)
	ctx := context.Background()
	reversed := []PinChoice{{"c", "p"}, {"b", "p"}, {"a", "p"}}
	var mu sync.Mutex
	n := 0
	acrossInstances(a, b, 30, func(st *Store) {
		among := spreadAccounts
		if st == b {
			among = reversed
		}
		mu.Lock()
		n++
		key := fmt.Sprintf("burst-%d", n)
		mu.Unlock()
		if _, err := st.ClaimSpreadPin(ctx, AffinityPin{SessionKey: key, ExpiresAt: 10_000, UpdatedAt: 1}, "p", among, 1); err != nil {
			t.Error(err)
		}
	})
	live, err := a.LivePins(1)
	if err != nil {
		t.Fatal(err)
	}
	occ := map[string]int{}
	for _, p := range live {
		occ[p.ConnectionID]++
	}
	if len(live) != 30 || occ["a"] != 10 || occ["b"] != 10 || occ["c"] != 10 {
		t.Fatalf("30 concurrent new sessions on two instances spread %v over %d pins, want 10 on each of a, b, c", occ, len(live))
	}
	seen := map[string]int{}
	i := 0
	acrossInstances(a, b, 40, func(st *Store) {
		mu.Lock()
		i++
		spread := i%2 == 0
		conn := string(rune('a' + i%3))
		mu.Unlock()
		var got AffinityPin
		var err error
		if spread {
			got, err = st.ClaimSpreadPin(ctx, AffinityPin{SessionKey: "herd", ExpiresAt: 10_000, UpdatedAt: 1}, "p", reversed, 1)
		} else {
			got, err = st.ClaimPin(ctx, AffinityPin{SessionKey: "herd", ConnectionID: conn, Provider: "p", ExpiresAt: 10_000, UpdatedAt: 1}, "", 1)
		}
		if err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		seen[got.ConnectionID]++
		mu.Unlock()
	})
	if len(seen) != 1 {
		t.Fatalf("concurrent first claims of one session saw pins %v, want one connection for all", seen)
	}
}

func TestPGTextArray(t *testing.T) {
	for in, want := range map[string]string{"": `{}`, "a": `{"a"}`, `a,b"c\d`: `{"a,b\"c\\d"}`} {
		var vals []string
		if in != "" {
			vals = []string{in}
		}
		if got := pgTextArray(vals); got != want {
			t.Errorf("pgTextArray(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestPostgresClaimSpreadPinCountsAClaimInFlight: another instance's spread
// claim is in flight (its transaction has pinned session "held" to a, not
// committed yet) when two more new sessions are claimed through two
// handles. They wait for it, and each counts the claims before it: the
// three sessions end one on each account. Without the pool's lock both
// counted a as empty (the uncommitted pin unseen) and a held two.
func TestPostgresClaimSpreadPinCountsAClaimInFlight(t *testing.T) {
	url := pg.NewDatabase(t)
	a, err := OpenPostgres(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	b, err := OpenPostgres(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	ctx := context.Background()
	other, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var first string
	if err := tx.QueryRow(ctx, `SELECT won_connection FROM omniroute_claim_spread_pin('held', 'p', '{a,b,c}', '{p,p,p}', 10000, 1, 1)`).Scan(&first); err != nil || first != "a" {
		t.Fatalf("the claim in flight took %q, %v; want a", first, err)
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	for i, st := range []*Store{a, b} {
		wg.Go(func() {
			if _, err := st.ClaimSpreadPin(ctx, AffinityPin{SessionKey: fmt.Sprintf("next-%d", i), ExpiresAt: 10_000, UpdatedAt: 1}, "p", spreadAccounts, 1); err != nil {
				t.Error(err)
			}
		})
	}
	go func() { wg.Wait(); close(done) }()
	// Both wait for the pool's lock (or, without it, are done already).
	deadline := time.Now().Add(10 * time.Second)
	for waiting := 0; waiting < 2; {
		select {
		case <-done:
			waiting = 2
			continue
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the two claims neither finished nor waited for the lock (%d waiting)", waiting)
		}
		if err := a.DB().Raw(`SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&waiting).Error; err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	<-done
	live, err := a.LivePins(1)
	if err != nil {
		t.Fatal(err)
	}
	occ := map[string]int{}
	for _, p := range live {
		occ[p.ConnectionID]++
	}
	if len(live) != 3 || occ["a"] != 1 || occ["b"] != 1 || occ["c"] != 1 {
		t.Fatalf("three new sessions, one claimed in flight, spread %v; want one on each of a, b, c", occ)
	}
}
