package server

import (
	"bytes"
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
		_, err := openPostgresWaiting(url, tt.wait, slog.New(slog.NewTextHandler(&buf, nil)), clk, func(d time.Duration) {
			pauses = append(pauses, d)
			clk.Advance(d)
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
