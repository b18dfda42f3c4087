package leases

import (
	"context"
	"errors"
	"time"

	"omniroute/backend/store"
)

// ErrReleaseQueued is Release's answer when the database did not answer: the
// release is kept and applied when it answers again (FlushReleases), so the
// connection is not held until the lease's TTL. The API answers it
// 202 {state: "RELEASE_QUEUED"}.
var ErrReleaseQueued = errors.New("the lease release is queued until the database answers")

// maxQueuedReleases bounds the releases kept during an outage (the oldest
// are dropped: their leases expire by TTL instead).
const maxQueuedReleases = 10_000

// queuedRelease is a release the database refused for want of an answer.
type queuedRelease struct {
	hash, keyID string
	generation  int64
	reason      string
}

// queue keeps a release for FlushReleases, replacing one of the same owner.
func (s *Service) queue(q queuedRelease) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, p := range s.pending {
		if p.hash == q.hash {
			s.pending[i] = q
			return
		}
	}
	if len(s.pending) >= maxQueuedReleases {
		s.pending = s.pending[1:]
	}
	s.pending = append(s.pending, q)
}

// dropQueued forgets an owner's queued release: the owner acquired or
// renewed since, and its newer intent wins.
func (s *Service) dropQueued(hash string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, p := range s.pending {
		if p.hash == hash {
			s.pending = append(s.pending[:i], s.pending[i+1:]...)
			return
		}
	}
}

// QueuedReleases is how many releases wait for the database.
func (s *Service) QueuedReleases() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

// FlushReleases applies the queued releases in order, each to the owner's
// lease if it is still the active one of that key and generation (a lease
// that expired meanwhile, or was taken over, is left alone), and stops at
// the first the database does not answer. It returns how many it applied.
func (s *Service) FlushReleases() (int, error) {
	applied := 0
	for {
		s.mu.Lock()
		if len(s.pending) == 0 {
			s.mu.Unlock()
			return applied, nil
		}
		q := s.pending[0]
		s.mu.Unlock()
		now := s.clk.Now()
		l, err := s.st.LeaseByOwner(q.hash)
		if err == nil && l.APIKeyID == q.keyID && l.Generation == q.generation && l.ExpiresAt > ms(now) {
			err = s.st.ReleaseLease(l.ID, q.generation, ms(now), q.reason)
			if err == nil {
				applied++
				s.invalidate()
			}
		}
		if err != nil && store.IsUnreachable(err) {
			return applied, err
		}
		s.mu.Lock()
		if len(s.pending) > 0 && s.pending[0] == q {
			s.pending = s.pending[1:]
		}
		s.mu.Unlock()
	}
}

// RunReleases applies queued releases every interval until ctx ends.
func (s *Service) RunReleases(ctx context.Context, interval time.Duration) {
	for {
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if s.QueuedReleases() > 0 {
			_, _ = s.FlushReleases()
		}
	}
}
