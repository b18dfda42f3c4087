package server

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/config"
	"omniroute/backend/store"
	"omniroute/backend/teamlimits"
	"omniroute/tests/pgtest"
)

// handTicks is Options.Ticks ticked by hand: every periodic step the server
// starts gets its own unbuffered channel, so a tick sent has been received,
// and a second one sent means the step the first started has finished.
type handTicks struct {
	mu    sync.Mutex
	every map[time.Duration][]chan time.Time
}

func (h *handTicks) ticks(every time.Duration) (<-chan time.Time, func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := make(chan time.Time)
	h.every[every] = append(h.every[every], c)
	return c, func() {}
}

// tick runs once every step started with interval every, and returns how
// many it ran (each to its end).
func (h *handTicks) tick(every time.Duration) int {
	h.mu.Lock()
	chans := h.every[every]
	h.mu.Unlock()
	for _, c := range chans {
		c <- time.Time{} // the step runs
		c <- time.Time{} // received once the step has finished
	}
	return len(chans)
}

// TestTeamServerSweeps: a running team server's periodic sweep, started by
// server.New on its injected ticks and clock, deletes a deleted connection's
// slots, queue tickets and pacing turn and an idle key's expired window rows
// at its tick, not before, and leaves a live connection's slot alone.
func TestTeamServerSweeps(t *testing.T) {
	pgs, err := pgtest.Start()
	if err != nil {
		t.Fatal(err) // PostgreSQL is required: never a skip
	}
	t.Cleanup(pgs.Stop)
	url := pgs.NewDatabase(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(t0)
	ticks := &handTicks{every: map[time.Duration][]chan time.Time{}}
	s, err := New(Options{
		Process:      config.Process{DataDir: t.TempDir(), Host: "127.0.0.1", DatabaseURL: url},
		Dashboard:    fstest.MapFS{"index.html": {Data: []byte("<!doctype html>")}},
		Version:      "test",
		Log:          slog.New(slog.NewTextHandler(io.Discard, nil)),
		Clock:        clk,
		Getenv:       func(string) string { return "" },
		PasswordCost: 4,
		Ticks:        ticks.ticks,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()

	// Another instance's rows, written straight to the shared database.
	st, err := store.OpenPostgres(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	if err := st.CreateConnection(&store.Connection{ID: "kept", Provider: "openai", Name: "kept", IsActive: true}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := t0.UnixMilli()
	for _, name := range []string{"kept", "gone", "queue|gone"} {
		if _, ok, err := st.AcquireSlot(ctx, name, 2, "other", now, 60_000); err != nil || !ok {
			t.Fatalf("slot %s: %v %v", name, ok, err)
		}
	}
	if _, ok, err := st.ReservePace(ctx, "gone", 100, now, now+1000); err != nil || !ok {
		t.Fatalf("pace: %v %v", ok, err)
	}
	if take, err := st.TakeKeyTokens(ctx, "idle", 10, 5, now, teamlimits.Window.Milliseconds()); err != nil || take.Hold == 0 {
		t.Fatalf("key tokens: %+v %v", take, err)
	}
	rows := func() (gone, kept, idle int64) {
		t.Helper()
		var errs [3]error
		gone, errs[0] = st.LimitRows("gone")
		kept, errs[1] = st.LimitRows("kept")
		idle, errs[2] = st.KeyRateRows("idle")
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		return gone, kept, idle
	}
	// The key's row left its window at t0 + Window and is swept SweepGrace later.
	clk.Set(t0.Add(teamlimits.Window + teamlimits.SweepGrace))
	if gone, kept, idle := rows(); gone != 3 || kept != 1 || idle != 1 {
		t.Fatalf("before the tick: %d, %d, %d rows, want 3, 1, 1 (nothing swept yet)", gone, kept, idle)
	}
	if n := ticks.tick(teamlimits.SweepEvery); n == 0 {
		t.Fatal("the server started no periodic step every teamlimits.SweepEvery")
	}
	if gone, kept, idle := rows(); gone != 0 || kept != 1 || idle != 0 {
		t.Fatalf("after the tick: %d rows of the deleted connection, %d of the live one, %d of the idle key; want 0, 1, 0", gone, kept, idle)
	}
}
