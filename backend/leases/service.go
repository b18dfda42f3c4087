// Package leases implements exclusive connection leases for managed sessions:
// an owner (an opaque vlo_ token, stored only as its SHA-256) holds one
// connection exclusively, fenced by a generation, until it releases the lease
// or the lease lapses. Uniqueness of the active owner and of the active
// connection is enforced by partial unique indexes in the database, so several
// processes sharing it can never hold the same connection. Expiry is lazy:
// every decision is a function of the injected clock's now, and no timer runs.
package leases

import (
	"errors"
	"slices"
	"sync"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
)

// Lease is a lease row (see store.Lease).
type Lease = store.Lease

// heldCacheTTL bounds how stale the in-memory view of held connections may be.
const heldCacheTTL = time.Second

// maxRounds bounds the retries of an operation whose guard lost a race.
const maxRounds = 3

// holder is the active lease on one connection as routing sees it.
type holder struct {
	ownerHash string
	expiresAt int64 // unix ms
}

// Service is the lease lifecycle: acquire, renew, status, release, the dispatch
// fence, moves, and a cached view of held connections for routing.
// It is safe for concurrent use.
type Service struct {
	st  *store.Store
	clk clock.Clock

	mu         sync.Mutex
	held       map[string]holder // replaced wholesale, never mutated after build
	loadedAt   time.Time
	loaded     bool
	refreshing bool   // a reload of held is running (in place or in the background)
	gen        uint64 // counts local writes (invalidate): a read begun before one is not kept
	// readHeld loads the view from the database (read; tests slow it down).
	readHeld func() (map[string]holder, error)
	// pending are releases the database did not answer (queued.go).
	pending []queuedRelease
}

// New returns a lease service over st, deciding with clk.
func New(st *store.Store, clk clock.Clock) *Service {
	s := &Service{st: st, clk: clk}
	s.readHeld = s.read
	return s
}

func ms(t time.Time) int64 { return t.UnixMilli() }

// expire runs the lazy expiry at now.
func (s *Service) expire(now time.Time) error {
	n, err := s.st.ExpireLeases(ms(now))
	if n > 0 {
		s.invalidate()
	}
	return err
}

// invalidate drops the held-connections cache after a local write.
func (s *Service) invalidate() {
	s.mu.Lock()
	s.loaded = false
	s.gen++
	s.mu.Unlock()
}

// snapshot returns the held-connections view, reloaded from the database when
// older than heldCacheTTL. On a read error the previous view is kept (and
// retried after heldCacheTTL). The database is never read under the lock:
// while one caller reloads a stale view, the others are served the view they
// had (on SQLite, the caller that found it stale reads in place, so a view is
// at most heldCacheTTL old for it; with a shared PostgreSQL store the reload
// runs in the background, and routing never waits on a database that may be
// far away or unreachable). The first load, and the first after a local
// write, are read in place by every caller that needs one.
func (s *Service) snapshot(now time.Time) map[string]holder {
	s.mu.Lock()
	if s.loaded && !now.Before(s.loadedAt) && now.Sub(s.loadedAt) < heldCacheTTL {
		h := s.held
		s.mu.Unlock()
		return h
	}
	if s.loaded && (s.refreshing || s.st.Shared()) {
		if !s.refreshing {
			s.refreshing = true
			go s.refresh()
		}
		h := s.held
		s.mu.Unlock()
		return h
	}
	gen, reloading := s.gen, s.loaded
	s.refreshing = s.refreshing || reloading
	s.mu.Unlock()

	m, err := s.readHeld()

	s.mu.Lock()
	defer s.mu.Unlock()
	if reloading {
		s.refreshing = false
	}
	if gen == s.gen { // no local write since the read began: the view is current
		if err == nil {
			s.held = m
		}
		s.loadedAt, s.loaded = now, true
	}
	if err == nil {
		return m
	}
	return s.held
}

// read loads the active leases as a held-connections view.
func (s *Service) read() (map[string]holder, error) {
	rows, err := s.st.ActiveLeases()
	if err != nil {
		return nil, err
	}
	m := make(map[string]holder, len(rows))
	for _, l := range rows {
		m[l.ConnectionID] = holder{ownerHash: l.OwnerHash, expiresAt: l.ExpiresAt}
	}
	return m, nil
}

// refresh is the background reload of a shared store's stale view.
func (s *Service) refresh() {
	m, err := s.readHeld()
	now := s.clk.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil && s.loaded { // a local write meanwhile reloads in place instead
		s.held = m
	}
	s.loadedAt, s.refreshing = now, false
}

