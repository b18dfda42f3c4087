package server

import (
	"path/filepath"
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/resilience/affinity"
	"omniroute/backend/store"
	"omniroute/tests/pgtest"
)

// pinRow is the stored pin of session key (fails when there is none).
func pinRow(t *testing.T, st *store.Store, key string) store.AffinityPin {
	t.Helper()
	rows, err := st.PinsUpdatedSince(-1, -1) // every row: all expire after −1
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.SessionKey == key {
			return r
		}
	}
	t.Fatalf("no stored pin for %q", key)
	return store.AffinityPin{}
}

// TestPinSaverStampsTheInjectedClock: a pin written through is stamped with
// the components' clock, not the machine's (a test's fake clock, months
// away from it here).
func TestPinSaverStampsTheInjectedClock(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "pins.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(t0)
	pins := affinity.New(clk, func() time.Duration { return time.Hour }, pinSaver{st, clk})
	if err := pins.Served("s", "a", "p"); err != nil {
		t.Fatal(err)
	}
	if got := pinRow(t, st, "s").UpdatedAt; got != t0.UnixMilli() {
		t.Fatalf("updated_at %d, want the injected clock's %d", got, t0.UnixMilli())
	}
}

// TestBehindPinMoveReadsTheInjectedClock: the write-behind of a moved pin
// (team server) judges whether the stored pin — another instance's, live
// for one more minute by the injected clock — has expired by that clock:
// it stands. (By the machine's clock, months later, it had expired and was
// overwritten.)
func TestBehindPinMoveReadsTheInjectedClock(t *testing.T) {
	pgs, err := pgtest.Start()
	if err != nil {
		t.Fatal(err) // PostgreSQL is required: never a skip
	}
	t.Cleanup(pgs.Stop)
	st, err := store.OpenPostgres(pgs.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := st.SavePin(store.AffinityPin{SessionKey: "s", ConnectionID: "a", Provider: "p",
		ExpiresAt: t0.Add(time.Minute).UnixMilli(), UpdatedAt: t0.UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	c := &collect{}
	w := newIdleWriter(c)
	b := newBehindStore(st, clock.NewFake(t0), w)
	if err := b.SavePin(store.AffinityPin{SessionKey: "s", ConnectionID: "b", Provider: "p",
		ExpiresAt: t0.Add(time.Hour).UnixMilli(), UpdatedAt: t0.UnixMilli(), Prev: "x"}); err != nil {
		t.Fatal(err)
	}
	if !w.flush() {
		t.Fatalf("flush failed: %v", c.errs)
	}
	if got := pinRow(t, st, "s").ConnectionID; got != "a" {
		t.Fatalf("the live pin was moved to %q; want it to stand on a", got)
	}
}
