package teamlimits

import (
	"context"
	"fmt"
	"testing"
	"time"

	"omniroute/backend/clock"
)

// BenchmarkSlot is what a shared maxConcurrent adds to one request on a
// team server: one slot taken and released (two statements), uncontended.
func BenchmarkSlot(b *testing.B) {
	st := open(b)
	l := New(st, clock.Real{}, "A", Options{})
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		rel, ok, err := l.Slot(ctx, "c", 4, time.Now().Add(time.Second))
		if err != nil || !ok || rel == nil {
			b.Fatal(ok, err)
		}
		rel()
	}
}

// BenchmarkSlotAcquire is the part of BenchmarkSlot before the request is
// sent (the release comes after its answer).
func BenchmarkSlotAcquire(b *testing.B) {
	st := open(b)
	l := New(st, clock.Real{}, "A", Options{})
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		rel, ok, err := l.Slot(ctx, "c", 4, time.Now().Add(time.Second))
		if err != nil || !ok || rel == nil {
			b.Fatal(ok, err)
		}
		b.StopTimer()
		rel()
		b.StartTimer()
	}
}

// BenchmarkPace is what shared pacing adds to one request whose turn is
// due (one statement).
func BenchmarkPace(b *testing.B) {
	st := open(b)
	l := New(st, clock.Real{}, "A", Options{})
	ctx := context.Background()
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = fmt.Sprintf("c%d", i)
	}
	b.ResetTimer()
	for i := range b.N {
		now := time.Now()
		// 1000 connections in turn, 1 ms apart: each one's turn is due.
		if _, refused, shared, err := l.Pace(ctx, ids[i%len(ids)], time.Millisecond, now, now.Add(time.Second)); err != nil || !shared || !refused.IsZero() {
			b.Fatal(err, shared)
		}
	}
}
