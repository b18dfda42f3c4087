package server

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/store"
)

// TestOpenPostgresWaitingBacksOff: a database that refuses connections is
// tried again after pauses doubling from 250 ms to 5 s, the last one cut to
// the wait left, every attempt logged; with no wait it fails after one try.
func TestOpenPostgresWaitingBacksOff(t *testing.T) {
	const url = "postgres://u@127.0.0.1:1/db?sslmode=disable" // nothing listens on port 1
	for _, tt := range []struct {
		wait   time.Duration
		pauses []time.Duration
	}{
		{0, nil},
		{12 * time.Second, []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second,
			4 * time.Second, 4250 * time.Millisecond}},
		{20 * time.Second, []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second,
			4 * time.Second, 5 * time.Second, 5 * time.Second, 2250 * time.Millisecond}},
	} {
		clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		var pauses []time.Duration
		var buf bytes.Buffer
		_, err := openPostgresWaiting(context.Background(), url, tt.wait, slog.New(slog.NewTextHandler(&buf, nil)), clk,
			func(_ context.Context, d time.Duration) error {
				pauses = append(pauses, d)
				clk.Advance(d)
				return nil
			})
		if err == nil || !store.IsUnreachable(err) {
			t.Fatalf("wait %v: %v; want the unreachable database's error", tt.wait, err)
		}
		if len(pauses) != len(tt.pauses) {
			t.Fatalf("wait %v: pauses %v, want %v", tt.wait, pauses, tt.pauses)
		}
		for i := range pauses {
			if pauses[i] != tt.pauses[i] {
				t.Fatalf("wait %v: pauses %v, want %v", tt.wait, pauses, tt.pauses)
			}
		}
		if n := strings.Count(buf.String(), "not reachable yet"); n != len(tt.pauses) {
			t.Fatalf("wait %v: %d retries logged, want %d", tt.wait, n, len(tt.pauses))
		}
	}
}

// TestOpenPostgresWaitingStopsOnSignal: the context cancelled (SIGTERM or
// SIGINT) before start-up, or during a pause between attempts, ends the wait
// at once with ErrStartInterrupted: no further attempt or pause, however
// long the wait left (before, start-up slept on through the signal).
func TestOpenPostgresWaitingStopsOnSignal(t *testing.T) {
	const url = "postgres://u@127.0.0.1:1/db?sslmode=disable" // nothing listens on port 1
	for _, tt := range []struct {
		name        string
		cancelAfter int // pauses before the signal; -1: signalled before start-up
		pauses      int
	}{
		{"signalled before start-up", -1, 0},
		{"signalled during the first pause", 0, 1},
		{"signalled during the third pause", 2, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancelAfter < 0 {
				cancel()
			}
			pauses := 0
			var buf bytes.Buffer
			_, err := openPostgresWaiting(ctx, url, 24*time.Hour, slog.New(slog.NewTextHandler(&buf, nil)), clk,
				func(ctx context.Context, d time.Duration) error {
					if pauses == tt.cancelAfter {
						cancel() // the signal arrives mid-pause
					}
					pauses++
					if err := ctx.Err(); err != nil {
						return err
					}
					clk.Advance(d)
					return nil
				})
			if !errors.Is(err, ErrStartInterrupted) {
				t.Fatalf("err %v; want ErrStartInterrupted", err)
			}
			if pauses != tt.pauses {
				t.Fatalf("%d pauses; want %d", pauses, tt.pauses)
			}
		})
	}
}