// HeldBy returns the owner hash and expiry of the active, unexpired lease on a
// connection (routing.LeaseView). It reads a view at most one second old, so
// routing never reads the database per request; the database still decides
// every acquisition.
func (s *Service) HeldBy(connectionID string) (ownerHash string, expiresAt time.Time, ok bool) {
	now := s.clk.Now()
	h, found := s.snapshot(now)[connectionID]
	if !found || h.expiresAt <= ms(now) {
		return "", time.Time{}, false
	}
	return h.ownerHash, time.UnixMilli(h.expiresAt), true
}

// Held returns connection id → owner hash for every active, unexpired lease,
// from the same view as HeldBy.
func (s *Service) Held() map[string]string {
	now := s.clk.Now()
	out := map[string]string{}
	for conn, h := range s.snapshot(now) {
		if h.expiresAt > ms(now) {
			out[conn] = h.ownerHash
		}
	}
	return out
}

// CountActive counts active, unexpired leases (from the HeldBy view).
func (s *Service) CountActive() int { return len(s.Held()) }

// Active expires lapsed leases and returns the active ones, oldest first.
func (s *Service) Active() ([]Lease, error) {
	if err := s.expire(s.clk.Now()); err != nil {
		return nil, err
	}
	return s.st.ActiveLeases()
}

// current returns the owner's active, unexpired lease and checks that it
// belongs to keyID and has this generation.
func (s *Service) current(hash, keyID string, generation int64, now time.Time) (Lease, error) {
	l, err := s.st.LeaseByOwner(hash)
	if errors.Is(err, store.ErrNotFound) || (err == nil && l.ExpiresAt <= ms(now)) {
		return Lease{}, ErrLeaseRequired
	}
	if err != nil {
		return Lease{}, err
	}
	if l.APIKeyID != keyID {
		return Lease{}, ErrKeyMismatch
	}
	if l.Generation != generation {
		return Lease{}, ErrFenceStale
	}
	return l, nil
}

// Acquire gives the owner an exclusive lease on the first free connection of
// eligible (in order): the key's allowed connections that can serve the model
// right now, as the caller computed them. If the owner already holds an active
// lease under this key it is renewed and returned (idempotent acquire); when
// its connection is no longer eligible it first moves, under the same
// generation, to a free eligible one if there is one. A new lease takes the
// owner's next generation (1 for a new owner). The database's unique indexes
// arbitrate concurrent acquisitions, from this process or another.
//
// Errors: ErrContextInvalid (malformed owner), ErrNoEligibleConnection (eligible
// is empty), ErrKeyMismatch (the owner's lease belongs to another key), and
// *CapacityError when every eligible connection is held by another owner.
func (s *Service) Acquire(keyID, ownerToken, model string, eligible []string, ttl time.Duration) (Lease, error) {
	hash, err := OwnerHash(ownerToken)
	if err != nil {
		return Lease{}, err
	}
	if keyID == "" {
		return Lease{}, ErrAuthenticationRequired
	}
	s.dropQueued(hash)
	eligible = uniqueIDs(eligible)
	if len(eligible) == 0 {
		return Lease{}, ErrNoEligibleConnection
	}
	ttl = ClampTTL(ttl)
	now := s.clk.Now()
	if err := s.expire(now); err != nil {
		return Lease{}, err
	}
	defer s.invalidate()
	var capErr *CapacityError
	for range maxRounds {
		l, err := s.st.LeaseByOwner(hash)
		switch {
		case err == nil:
			got, done, err := s.reuse(l, keyID, eligible, now, ttl)
			if err != nil || done {
				return got, err
			}
			continue // the lease changed under us: look again
		case !errors.Is(err, store.ErrNotFound):
			return Lease{}, err
		}
		gen, err := s.st.MaxLeaseGeneration(hash)
		if err != nil {
			return Lease{}, err
		}
		for _, conn := range eligible {
			l := Lease{ID: secrets.RandomID(), OwnerHash: hash, APIKeyID: keyID, ConnectionID: conn, Generation: gen + 1,
				State: store.LeaseActive, Model: model, AcquiredAt: ms(now), RenewedAt: ms(now), ExpiresAt: ms(now.Add(ttl))}
			err := s.st.InsertLease(&l)
			if err == nil {
				return l, nil
			}
			if !errors.Is(err, store.ErrConflict) {
				return Lease{}, err
			}
		}
		// Every insert conflicted: either the same owner won a concurrent
		// acquire (the next round returns its lease) or others hold them all.
		if _, err := s.st.LeaseByOwner(hash); err == nil {
			continue
		}
		capErr, err = s.capacity(eligible, now)
		if err != nil {
			return Lease{}, err
		}
		if capErr != nil {
			return Lease{}, capErr
		}
		// Something was freed meanwhile: try again.
	}
	if capErr == nil {
		capErr = &CapacityError{EligibleCount: len(eligible), RetryAfter: MinRetryAfter}
	}
	return Lease{}, capErr
}

