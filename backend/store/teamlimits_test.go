package store

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
)

// TestSlots: max slots and no more; a release under a stale fence or by
// another holder frees nothing; a slot is free again exactly at its expiry
// (one ms before, it is not), and renewal keeps a live slot only.
func TestSlots(t *testing.T) {
	ctx := context.Background()
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		a0, ok, err := s.AcquireSlot(ctx, "c", 2, "A", 1000, 5000)
		if err != nil || !ok || a0.Slot != 0 || a0.Fence != 1 {
			t.Fatalf("first slot = %+v %v %v", a0, ok, err)
		}
		b1, ok, err := s.AcquireSlot(ctx, "c", 2, "B", 1000, 5000)
		if err != nil || !ok || b1.Slot != 1 {
			t.Fatalf("second slot = %+v %v %v", b1, ok, err)
		}
		if _, ok, err := s.AcquireSlot(ctx, "c", 2, "C", 1000, 5000); ok || err != nil {
			t.Fatalf("a third slot of max 2 was granted (%v)", err)
		}
		if _, ok, _ := s.AcquireSlot(ctx, "other", 1, "C", 1000, 5000); !ok {
			t.Fatal("another connection's slot was refused")
		}
		// Stale fence, wrong holder: nothing freed.
		if err := s.ReleaseSlot(ctx, Slot{ConnectionID: "c", Slot: 0, Fence: 2}, "A"); err != nil {
			t.Fatal(err)
		}
		if err := s.ReleaseSlot(ctx, a0, "B"); err != nil {
			t.Fatal(err)
		}
		if n, _ := s.HeldSlots("c", 1000); n != 2 {
			t.Fatalf("after stale releases %d held, want 2", n)
		}
		if err := s.ReleaseSlot(ctx, a0, "A"); err != nil {
			t.Fatal(err)
		}
		c0, ok, err := s.AcquireSlot(ctx, "c", 2, "C", 1100, 5000)
		if err != nil || !ok || c0.Slot != 0 || c0.Fence != 2 {
			t.Fatalf("after the release: %+v %v %v; want slot 0, fence 2", c0, ok, err)
		}
		// B's slot expires at 6000: held at 5999, free at 6000.
		if _, ok, _ := s.AcquireSlot(ctx, "c", 2, "D", 5999, 5000); ok {
			t.Fatal("a slot was taken 1 ms before the holder's expiry")
		}
		if n, err := s.RenewSlots(ctx, "C", 5999, 5000); err != nil || n != 2 {
			t.Fatalf("C renewed %d slots (%v), want its 2 live ones", n, err)
		}
		if _, ok, _ := s.AcquireSlot(ctx, "c", 2, "D", 6000, 5000); !ok {
			t.Fatal("a lapsed slot was not free at its expiry")
		}
		if n, _ := s.RenewSlots(ctx, "B", 6000, 5000); n != 0 {
			t.Fatalf("B renewed %d slots after losing its slot, want 0", n)
		}
		// A slot written with a clock far ahead counts as lapsed past the
		// longest lease: at MaxSlotLeaseMs ahead it holds, 1 ms more it does not.
		if _, ok, _ := s.AcquireSlot(ctx, "skew", 1, "Ahead", 10_000+1, MaxSlotLeaseMs-1); !ok {
			t.Fatal("no slot for the clock-ahead holder")
		}
		if _, ok, _ := s.AcquireSlot(ctx, "skew", 1, "E", 10_000, 5000); ok {
			t.Fatal("a slot within the longest lease was taken")
		}
		if _, ok, _ := s.AcquireSlot(ctx, "skew2", 1, "Ahead", 10_000+1, MaxSlotLeaseMs); !ok {
			t.Fatal("no slot for the clock-ahead holder")
		}
		if _, ok, _ := s.AcquireSlot(ctx, "skew2", 1, "E", 10_000, 5000); !ok {
			t.Fatal("a slot further ahead than the longest lease held its connection")
		}
		// B's late release, under its old fence, leaves D's slot alone.
		if err := s.ReleaseSlot(ctx, b1, "B"); err != nil {
			t.Fatal(err)
		}
		if n, _ := s.HeldSlots("c", 6000); n != 2 {
			t.Fatalf("%d held after B's late release, want 2", n)
		}
	})
}

