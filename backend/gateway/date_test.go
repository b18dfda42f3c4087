package gateway

import (
	"net/http"
	"testing"
	"time"

	"omniroute/backend/clock"
)

// The Date header is formatted once per second of the wall clock: the same
// value up to the last nanosecond of a second, the next second's from its
// first, and always what net/http would have written.
func TestHTTPDateOncePerSecond(t *testing.T) {
	start := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	wall := clock.NewFake(start)
	g := &Gateway{wall: wall}
	first := g.httpDate()
	if want := start.Format(http.TimeFormat); first != want {
		t.Fatalf("Date %q, want %q", first, want)
	}
	wall.Set(start.Add(time.Second - time.Nanosecond))
	if got := g.httpDate(); got != first {
		t.Fatalf("1 ns before the next second: %q, want the same %q", got, first)
	}
	wall.Set(start.Add(time.Second))
	if got, want := g.httpDate(), start.Add(time.Second).Format(http.TimeFormat); got != want {
		t.Fatalf("at the next second: %q, want %q", got, want)
	}
	wall.Set(start.Add(time.Hour).In(time.FixedZone("CET", 3600)))
	if got, want := g.httpDate(), start.Add(time.Hour).UTC().Format(http.TimeFormat); got != want {
		t.Fatalf("a wall clock in another zone: %q, want GMT %q", got, want)
	}
}