// reuse handles an acquire by an owner that already holds l: done is false when
// a guard lost a race and the caller should look again.
func (s *Service) reuse(l Lease, keyID string, eligible []string, now time.Time, ttl time.Duration) (Lease, bool, error) {
	if l.APIKeyID != keyID {
		return Lease{}, true, ErrKeyMismatch
	}
	if !slices.Contains(eligible, l.ConnectionID) {
		for _, conn := range eligible {
			err := s.st.MoveLease(l.ID, l.Generation, l.ConnectionID, conn, ms(now))
			if err == nil {
				l.ConnectionID = conn
				break
			}
			if errors.Is(err, store.ErrNotFound) {
				return Lease{}, false, nil
			}
			if !errors.Is(err, store.ErrConflict) {
				return Lease{}, true, err
			}
		}
		// When every eligible connection is taken the owner keeps its lease;
		// routing decides per request whether its connection may serve.
	}
	exp := ms(now.Add(ttl))
	err := s.st.RenewLease(l.ID, l.Generation, ms(now), exp)
	if errors.Is(err, store.ErrNotFound) {
		return Lease{}, false, nil
	}
	if err != nil {
		return Lease{}, true, err
	}
	l.RenewedAt, l.ExpiresAt = ms(now), exp
	return l, true, nil
}

// capacity builds the capacity error for eligible from the active leases, or
// returns nil when one of them is free after all.
func (s *Service) capacity(eligible []string, now time.Time) (*CapacityError, error) {
	rows, err := s.st.ActiveLeases()
	if err != nil {
		return nil, err
	}
	held := 0
	var earliest int64
	for _, l := range rows {
		if l.ExpiresAt <= ms(now) || !slices.Contains(eligible, l.ConnectionID) {
			continue
		}
		held++
		if earliest == 0 || l.ExpiresAt < earliest {
			earliest = l.ExpiresAt
		}
	}
	if held < len(eligible) {
		return nil, nil
	}
	retry := MinRetryAfter
	if earliest > 0 {
		retry = time.Duration(earliest-ms(now)) * time.Millisecond
	}
	return &CapacityError{EligibleCount: len(eligible), FreeCount: 0, RetryAfter: clampRetry(retry)}, nil
}

// Renew extends the owner's active lease of this generation by ttl (0: the
// default; clamped 1 s – 30 min) from now. Errors: ErrContextInvalid,
// ErrLeaseRequired, ErrKeyMismatch, ErrFenceStale.
func (s *Service) Renew(keyID, ownerToken string, generation int64, ttl time.Duration) (Lease, error) {
	hash, err := OwnerHash(ownerToken)
	if err != nil {
		return Lease{}, err
	}
	ttl = ClampTTL(ttl)
	s.dropQueued(hash)
	now := s.clk.Now()
	if err := s.expire(now); err != nil {
		return Lease{}, err
	}
	for range maxRounds {
		l, err := s.current(hash, keyID, generation, now)
		if err != nil {
			return Lease{}, err
		}
		exp := ms(now.Add(ttl))
		err = s.st.RenewLease(l.ID, generation, ms(now), exp)
		if err == nil {
			s.invalidate()
			l.RenewedAt, l.ExpiresAt = ms(now), exp
			return l, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return Lease{}, err
		}
	}
	return Lease{}, ErrFenceStale
}

// Current returns the owner's active lease of this generation without changing
// it (the lifecycle "status" action). Errors: ErrContextInvalid,
// ErrLeaseRequired, ErrKeyMismatch, ErrFenceStale.
func (s *Service) Current(keyID, ownerToken string, generation int64) (Lease, error) {
	hash, err := OwnerHash(ownerToken)
	if err != nil {
		return Lease{}, err
	}
	return s.current(hash, keyID, generation, s.clk.Now())
}

// Status returns the connection and owner hash of the caller's active lease of
// this generation (gateway.LeaseFence); errors as Current.
func (s *Service) Status(keyID, ownerToken string, generation int64) (connectionID, ownerHash string, err error) {
	l, err := s.Current(keyID, ownerToken, generation)
	if err != nil {
		return "", "", err
	}
	return l.ConnectionID, l.OwnerHash, nil
}

