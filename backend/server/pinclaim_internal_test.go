package server

import (
	"context"
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/resilience/affinity"
	"omniroute/backend/store"
	"omniroute/tests/pgtest"

	"github.com/jackc/pgx/v5"
)

// slowAnswer is how long the database takes to decide the claim below:
// twice the half second a claim used to wait, far under pinClaimWait.
const slowAnswer = time.Second

// TestPinClaimWaitsForASlowDatabase: a team server's claim of a session's
// first pin waits for the database's decision while the database answers,
// however slowly. Here another instance's claim of the session is still
// uncommitted (its transaction holds the row), so the claim waits on it; it
// commits slowAnswer later, and the claim must return that instance's pin —
// not give up and keep its own choice (the session would split: at 500 ms
// a loaded 2-core machine split 15 of 20 sessions) — and the database stays
// usable for the next claims.
func TestPinClaimWaitsForASlowDatabase(t *testing.T) {
	pgs, err := pgtest.Start()
	if err != nil {
		t.Fatal(err) // PostgreSQL is required: never a skip
	}
	t.Cleanup(pgs.Stop)
	url := pgs.NewDatabase(t)
	st, err := store.OpenPostgres(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	ctx := context.Background()
	other, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	watch, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(ctx)

	now := time.Now()
	exp := now.Add(time.Hour).UnixMilli()
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `INSERT INTO session_account_affinity (session_key, connection_id, provider, expires_at, updated_at)
		VALUES ('s', 'theirs', 'p', $1, $2)`, exp, now.UnixMilli()); err != nil {
		t.Fatal(err)
	}

	c := pinClaimer{st: st, clk: clock.Real{}, db: newDBHealth(clock.Real{})}
	type result struct {
		pin affinity.Pin
		err error
	}
	done := make(chan result, 1)
	go func() {
		pin, err := c.ClaimPin(affinity.Pin{SessionKey: "s", ConnectionID: "mine", Provider: "p", ExpiresAt: now.Add(time.Hour)})
		done <- result{pin, err}
	}()
	// The claim is waiting on the other instance's row lock.
	for waiting := 0; waiting == 0; {
		if err := watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-done:
			t.Fatalf("the claim returned %+v, %v before the other instance's claim committed", r.pin, r.err)
		case <-time.After(10 * time.Millisecond): // poll interval, not a timing assertion
		}
	}
	time.Sleep(slowAnswer) // the database is slow to decide: the stimulus, not an assertion
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.pin.ConnectionID != "theirs" {
		t.Fatalf("a claim answered after %v = %+v, %v; want the other instance's pin (theirs)", slowAnswer, r.pin, r.err)
	}
	if !c.db.usable() {
		t.Fatal("a slow answer marked the database unreachable: the next claims would be skipped")
	}
}
