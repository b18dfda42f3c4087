// Package teamlimits holds a connection's maxConcurrent and
// requestsPerMinute / minTimeMs for every instance of a team server together,
// in the shared database: a request in flight holds one of the connection's
// numbered slots, a short lease of its instance renewed while it runs and
// fenced by a counter bumped at each acquisition (store.AcquireSlot), so the
// slots of an instance that died or froze free themselves when their lease
// lapses (seconds) and its late release or renewal changes nothing; pacing
// takes the connection's next dispatch turn from one shared row
// (store.ReservePace). A connection's queue depth uses the same slots under
// another name (the gateway's TeamQueueKey), taken without waiting. Each
// instance's own gate and queue still run first.
//
// When the database does not answer, the instance applies the limits alone
// (fail open to per-instance limits, as before this package) and tries the
// database again after a short pause; a release the database refused is
// kept and applied when it answers again, before any renewal, so the slot
// is not renewed meanwhile and frees itself at the latest when its lease
// lapses.
package teamlimits

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/store"
)

// Store is the shared database (store.Store).
type Store interface {
	AcquireSlot(ctx context.Context, connectionID string, max int, holder string, nowMs, ttlMs int64) (store.Slot, bool, error)
	AcquireSlotPair(ctx context.Context, a string, maxA int, b string, maxB int, holder string, nowMs, ttlMs int64) (
		sa, sb store.Slot, ok bool, full string, err error)
	ReleaseSlot(ctx context.Context, sl store.Slot, holder string) error
	RenewSlots(ctx context.Context, holder string, nowMs, ttlMs int64) (int64, error)
	ReservePace(ctx context.Context, connectionID string, intervalMs, nowMs, deadlineMs int64) (int64, bool, error)
	CancelPace(ctx context.Context, connectionID string, turnMs, intervalMs int64) error
	TakeKeyTokens(ctx context.Context, keyID string, tpm, tokens, nowMs, ttlMs int64) (store.TokenTake, error)
	SettleKeyTokens(ctx context.Context, keyID string, hold, tokens, nowMs, ttlMs int64) error
	TakeKeyRates(ctx context.Context, keyID, rpmKey string, rpm, tpm, tokens, nowMs, ttlMs int64) (store.KeyRatesTake, error)
	DeleteExpiredKeyRates(ctx context.Context, beforeMs int64) (int64, error)
	DeleteOrphanLimits(ctx context.Context) (int64, error)
}

// Defaults.
const (
	// DefaultLease is how long a slot outlives an instance that stopped
	// renewing it.
	DefaultLease = 10 * time.Second
	// Poll is how often a caller waiting for a slot asks again.
	Poll = 25 * time.Millisecond
	// CallTimeout bounds one database statement on the request path: the
	// time after which the database counts as not answering (the store's
	// connect_timeout, 5 s, as a session pin's claim), not a latency budget.
	// While the database answers, however slowly, its decision is waited
	// for: a statement given up early marks the database down for
	// RetryAfterDown and every instance applies its own limits meanwhile (at
	// 1 s, 15 requests of one key through three instances of a loaded 2-core
	// machine queued on the key's lock past it and 12 were served under rpm
	// 4).
	CallTimeout = 5 * time.Second
	// RetryAfterDown is how long the database is left alone after it did
	// not answer (the limits apply per instance meanwhile).
	RetryAfterDown = 2 * time.Second
)

// Options configure Limits.
type Options struct {
	// Shared reports whether the limits are shared (the team.limits
	// setting); false: every call is a no-op and the instance's own limits
	// alone apply.
	Shared func() bool
	// Lease is the slot lease (DefaultLease when nil or ≤ 0).
	Lease func() time.Duration
	// OnError hears of database failures (logging).
	OnError func(error)
	// CallTimeout bounds one statement (CallTimeout when ≤ 0); tests on a
	// loaded machine give real-database runs more room.
	CallTimeout time.Duration
}

// Limits is one instance's side of the shared limits.
type Limits struct {
	st     Store
	clk    clock.Clock
	holder string
	opts   Options

	held atomic.Int64 // slots this instance holds (renewed while > 0)

	flushMu   sync.Mutex // one flush of pending at a time
	mu        sync.Mutex
	pending   []store.Slot // releases the database refused, applied when it answers
	skipUntil time.Time    // the database did not answer: per-instance limits until then
}

// New returns the limits of one instance (holder: its unique id) over st.
func New(st Store, clk clock.Clock, holder string, opts Options) *Limits {
	return &Limits{st: st, clk: clk, holder: holder, opts: opts}
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func (l *Limits) shared() bool { return l.opts.Shared == nil || l.opts.Shared() }

func (l *Limits) lease() time.Duration {
	if l.opts.Lease != nil {
		if d := l.opts.Lease(); d > 0 {
			return d
		}
	}
	return DefaultLease
}

// usable reports whether the database should be asked now.
func (l *Limits) usable() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.clk.Now().Before(l.skipUntil)
}