// Release ends the owner's active lease of this generation with reason (""
// means OWNER_EXIT) and returns it with state RELEASED. Releasing a lease
// already released by this owner, key and generation succeeds again, so a
// retried release is harmless. Errors: ErrContextInvalid, ErrLeaseRequired,
// ErrKeyMismatch, ErrFenceStale. When the database does not answer (a team
// server's outage) the release is queued and ErrReleaseQueued returned: it
// is applied when the database answers (FlushReleases).
func (s *Service) Release(keyID, ownerToken string, generation int64, reason string) (Lease, error) {
	hash, err := OwnerHash(ownerToken)
	if err != nil {
		return Lease{}, err
	}
	if reason == "" {
		reason = ReasonOwnerExit
	}
	l, err := s.release(hash, keyID, generation, reason)
	if err != nil && store.IsUnreachable(err) {
		s.queue(queuedRelease{hash: hash, keyID: keyID, generation: generation, reason: reason})
		return Lease{OwnerHash: hash, APIKeyID: keyID, Generation: generation}, ErrReleaseQueued
	}
	return l, err
}

// release is Release with a validated owner.
func (s *Service) release(hash, keyID string, generation int64, reason string) (Lease, error) {
	now := s.clk.Now()
	if err := s.expire(now); err != nil {
		return Lease{}, err
	}
	for range maxRounds {
		l, err := s.current(hash, keyID, generation, now)
		if errors.Is(err, ErrLeaseRequired) {
			prev, perr := s.st.LeaseByOwnerGeneration(hash, generation)
			if perr == nil && prev.State == store.LeaseReleased && prev.APIKeyID == keyID {
				return prev, nil
			}
			return Lease{}, err
		}
		if err != nil {
			return Lease{}, err
		}
		err = s.st.ReleaseLease(l.ID, generation, ms(now), reason)
		if err == nil {
			s.invalidate()
			l.State, l.ReleasedAt, l.ReleaseReason = store.LeaseReleased, ms(now), reason
			return l, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return Lease{}, err
		}
	}
	return Lease{}, ErrFenceStale
}

// Fence is checked right before dispatching a request that carries a lease:
// the owner's active lease, read from the database (so a takeover by another
// process is seen), must have this generation, belong to keyID and hold
// connectionID. Errors: ErrContextInvalid, ErrLeaseRequired, ErrKeyMismatch,
// ErrFenceStale, ErrConnectionMismatch.
func (s *Service) Fence(keyID, ownerToken string, generation int64, connectionID string) error {
	l, err := s.Current(keyID, ownerToken, generation)
	if err != nil {
		return err
	}
	if l.ConnectionID != connectionID {
		return ErrConnectionMismatch
	}
	return nil
}

// Move hands the owner's active lease of this generation to toConnection when
// the normal routing rules (model, health, cooldown) move the session: the
// generation stays (gateway.LeaseFence). The unique index decides: a target
// held by another owner is a *CapacityError. Moving to the connection it
// already holds is a no-op. Errors otherwise as Fence.
func (s *Service) Move(keyID, ownerToken string, generation int64, toConnection string) error {
	hash, err := OwnerHash(ownerToken)
	if err != nil {
		return err
	}
	now := s.clk.Now()
	for range maxRounds {
		l, err := s.current(hash, keyID, generation, now)
		if err != nil {
			return err
		}
		if l.ConnectionID == toConnection {
			return nil
		}
		err = s.st.MoveLease(l.ID, generation, l.ConnectionID, toConnection, ms(now))
		switch {
		case err == nil:
			s.invalidate()
			return nil
		case errors.Is(err, store.ErrConflict):
			capErr, cerr := s.capacity([]string{toConnection}, now)
			if cerr != nil {
				return cerr
			}
			if capErr == nil {
				continue // the holder went away meanwhile
			}
			return capErr
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
	}
	return ErrFenceStale
}

// ReleaseByID ends an active lease by its id (operator release) with reason
// ("" means OPERATOR_RELEASE) and returns it as released. An unknown, released
// or lapsed lease is ErrLeaseNotFound.
func (s *Service) ReleaseByID(id, reason string) (Lease, error) {
	if reason == "" {
		reason = ReasonOperator
	}
	now := s.clk.Now()
	if err := s.expire(now); err != nil {
		return Lease{}, err
	}
	for range maxRounds {
		l, err := s.st.LeaseByID(id)
		if errors.Is(err, store.ErrNotFound) {
			return Lease{}, ErrLeaseNotFound
		}
		if err != nil {
			return Lease{}, err
		}
		if l.State != store.LeaseActive || l.ExpiresAt <= ms(now) {
			return Lease{}, ErrLeaseNotFound
		}
		err = s.st.ReleaseLease(l.ID, l.Generation, ms(now), reason)
		if err == nil {
			s.invalidate()
			l.State, l.ReleasedAt, l.ReleaseReason = store.LeaseReleased, ms(now), reason
			return l, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return Lease{}, err
		}
	}
	return Lease{}, ErrLeaseNotFound
}

// uniqueIDs drops empty and repeated ids, keeping order.
func uniqueIDs(ids []string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}
