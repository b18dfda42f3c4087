package store

import (
	"context"
	"testing"
)

// limitRowsOf takes every kind of a team server's shared limit a connection
// may own: its maxConcurrent slot, a queue ticket, a model's cap and its
// pacing turn (the names the gateway gives them).
func limitRowsOf(t *testing.T, s *Store, id string) {
	t.Helper()
	ctx := context.Background()
	for _, name := range []string{id, "queue|" + id, "model|" + id + "|gpt-4o"} {
		if _, ok, err := s.AcquireSlot(ctx, name, 2, "A", 1000, 5000); err != nil || !ok {
			t.Fatalf("slot %s: %v %v", name, ok, err)
		}
	}
	if _, ok, err := s.ReservePace(ctx, id, 100, 1000, 2000); err != nil || !ok {
		t.Fatalf("pace %s: %v %v", id, ok, err)
	}
	if n, err := s.LimitRows(id); err != nil || n != 4 {
		t.Fatalf("%s owns %d rows (%v), want 4", id, n, err)
	}
}

// TestSlotOwner: a shared limit's name names its connection.
func TestSlotOwner(t *testing.T) {
	for name, want := range map[string]string{
		"c1": "c1", "queue|c1": "c1", "model|c1|gpt-4o": "c1", "model|c1|org|model": "c1", "model|c12|x": "c12",
	} {
		if got := SlotOwner(name); got != want {
			t.Errorf("SlotOwner(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestDeleteConnectionDeletesItsLimits: a deleted connection's slots, queue
// tickets, model caps and pacing turn go with it (they stayed forever); the
// other connections' rows stay, one whose id begins with the deleted one's
// too.
func TestDeleteConnectionDeletesItsLimits(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		for _, id := range []string{"c1", "c12"} {
			if err := s.CreateConnection(&Connection{ID: id, Provider: "openai", Name: id, IsActive: true}); err != nil {
				t.Fatal(err)
			}
			limitRowsOf(t, s, id)
		}
		if err := s.DeleteConnection("c1"); err != nil {
			t.Fatal(err)
		}
		if n, err := s.LimitRows("c1"); err != nil || n != 0 {
			t.Fatalf("the deleted connection keeps %d rows (%v)", n, err)
		}
		if n, err := s.LimitRows("c12"); err != nil || n != 4 {
			t.Fatalf("the other connection has %d rows (%v), want its 4", n, err)
		}
	})
}

// TestDeleteOrphanLimits: the sweep deletes the rows of connections that no
// longer exist (left by a deletion before DeleteConnection removed them, or
// taken late by an instance that had not heard of it) and no other; a
// second sweep finds none.
func TestDeleteOrphanLimits(t *testing.T) {
	ctx := context.Background()
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		if err := s.CreateConnection(&Connection{ID: "kept", Provider: "openai", Name: "kept", IsActive: true}); err != nil {
			t.Fatal(err)
		}
		limitRowsOf(t, s, "kept")
		limitRowsOf(t, s, "gone")
		if n, err := s.DeleteOrphanLimits(ctx); err != nil || n != 4 {
			t.Fatalf("the sweep deleted %d rows (%v), want the gone connection's 4", n, err)
		}
		if n, _ := s.LimitRows("gone"); n != 0 {
			t.Fatalf("%d orphan rows left", n)
		}
		if n, _ := s.LimitRows("kept"); n != 4 {
			t.Fatalf("the live connection has %d rows, want 4", n)
		}
		if n, err := s.DeleteOrphanLimits(ctx); err != nil || n != 0 {
			t.Fatalf("a second sweep deleted %d (%v)", n, err)
		}
	})
}
