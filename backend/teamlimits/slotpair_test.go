package teamlimits

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"omniroute/backend/clock"
)

// held counts a name's slots held at the fake clock's now.
func held(t *testing.T, st *flaky, clk clock.Clock, name string) int {
	t.Helper()
	n, err := st.HeldSlots(name, clk.Now().UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSlotPairBothOrNeither: a connection of maxConcurrent 2 with a model
// capped at 1, its two slots taken in one statement per request across
// three instances: a request refused by the model's cap holds none of the
// connection's slots, one refused by the connection none of the model's;
// release frees both. Both orders of the names (the statement locks them
// in the names' order) answer the same.
func TestSlotPairBothOrNeither(t *testing.T) {
	for _, conn := range []string{"c", "z"} { // "c" < "model|…" < "z"
		t.Run(conn, func(t *testing.T) {
			st := open(t)
			clk := clock.NewFake(t0)
			a, b, c := New(st, clk, "A", roomy()), New(st, clk, "B", roomy()), New(st, clk, "C", roomy())
			model := "model|" + conn + "|m"
			ctx := context.Background()
			relA, ok, _, err := a.SlotPair(ctx, conn, 2, model, 1, clk.Now())
			if !ok || relA == nil || err != nil {
				t.Fatalf("A: %v %v", ok, err)
			}
			if _, ok, full, err := b.SlotPair(ctx, conn, 2, model, 1, clk.Now()); ok || full != model || err != nil {
				t.Fatalf("B under a full model cap: ok %v full %q %v; want refused by %q", ok, full, err, model)
			}
			if n, m := held(t, st, clk, conn), held(t, st, clk, model); n != 1 || m != 1 {
				t.Fatalf("after the model's refusal %d connection and %d model slots held, want A's 1 and 1", n, m)
			}
			// Another model of the connection (no cap) takes its second slot.
			relB, ok, _ := b.Slot(ctx, conn, 2, clk.Now())
			if !ok || relB == nil {
				t.Fatal("B's single slot refused")
			}
			relA() // the model's slot is free again, the connection full
			if n, m := held(t, st, clk, conn), held(t, st, clk, model); n != 1 || m != 0 {
				t.Fatalf("after A's release %d connection and %d model slots held, want B's 1 and 0", n, m)
			}
			relD, ok, _ := c.Slot(ctx, conn, 2, clk.Now()) // the connection full again
			if !ok || relD == nil {
				t.Fatal("C's single slot refused")
			}
			if _, ok, full, _ := c.SlotPair(ctx, conn, 2, model, 1, clk.Now()); ok || full != conn {
				t.Fatalf("C under a full connection: ok %v full %q; want refused by %q", ok, full, conn)
			}
			if m := held(t, st, clk, model); m != 0 {
				t.Fatalf("the connection's refusal left %d model slots held", m)
			}
			relB()
			relD()
			relC, ok, _, _ := c.SlotPair(ctx, conn, 2, model, 1, clk.Now())
			if !ok || relC == nil {
				t.Fatal("C refused with both free")
			}
			relC()
			relC() // once
			if n, m := held(t, st, clk, conn), held(t, st, clk, model); n != 0 || m != 0 {
				t.Fatalf("after the releases %d and %d held", n, m)
			}
			// A limit of 0 is not held: the other one alone.
			rel, ok, _, _ := a.SlotPair(ctx, conn, 0, model, 1, clk.Now())
			if !ok || rel == nil || held(t, st, clk, conn) != 0 || held(t, st, clk, model) != 1 {
				t.Fatal("a pair with no connection limit did not take the model's slot alone")
			}
			rel()
		})
	}
}

// TestDeadInstancePairFreesAtLeaseEnd: an instance holding a pair stops
// (no release, no renewal): both its slots free themselves when the lease
// lapses — another instance's pair is refused 1 ms before, taken at the
// lease end — and the dead one's late release leaves the new holder's two
// slots alone. A live holder's renewal keeps both past the lease.
func TestDeadInstancePairFreesAtLeaseEnd(t *testing.T) {
	st := open(t)
	clk := clock.NewFake(t0)
	lease := func() time.Duration { return 3 * time.Second }
	a := New(st, clk, "A", Options{Lease: lease, CallTimeout: 30 * time.Second})
	b := New(st, clk, "B", Options{Lease: lease, CallTimeout: 30 * time.Second})
	ctx := context.Background()
	relA, ok, _, _ := a.SlotPair(ctx, "c", 1, "model|c|m", 1, t0)
	if !ok || relA == nil {
		t.Fatal("A got no pair")
	}
	clk.Advance(3*time.Second - time.Millisecond)
	a.Tick()
	clk.Advance(time.Millisecond)
	if _, ok, _, _ := b.SlotPair(ctx, "c", 1, "model|c|m", 1, clk.Now()); ok {
		t.Fatal("B took a pair A renewed")
	}
	clk.Advance(3*time.Second - 2*time.Millisecond)
	if _, ok, _, _ := b.SlotPair(ctx, "c", 1, "model|c|m", 1, clk.Now()); ok {
		t.Fatal("B took A's pair 1 ms before its lease ended")
	}
	clk.Advance(time.Millisecond)
	relB, ok, _, err := b.SlotPair(ctx, "c", 1, "model|c|m", 1, clk.Now())
	if !ok || relB == nil || err != nil {
		t.Fatalf("B did not get the dead instance's pair at its lease end: %v %v", ok, err)
	}
	relA() // the dead instance's late release: both fenced out
	if n, m := held(t, st, clk, "c"), held(t, st, clk, "model|c|m"); n != 1 || m != 1 {
		t.Fatalf("%d and %d held after A's late release, want B's 1 and 1", n, m)
	}
	relB()
	if n, m := held(t, st, clk, "c"), held(t, st, clk, "model|c|m"); n != 0 || m != 0 {
		t.Fatalf("%d and %d held after B's release", n, m)
	}
}

// TestSlotPairAcrossInstances: three instances, 30 requests on a
// connection of maxConcurrent 2 whose model is capped at 1, each taking its
// pair while the instances renew their slots all along: the model never
// runs twice at once, every request is served, and no statement failed
// (a renewal and a pair's acquisition lock rows in the same order: no
// deadlock).
func TestSlotPairAcrossInstances(t *testing.T) {
	st := open(t)
	clk := clock.Real{}
	var failures atomic.Int32
	opts := Options{CallTimeout: 30 * time.Second, OnError: func(error) { failures.Add(1) }}
	insts := []*Limits{New(st, clk, "A", opts), New(st, clk, "B", opts), New(st, clk, "C", opts)}
	var running, peak, served atomic.Int32
	stop := make(chan struct{})
	var renewals sync.WaitGroup
	for _, l := range insts {
		renewals.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				l.Tick()
				time.Sleep(time.Millisecond) // renewals all along, not a timing assertion
			}
		})
	}
	var wg sync.WaitGroup
	for i := range 30 {
		l := insts[i%3]
		wg.Go(func() {
			release, ok, _, err := l.SlotPair(context.Background(), "c", 2, "model|c|m", 1, time.Now().Add(60*time.Second))
			if err != nil || !ok || release == nil {
				t.Errorf("pair: %v %v (release %v)", ok, err, release != nil)
				return
			}
			n := running.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(2 * time.Millisecond) // the request's work
			running.Add(-1)
			served.Add(1)
			release()
		})
	}
	wg.Wait()
	close(stop)
	renewals.Wait()
	if peak.Load() != 1 || served.Load() != 30 || failures.Load() != 0 {
		t.Fatalf("peak %d in flight, %d served, %d failed statements; want 1, 30, 0", peak.Load(), served.Load(), failures.Load())
	}
}