// callTimeout bounds one database statement.
func (l *Limits) callTimeout() time.Duration {
	if l.opts.CallTimeout > 0 {
		return l.opts.CallTimeout
	}
	return CallTimeout
}

// failed records a statement that failed: the database is left alone for
// RetryAfterDown.
func (l *Limits) failed(err error) {
	l.mu.Lock()
	l.skipUntil = l.clk.Now().Add(RetryAfterDown)
	l.mu.Unlock()
	if l.opts.OnError != nil {
		l.opts.OnError(err)
	}
}

// Slot takes one of the connection's max slots, waiting (polling) until
// deadline. It returns release (call it once, when the request ends) and ok.
// ok false with a nil error: no slot came free before deadline. ok true with
// a nil release: nothing to hold — the limits are per instance, max is 0, or
// the database does not answer (the instance's own limit applies alone).
// err is ctx's error when the caller went away.
func (l *Limits) Slot(ctx context.Context, connectionID string, max int, deadline time.Time) (release func(), ok bool, err error) {
	if max <= 0 || !l.shared() {
		return nil, true, nil
	}
	for {
		if !l.usable() {
			return nil, true, nil
		}
		now := l.clk.Now()
		cctx, cancel := context.WithTimeout(ctx, l.callTimeout())
		sl, got, err := l.st.AcquireSlot(cctx, connectionID, max, l.holder, ms(now), l.lease().Milliseconds())
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil, false, ctx.Err()
			}
			l.failed(err)
			return nil, true, nil
		}
		if got {
			l.held.Add(1)
			var once sync.Once
			return func() { once.Do(func() { l.release(sl) }) }, true, nil
		}
		if !l.clk.Now().Add(Poll).Before(deadline) {
			return nil, false, nil
		}
		t := time.NewTimer(Poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, false, ctx.Err()
		case <-t.C:
		}
	}
}

// SlotPair is Slot for a request under two limits at once (a connection's
// maxConcurrent, maxA slots of a, and a model's cap, maxB slots of b): both
// slots taken in one statement, both or neither, each fenced, renewed and
// released as Slot's (release frees both). full names the limit found full
// at the last try when ok is false (nil error). A limit of 0 is not held:
// the other one is taken alone.
func (l *Limits) SlotPair(ctx context.Context, a string, maxA int, b string, maxB int, deadline time.Time) (
	release func(), ok bool, full string, err error) {
	switch {
	case maxA <= 0 || maxB <= 0:
		name, max := a, maxA
		if maxA <= 0 {
			name, max = b, maxB
		}
		release, ok, err = l.Slot(ctx, name, max, deadline)
		if !ok && err == nil {
			full = name
		}
		return release, ok, full, err
	case !l.shared():
		return nil, true, "", nil
	}
	for {
		if !l.usable() {
			return nil, true, "", nil
		}
		now := l.clk.Now()
		cctx, cancel := context.WithTimeout(ctx, l.callTimeout())
		sa, sb, got, fullName, err := l.st.AcquireSlotPair(cctx, a, maxA, b, maxB, l.holder, ms(now), l.lease().Milliseconds())
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil, false, "", ctx.Err()
			}
			l.failed(err)
			return nil, true, "", nil
		}
		if got {
			l.held.Add(2)
			var once sync.Once
			return func() { once.Do(func() { l.release(sa); l.release(sb) }) }, true, "", nil
		}
		if !l.clk.Now().Add(Poll).Before(deadline) {
			return nil, false, fullName, nil
		}
		t := time.NewTimer(Poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, false, "", ctx.Err()
		case <-t.C:
		}
	}
}

// release frees a slot; a release the database refuses waits in pending.
func (l *Limits) release(sl store.Slot) {
	l.held.Add(-1)
	if l.usable() && l.flushPending() {
		ctx, cancel := context.WithTimeout(context.Background(), l.callTimeout())
		err := l.st.ReleaseSlot(ctx, sl, l.holder)
		cancel()
		if err == nil {
			return
		}
		l.failed(err)
	}
	l.mu.Lock()
	l.pending = append(l.pending, sl)
	l.mu.Unlock()
}

// flushPending applies the queued releases in order and reports whether
// none is left (the database answered).
func (l *Limits) flushPending() bool {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	for {
		l.mu.Lock()
		if len(l.pending) == 0 {
			l.mu.Unlock()
			return true
		}
		sl := l.pending[0]
		l.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), l.callTimeout())
		err := l.st.ReleaseSlot(ctx, sl, l.holder)
		cancel()
		if err != nil {
			l.failed(err)
			return false
		}
		l.mu.Lock()
		l.pending = l.pending[1:]
		l.mu.Unlock()
	}
}

