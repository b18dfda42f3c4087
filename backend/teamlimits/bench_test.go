package teamlimits

import (
	"context"
	"fmt"
	"slices"
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
// sent (the release comes after its answer). It prints the statement's p50
// and p99 (its ns/op also counts the timer's stops and starts around the
// release).
func BenchmarkSlotAcquire(b *testing.B) {
	st := open(b)
	l := New(st, clock.Real{}, "A", Options{})
	ctx := context.Background()
	timed(b, func(int) func() {
		rel, ok, err := l.Slot(ctx, "c", 4, time.Now().Add(time.Second))
		if err != nil || !ok || rel == nil {
			b.Fatal(ok, err)
		}
		return rel
	})
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
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		now := time.Now()
		// 1000 connections in turn, 1 ms apart: each one's turn is due.
		if _, refused, shared, err := l.Pace(ctx, ids[i%len(ids)], time.Millisecond, now, now.Add(time.Second)); err != nil || !shared || !refused.IsZero() {
			b.Fatal(err, shared)
		}
		lat = append(lat, time.Since(now))
	}
	report(b, lat)
}

// BenchmarkKeyRPM is what a key's shared requests-per-minute limit adds to
// one of its requests: one statement (a place of the minute window), run
// against 1000 keys limited to 60 rpm in turn so no window fills. It prints
// the statement's p50 and p99.
func BenchmarkKeyRPM(b *testing.B) {
	st := open(b)
	l := New(st, clock.Real{}, "A", Options{})
	timed(b, func(i int) func() {
		if _, _, ok, shared := l.KeyRequest(fmt.Sprintf("k%d", i%1000), 60); !ok || !shared {
			b.Fatal(ok, shared)
		}
		return nil
	})
}

// BenchmarkKeyTPM is what a key's shared tokens-per-minute limit adds to
// one of its requests: the hold before it (one statement, printed p50 and
// p99) and its settlement after the answer (not timed: off the request's
// path), 1000 keys of 1,000,000 tokens per minute in turn.
func BenchmarkKeyTPM(b *testing.B) {
	st := open(b)
	l := New(st, clock.Real{}, "A", Options{})
	timed(b, func(i int) func() {
		key := fmt.Sprintf("k%d", i%1000)
		h, _, ok, shared := l.KeyTokens(key, 1_000_000, 100)
		if !ok || !shared {
			b.Fatal(ok, shared)
		}
		return func() { l.SettleKeyTokens(key, h, 120) }
	})
}

// BenchmarkKeyRates is a key with both limits (60 rpm, 1,000,000 tokens
// per minute): its RPM place and TPM hold in one statement (printed p50 and
// p99), the hold settled after the answer (not timed), 1000 keys in turn.
func BenchmarkKeyRates(b *testing.B) {
	st := open(b)
	l := New(st, clock.Real{}, "A", Options{})
	timed(b, func(i int) func() {
		key := fmt.Sprintf("k%d", i%1000)
		th, rh, _, tpmFull, rpmFull, shared := l.KeyRates(key, 60, 1_000_000, 100)
		if th == 0 || rh == 0 || tpmFull || rpmFull || !shared {
			b.Fatal(th, rh, tpmFull, rpmFull, shared)
		}
		return func() { l.SettleKeyTokens(key, th, 120) }
	})
}

// BenchmarkModelSlot is a model's shared concurrency cap: the slot taken
// before the request (printed p50 and p99) and released after its answer.
func BenchmarkModelSlot(b *testing.B) {
	st := open(b)
	l := New(st, clock.Real{}, "A", Options{})
	ctx := context.Background()
	timed(b, func(int) func() {
		rel, ok, err := l.Slot(ctx, "model|c|glm-5", 1, time.Now().Add(time.Second))
		if err != nil || !ok || rel == nil {
			b.Fatal(ok, err)
		}
		return rel
	})
}

// timed runs take b.N times (given the round), timing each call; the func
// it returns (nil: none) runs after, untimed (a release or a settlement
// after the answer). It prints and records the calls' p50 and p99.
func timed(b *testing.B, take func(i int) func()) {
	b.Helper()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		t := time.Now()
		after := take(i)
		lat = append(lat, time.Since(t))
		if after != nil {
			b.StopTimer()
			after()
			b.StartTimer()
		}
	}
	report(b, lat)
}

// report prints and records the latencies' p50 and p99.
func report(b *testing.B, lat []time.Duration) {
	b.Helper()
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	b.Logf("%s: %d statements, p50 %v, p99 %v", b.Name(), len(lat), p50, p99)
}

// BenchmarkSlotPair is a request on a connection with both maxConcurrent
// (4) and a model cap (1): both slots taken in one statement (printed p50
// and p99) and released after its answer (not timed).
func BenchmarkSlotPair(b *testing.B) {
	st := open(b)
	l := New(st, clock.Real{}, "A", Options{})
	ctx := context.Background()
	timed(b, func(int) func() {
		rel, ok, _, err := l.SlotPair(ctx, "c", 4, "model|c|glm-5", 1, time.Now().Add(time.Second))
		if err != nil || !ok || rel == nil {
			b.Fatal(ok, err)
		}
		return rel
	})
}

// BenchmarkSlotTwoStatements is BenchmarkSlotPair the way it was before
// SlotPair: the connection's slot, then the model's (two statements, the
// pair printed as one p50 and p99).
func BenchmarkSlotTwoStatements(b *testing.B) {
	st := open(b)
	l := New(st, clock.Real{}, "A", Options{})
	ctx := context.Background()
	timed(b, func(int) func() {
		rc, ok, err := l.Slot(ctx, "c", 4, time.Now().Add(time.Second))
		if err != nil || !ok || rc == nil {
			b.Fatal(ok, err)
		}
		rm, ok, err := l.Slot(ctx, "model|c|glm-5", 1, time.Now().Add(time.Second))
		if err != nil || !ok || rm == nil {
			b.Fatal(ok, err)
		}
		return func() { rm(); rc() }
	})
}
