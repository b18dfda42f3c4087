package server

import (
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"testing/synctest"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/config"
	"omniroute/backend/resilience/affinity"
	"omniroute/backend/store"
	"omniroute/tests/pgtest"
)

// storedPins is the session keys in the store's pin table (expired ones
// included: LivePins would delete them).
func storedPins(t *testing.T, st *store.Store) map[string]bool {
	t.Helper()
	rows, err := st.PinsUpdatedSince(-1, -1) // every row: all expire after −1
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, r := range rows {
		out[r.SessionKey] = true
	}
	return out
}

// TestPinSweeperAtExpiry: on SQLite and PostgreSQL, a session pin expiring
// at T is kept by the sweep at T − 1 ms (in the database and in memory) and
// gone after the sweep at T + 1 ms, while a pin expiring later stays; the
// sweep reads the injected clock.
func TestPinSweeperAtExpiry(t *testing.T) {
	opens := map[string]func(t *testing.T) *store.Store{
		"sqlite": func(t *testing.T) *store.Store {
			st, err := store.Open(filepath.Join(t.TempDir(), "pins.db"))
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
		"postgres": func(t *testing.T) *store.Store {
			pgs, err := pgtest.Start()
			if err != nil {
				t.Fatal(err) // PostgreSQL is required: never a skip
			}
			t.Cleanup(pgs.Stop)
			st, err := store.OpenPostgres(pgs.NewDatabase(t))
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
	}
	for name, open := range opens {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			t.Cleanup(func() { _ = st.Close() })
			t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			clk := clock.NewFake(t0)
			ttl := 30 * time.Minute
			pins := affinity.New(clk, func() time.Duration { return ttl }, pinSaver{st, clk})
			if err := pins.Served("at-t", "a", "p"); err != nil { // expires at T = t0 + ttl
				t.Fatal(err)
			}
			clk.Advance(time.Second)
			if err := pins.Served("later", "b", "p"); err != nil {
				t.Fatal(err)
			}
			var dbh *dbHealth
			if st.Shared() {
				dbh = newDBHealth(clk)
			}
			sweep := pinSweeper(st, pins, clk, dbh)
			expiry := t0.Add(ttl)
			steps := []struct {
				name string
				at   time.Time
				left []string
			}{
				{"T − 1 ms", expiry.Add(-time.Millisecond), []string{"at-t", "later"}},
				{"T + 1 ms", expiry.Add(time.Millisecond), []string{"later"}},
			}
			for _, s := range steps {
				clk.Set(s.at)
				if err := sweep(); err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				stored := storedPins(t, st)
				if len(stored) != len(s.left) {
					t.Fatalf("%s: stored pins %v, want %v", s.name, stored, s.left)
				}
				for _, k := range s.left {
					if !stored[k] {
						t.Fatalf("%s: %s swept from the database; stored %v", s.name, k, stored)
					}
				}
				if n := pins.Occupancy("a") + pins.Occupancy("b"); n != len(s.left) {
					t.Fatalf("%s: %d pins in memory, want %d", s.name, n, len(s.left))
				}
			}
		})
	}
}

// TestServerSweepsExpiredPins: server.New wires the sweep on its injected
// clock and starts it; a pin written while running expires at T and is gone
// after a sweep at T + 1 ms, not at T − 1 ms.
func TestServerSweepsExpiredPins(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(t0)
	s, err := New(Options{
		Process:      config.Process{DataDir: t.TempDir(), Host: "127.0.0.1"},
		Dashboard:    fstest.MapFS{"index.html": {Data: []byte("<!doctype html>")}},
		Version:      "test",
		Log:          slog.New(slog.NewTextHandler(io.Discard, nil)),
		Clock:        clk,
		Getenv:       func(string) string { return "" },
		PasswordCost: 4,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	if s.pinSweep == nil || s.sweepPins == nil {
		t.Fatal("the periodic pin sweep is not running")
	}
	expiry := t0.Add(time.Hour)
	if err := s.store.SavePin(store.AffinityPin{SessionKey: "s", ConnectionID: "a", Provider: "p",
		ExpiresAt: expiry.UnixMilli(), UpdatedAt: t0.UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	clk.Set(expiry.Add(-time.Millisecond))
	if err := s.sweepPins(); err != nil || !storedPins(t, s.store)["s"] {
		t.Fatalf("sweep at T − 1 ms: %v; stored %v, want the pin kept", err, storedPins(t, s.store))
	}
	clk.Set(expiry.Add(time.Millisecond))
	if err := s.sweepPins(); err != nil || storedPins(t, s.store)["s"] {
		t.Fatalf("sweep at T + 1 ms: %v; stored %v, want the pin gone", err, storedPins(t, s.store))
	}
}

// The periodic step runs once per interval, reports failures, and stop
// (idempotent, nil-safe) ends it.
func TestPeriodicRunsEveryInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var runs, failures atomic.Int32
		p := startPeriodic(nil, pinSweepEvery, func() error {
			runs.Add(1)
			return errors.New("database busy")
		}, func(error) { failures.Add(1) })
		time.Sleep(pinSweepEvery - time.Nanosecond)
		synctest.Wait()
		if n := runs.Load(); n != 0 {
			t.Fatalf("%d sweeps before the first interval ended", n)
		}
		time.Sleep(time.Nanosecond + 2*pinSweepEvery)
		synctest.Wait()
		if n, f := runs.Load(), failures.Load(); n != 3 || f != 3 {
			t.Fatalf("after 3 intervals: %d sweeps, %d failures reported; want 3 and 3", n, f)
		}
		p.stop()
		p.stop()
		time.Sleep(10 * pinSweepEvery)
		if n := runs.Load(); n != 3 {
			t.Fatalf("%d sweeps after stop", n)
		}
	})
	var none *periodic
	none.stop()
}