// Pending is how many releases wait for the database.
func (l *Limits) Pending() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pending)
}

// Tick is the renewal step, run every lease/3 by Run: the queued releases
// first (a slot released meanwhile must not be renewed), then the
// instance's live slots are extended by one lease.
func (l *Limits) Tick() {
	if !l.flushPending() {
		return
	}
	if l.held.Load() <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.callTimeout())
	defer cancel()
	now := l.clk.Now()
	if _, err := l.st.RenewSlots(ctx, l.holder, ms(now), l.lease().Milliseconds()); err != nil {
		l.failed(err)
	}
}

// Run renews the instance's slots and applies queued releases until ctx
// ends.
func (l *Limits) Run(ctx context.Context) {
	for {
		t := time.NewTimer(l.lease() / 3)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		l.Tick()
	}
}

// Pace takes the connection's next dispatch turn, one per interval across
// the instances, and waits for it. shared is false when the database does
// not answer or the limits are per instance (the caller paces locally).
// A turn that would come after deadline is not taken: refusedUntil says
// when it would. err is ctx's error (the turn is handed back).
func (l *Limits) Pace(ctx context.Context, connectionID string, interval time.Duration, now, deadline time.Time) (
	waited time.Duration, refusedUntil time.Time, shared bool, err error) {
	if interval <= 0 || !l.shared() || !l.usable() {
		return 0, time.Time{}, false, nil
	}
	iv := interval.Milliseconds()
	cctx, cancel := context.WithTimeout(ctx, l.callTimeout())
	turnMs, ok, err := l.st.ReservePace(cctx, connectionID, iv, ms(now), ms(deadline))
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return 0, time.Time{}, true, ctx.Err()
		}
		l.failed(err)
		return 0, time.Time{}, false, nil
	}
	turn := time.UnixMilli(turnMs)
	if !ok {
		return 0, turn, true, nil
	}
	wait := turn.Sub(l.clk.Now())
	if wait <= 0 {
		return 0, time.Time{}, true, nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return wait, time.Time{}, true, nil
	case <-ctx.Done():
		cctx, cancel := context.WithTimeout(context.Background(), l.callTimeout())
		_ = l.st.CancelPace(cctx, connectionID, turnMs, iv)
		cancel()
		return 0, time.Time{}, true, ctx.Err()
	}
}

// Window is a client key's rate-limit window (budget's: a sliding minute).
const Window = time.Minute

// KeyRPMKey names a client key's requests-per-minute window among the
// shared token windows (store.TakeKeyTokens): apart from its tokens-per-
// minute window, which goes by the key's id.
func KeyRPMKey(keyID string) string { return "rpm|" + keyID }

// KeyRequest counts one request of keyID in its requests-per-minute window
// across the instances: a window of the shared token windows in which every
// admitted request counts 1 for exactly a minute from its admission, and a
// request is admitted while the window counts fewer than rpm — so at most
// rpm requests are admitted in any minute team-wide (one statement,
// ordered by the key's transaction lock). hold names the place for
// UndoKeyRequest (the request was refused by a later check, or not
// served). ok false: the
// window is full, retryAfter is when its first place frees (the same
// statement says). shared false: nothing was counted (limits per instance,
// or the database does not answer: the instance's own window applies
// alone).
func (l *Limits) KeyRequest(keyID string, rpm int) (hold int64, retryAfter time.Duration, ok, shared bool) {
	if rpm <= 0 || !l.shared() || !l.usable() {
		return 0, 0, true, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.callTimeout())
	defer cancel()
	now := l.clk.Now()
	name := KeyRPMKey(keyID)
	got, err := l.st.TakeKeyTokens(ctx, name, int64(rpm), 1, ms(now), Window.Milliseconds())
	if err != nil {
		l.failed(err)
		return 0, 0, true, false
	}
	if got.Hold == 0 {
		return 0, time.UnixMilli(got.Oldest).Sub(now), false, true
	}
	return got.Hold, 0, true, true
}

// UndoKeyRequest gives a KeyRequest place back (hold 0: none), free at once
// for the key's next request on any instance.
func (l *Limits) UndoKeyRequest(keyID string, hold int64) {
	l.SettleKeyTokens(KeyRPMKey(keyID), hold, 0)
}

