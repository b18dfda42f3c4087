package leases

import (
	"testing"
	"time"
)

// TestQueuedReleases: a queued release is applied to the owner's lease of
// that key and generation when the database answers; one whose lease expired
// meanwhile, or is of another generation, is dropped without touching
// anything; an acquire by the owner cancels its queued release.
func TestQueuedReleases(t *testing.T) {
	s, clk, _ := newService(t)
	owner := newOwner()
	l := mustAcquire(t, s, "k1", owner, "c1")
	hash, _ := OwnerHash(owner)
	s.queue(queuedRelease{hash: hash, keyID: "k1", generation: l.Generation, reason: ReasonOwnerExit})
	if n, err := s.FlushReleases(); n != 1 || err != nil || s.QueuedReleases() != 0 {
		t.Fatalf("flush applied %d (%v), %d left; want 1, 0", n, err, s.QueuedReleases())
	}
	if got, _ := s.st.LeaseByID(l.ID); got.State != "RELEASED" || got.ReleaseReason != ReasonOwnerExit {
		t.Fatalf("after the flush the lease is %s (%s)", got.State, got.ReleaseReason)
	}

	// Another generation: dropped, the live lease untouched.
	l2 := mustAcquire(t, s, "k1", owner, "c1")
	s.queue(queuedRelease{hash: hash, keyID: "k1", generation: l2.Generation - 1, reason: ReasonOwnerExit})
	if n, _ := s.FlushReleases(); n != 0 || s.QueuedReleases() != 0 {
		t.Fatalf("a stale generation's release: applied %d, %d left", n, s.QueuedReleases())
	}
	if got, _ := s.st.LeaseByID(l2.ID); got.State != "ACTIVE" {
		t.Fatalf("a stale release touched the live lease: %s", got.State)
	}

	// The owner acquires again before the flush: its queued release is cancelled.
	s.queue(queuedRelease{hash: hash, keyID: "k1", generation: l2.Generation, reason: ReasonOwnerExit})
	mustAcquire(t, s, "k1", owner, "c1")
	if s.QueuedReleases() != 0 {
		t.Fatal("an acquire did not cancel the owner's queued release")
	}

	// Expired meanwhile: dropped.
	s.queue(queuedRelease{hash: hash, keyID: "k1", generation: l2.Generation, reason: ReasonOwnerExit})
	clk.Advance(DefaultTTL + time.Second)
	if n, _ := s.FlushReleases(); n != 0 || s.QueuedReleases() != 0 {
		t.Fatalf("an expired lease's release: applied %d, %d left", n, s.QueuedReleases())
	}
}