// TestPacingSixPerMinute: requestsPerMinute 6 (one turn per 10 s) across
// three handles asking every second for a minute without waiting: exactly
// 6 turns are taken, at 0, 10, … 50 s; a refused ask says when the next
// turn comes; a cancelled last turn is handed back.
func TestPacingSixPerMinute(t *testing.T) {
	ctx := context.Background()
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		var turns []int64
		for ms := int64(0); ms < 60_000; ms += 1000 {
			turn, ok, err := s.ReservePace(ctx, "c", 10_000, 1_000_000+ms, 1_000_000+ms)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				turns = append(turns, turn-1_000_000)
			} else if turn <= 1_000_000+ms {
				t.Fatalf("a refusal at %d ms names turn %d, not later", ms, turn-1_000_000)
			}
		}
		if len(turns) != 6 || turns[0] != 0 || turns[5] != 50_000 {
			t.Fatalf("turns %v, want 6 at 0 … 50000", turns)
		}
		// Waiting allowed: the turn is in the future, then handed back.
		turn, ok, err := s.ReservePace(ctx, "c", 10_000, 1_061_000, 1_080_000)
		if err != nil || !ok || turn != 1_061_000 {
			t.Fatalf("turn %d %v %v", turn, ok, err)
		}
		turn2, ok, _ := s.ReservePace(ctx, "c", 10_000, 1_061_000, 1_080_000)
		if !ok || turn2 != 1_071_000 {
			t.Fatalf("the next waiting turn = %d, want 1071000", turn2)
		}
		if err := s.CancelPace(ctx, "c", turn2, 10_000); err != nil {
			t.Fatal(err)
		}
		if turn3, ok, _ := s.ReservePace(ctx, "c", 10_000, 1_062_000, 1_080_000); !ok || turn3 != 1_071_000 {
			t.Fatalf("after the cancel the turn is %d, want the handed-back 1071000", turn3)
		}
	})
}

// TestPostgresSlotsAcrossInstances: 60 acquisitions of a max-1 connection at
// once through two handles: exactly one holds it.
func TestPostgresSlotsAcrossInstances(t *testing.T) {
	a, b := twoInstances(t)
	var won atomic.Int32
	var mu sync.Mutex
	acrossInstances(a, b, 60, func(st *Store) {
		_, ok, err := st.AcquireSlot(context.Background(), "c", 1, "h", 1000, 5000)
		if err != nil {
			mu.Lock()
			t.Error(err)
			mu.Unlock()
		}
		if ok {
			won.Add(1)
		}
	})
	if won.Load() != 1 {
		t.Fatalf("%d acquisitions won a max-1 connection", won.Load())
	}
}

// TestSlotPair: a pair is taken both or neither on either dialect — the
// second limit full leaves the first's slot free (its fence bumped), the
// first full takes nothing — and each slot is released and fenced alone.
func TestSlotPair(t *testing.T) {
	ctx := context.Background()
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		a, b, ok, full, err := s.AcquireSlotPair(ctx, "c", 2, "model|c|m", 1, "A", 1000, 5000)
		if err != nil || !ok || full != "" || a.ConnectionID != "c" || b.ConnectionID != "model|c|m" || a.Fence != 1 || b.Fence != 1 {
			t.Fatalf("first pair = %+v %+v %v %q %v", a, b, ok, full, err)
		}
		if _, _, ok, full, err := s.AcquireSlotPair(ctx, "c", 2, "model|c|m", 1, "B", 1000, 5000); ok || full != "model|c|m" || err != nil {
			t.Fatalf("under a full model: ok %v full %q %v", ok, full, err)
		}
		if n, _ := s.HeldSlots("c", 1000); n != 1 {
			t.Fatalf("the refused pair left %d connection slots held, want A's 1", n)
		}
		if _, ok, _ := s.AcquireSlot(ctx, "c", 2, "B", 1000, 5000); !ok {
			t.Fatal("the connection's second slot was not free after the refused pair")
		}
		if _, _, ok, full, _ := s.AcquireSlotPair(ctx, "c", 2, "model|c|n", 1, "C", 1000, 5000); ok || full != "c" {
			t.Fatalf("under a full connection: ok %v full %q", ok, full)
		}
		if n, _ := s.HeldSlots("model|c|n", 1000); n != 0 {
			t.Fatalf("a pair refused by the connection holds %d model slots", n)
		}
		if err := s.ReleaseSlot(ctx, b, "A"); err != nil {
			t.Fatal(err)
		}
		if n, _ := s.HeldSlots("model|c|m", 1000); n != 0 {
			t.Fatalf("after the model slot's release %d held", n)
		}
		if n, _ := s.HeldSlots("c", 1000); n != 2 {
			t.Fatalf("the model slot's release freed a connection slot (%d held)", n)
		}
	})
}