// KeyTokens holds tokens (the request's estimate) of keyID's
// tokens-per-minute window across the instances, if the window's tokens —
// every instance's requests in flight and answers of the last minute — are
// below tpm (the request that crosses the limit is admitted, as on one
// instance). hold names the hold for SettleKeyTokens; a hold of an instance
// that dies lapses at the end of its minute. ok false: the window is full,
// retryAfter is when its oldest tokens leave it. shared as KeyRequest's.
func (l *Limits) KeyTokens(keyID string, tpm, tokens int64) (hold int64, retryAfter time.Duration, ok, shared bool) {
	if tpm <= 0 || !l.shared() || !l.usable() {
		return 0, 0, true, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.callTimeout())
	defer cancel()
	now := l.clk.Now()
	got, err := l.st.TakeKeyTokens(ctx, keyID, tpm, tokens, ms(now), Window.Milliseconds())
	if err != nil {
		l.failed(err)
		return 0, 0, true, false
	}
	if got.Hold == 0 {
		return 0, time.UnixMilli(got.Oldest).Sub(now), false, true
	}
	return got.Hold, 0, true, true
}

// KeyRates is KeyTokens and KeyRequest at once for a key with both limits:
// one statement instead of two, the request admitted in both windows or in
// neither. tokenHold is the TPM hold (SettleKeyTokens), requestHold the RPM
// place (UndoKeyRequest). tpmFull or rpmFull: refused by that window (the
// TPM window is asked first), retryAfter when it frees. shared as
// KeyRequest's.
func (l *Limits) KeyRates(keyID string, rpm int, tpm, tokens int64) (tokenHold, requestHold int64, retryAfter time.Duration,
	tpmFull, rpmFull, shared bool) {
	if rpm <= 0 || tpm <= 0 || !l.shared() || !l.usable() {
		return 0, 0, 0, false, false, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.callTimeout())
	defer cancel()
	now := l.clk.Now()
	got, err := l.st.TakeKeyRates(ctx, keyID, KeyRPMKey(keyID), int64(rpm), tpm, tokens, ms(now), Window.Milliseconds())
	if err != nil {
		l.failed(err)
		return 0, 0, 0, false, false, false
	}
	switch {
	case got.TPM.Used >= tpm:
		return 0, 0, time.UnixMilli(got.TPM.Oldest).Sub(now), true, false, true
	case got.RPM.Used >= int64(rpm):
		return 0, 0, time.UnixMilli(got.RPM.Oldest).Sub(now), false, true, true
	}
	return got.TPM.Hold, got.RPM.Hold, 0, false, false, true
}

// SettleKeyTokens replaces a KeyTokens hold with the tokens the answer used
// (0: not served, the hold is dropped), counted for a minute from now.
func (l *Limits) SettleKeyTokens(keyID string, hold, tokens int64) {
	if hold == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.callTimeout())
	defer cancel()
	if err := l.st.SettleKeyTokens(ctx, keyID, hold, tokens, ms(l.clk.Now()), Window.Milliseconds()); err != nil {
		l.failed(err) // the hold lapses with its minute
	}
}

// Sweep bounds: how often a server sweeps (Sweep: the keys' expired window
// rows and the deleted connections' limits), how long after leaving its
// window a key's row is deleted, and each sweep statement's time bound.
const (
	SweepEvery   = time.Minute
	SweepGrace   = Window
	SweepTimeout = 10 * time.Second
)

// SweepKeyRates deletes the keys' window rows that left their window at
// least SweepGrace ago (the injected clock's now): a key's own statements
// delete its expired rows only when it is used again, so a deleted or idle
// key kept up to its limit's rows. The grace leaves alone what another
// instance whose clock is behind this one's still counts, so the sweep never
// changes a window's count. It is skipped while the database is known not to
// answer, and its failure does not set the request path's limits apart
// (the next sweep catches up).
func (l *Limits) SweepKeyRates() error {
	if !l.usable() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), SweepTimeout)
	defer cancel()
	_, err := l.st.DeleteExpiredKeyRates(ctx, ms(l.clk.Now().Add(-SweepGrace)))
	return err
}

// SweepOrphans deletes the shared limits' rows (slots, queue tickets, model
// caps, pacing turns) of connections that no longer exist
// (store.DeleteOrphanLimits): a deletion removes its connection's rows, but
// an instance that had not yet heard of it may take one after. Skipped
// while the database is known not to answer.
func (l *Limits) SweepOrphans() error {
	if !l.usable() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), SweepTimeout)
	defer cancel()
	_, err := l.st.DeleteOrphanLimits(ctx)
	return err
}

// Sweep is a team server's periodic sweep (every SweepEvery): the keys'
// expired window rows (SweepKeyRates), then the deleted connections' limits
// (SweepOrphans); one failing does not keep the other from running.
func (l *Limits) Sweep() error {
	return errors.Join(l.SweepKeyRates(), l.SweepOrphans())
}
