package strategy

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestPinSweepBoundsTable: abandoned sticky sessions do not accumulate.
func TestPinSweepBoundsTable(t *testing.T) {
	tests := []struct {
		name     string
		sessions int
		gap      time.Duration
		ttl      time.Duration
		maxPins  int
	}{
		{"short TTL, many sessions", 10_000, time.Second, time.Minute, minPinSweep},
		{"all live: table grows, sweeps stay amortised", 1_000, time.Millisecond, time.Hour, 1_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := NewState(rand.New(rand.NewPCG(1, 1)))
			ts := []Target{{Key: "a"}, {Key: "b", Index: 1}}
			start := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
			peak := 0
			for i := range tt.sessions {
				Order(RoundRobin, ts, st, start.Add(time.Duration(i)*tt.gap), Options{StickyKey: fmt.Sprint(i), StickyTTL: tt.ttl})
				peak = max(peak, len(st.pins))
			}
			if peak > tt.maxPins {
				t.Fatalf("pin table peaked at %d, want <= %d", peak, tt.maxPins)
			}
		})
	}
}

// TestNewStateNilSource: a nil source gets a fixed seed rather than a panic.
func TestNewStateNilSource(t *testing.T) {
	a, b := NewState(nil), NewState(nil)
	ts := []Target{{Key: "a"}, {Key: "b", Index: 1}, {Key: "c", Index: 2}, {Key: "d", Index: 3}}
	for range 20 {
		x := Order(Random, ts, a, time.Time{}, Options{})
		y := Order(Random, ts, b, time.Time{}, Options{})
		for i := range x {
			if x[i].Key != y[i].Key {
				t.Fatal("nil-source states diverged")
			}
		}
	}
}
