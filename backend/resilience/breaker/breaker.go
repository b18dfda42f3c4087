// Package breaker is the provider-wide circuit breaker (CLOSED → DEGRADED → OPEN →
// HALF_OPEN) and the optional per-provider failure-window gate. Every decision is a
// function of the injected clock's now; recovery is lazy (on reads), with no goroutines
// or timers. The caller decides what counts as a failure (408/500/502/503/504/transport).
package breaker

import (
	"sync"
	"sync/atomic"
	"time"

	"omniroute/backend/clock"
)

// State is the breaker state as persisted and shown on dashboards.
type State string

// Breaker states.
const (
	Closed   State = "CLOSED"    // normal traffic
	Degraded State = "DEGRADED"  // traffic flows, elevated failures are being tracked
	Open     State = "OPEN"      // provider blocked until the hold expires
	HalfOpen State = "HALF_OPEN" // hold expired: exactly one probe at a time
)

// valid reports whether s is one of the four known states.
func (s State) valid() bool {
	switch s {
	case Closed, Degraded, Open, HalfOpen:
		return true
	}
	return false
}

// Snapshot is the breaker's state at one read; it is what gets persisted and shown.
type Snapshot struct {
	Provider             string
	State                State
	Failures             int // counted failures in the current CLOSED/DEGRADED period
	ConsecutiveSuccesses int // successes in DEGRADED towards SuccessesToClose
	OpenCycles           int // consecutive OPEN cycles (1 on first open, +1 per failed probe)
	LastFailureAt        time.Time
	OpenedAt             time.Time // start of the current OPEN hold (zero when CLOSED)
	StateChangedAt       time.Time
	RetryAfter           time.Duration // time left in OPEN at the read; 0 in any other state
	// LastFailureKind is the kind of the last counted failure ("" unknown):
	// it picks the OPEN hold (Profile.OpenByKind). Not persisted: a restored
	// breaker holds for ResetTimeout.
	LastFailureKind FailureKind
	// Cause is what produced a change notification (onChange), At when; zero
	// on reads.
	Cause Cause
	At    time.Time
}

// Cause says what moved a breaker: a change notification's origin.
type Cause uint8

// Causes of a change notification.
const (
	// CauseRecovery: lazy recovery on a read (OPEN → HALF_OPEN after the hold,
	// DEGRADED → CLOSED after the quiet window): a function of the state and
	// the time, which any holder of the state derives alike.
	CauseRecovery Cause = iota
	// CauseFailure: a counted failure.
	CauseFailure
	// CauseSuccess: a counted success.
	CauseSuccess
	// CauseReset: the operator's reset.
	CauseReset
	// CauseTestPassed: a valid connection test.
	CauseTestPassed
)

// Breaker is one provider's circuit breaker. It is safe for concurrent use.
type Breaker struct {
	provider string
	clk      clock.Clock
	onChange func(Snapshot)

	mu        sync.Mutex
	profile   Profile
	state     State
	failures  int
	successes int
	cycles    int
	lastFail  time.Time
	lastKind  FailureKind // kind of the last counted failure ("" unknown)
	openedAt  time.Time
	changedAt time.Time
	gen       uint64 // bumped whenever outstanding permits must stop counting
	probing   bool   // a HALF_OPEN probe permit is outstanding

	pending    []Snapshot // change notifications not yet delivered, in order
	delivering bool       // a goroutine is draining pending
}

// New returns a CLOSED breaker for provider. onChange (may be nil) is called outside
// the breaker's lock, in order, after every state transition or failure-count change,
// so a store can write through; it may be invoked from whichever goroutine is
// delivering, and it may call back into the breaker.
func New(provider string, p Profile, clk clock.Clock, onChange func(Snapshot)) *Breaker {
	if clk == nil {
		clk = clock.Real{}
	}
	return &Breaker{
		provider: provider,
		clk:      clk,
		onChange: onChange,
		profile:  p.Normalize(),
		state:    Closed,
	}
}

// Provider returns the provider id this breaker guards.
func (b *Breaker) Provider() string { return b.provider }

// Permit is the right to send one request, obtained from Allow. Exactly one of
// Success, Failure or Release should be called; only the first call counts, and a
// permit from before a state change (Reset, open, close) changes nothing.
// The zero Permit is inert.
type Permit struct{ p *permit }

// Slot is room for one permit's record inside a caller's own per-request
// state: AllowIn fills it instead of allocating. A Slot must not be reused
// while a Permit from it is outstanding, nor copied after AllowIn.
type Slot struct{ rec permit }

// permit is the shared record behind a Permit, so copies report at most once.
type permit struct {
	b     *Breaker
	gen   uint64
	probe bool
	done  atomic.Bool
}

// outcome is what a permit reports.
type outcome int

const (
	outcomeSuccess outcome = iota
	outcomeFailure
	outcomeRelease
)

// Success reports that the request succeeded (closes a HALF_OPEN breaker, resets
// the CLOSED failure count, counts towards SuccessesToClose in DEGRADED).
func (p Permit) Success() { p.report(outcomeSuccess, "") }

// Failure reports a provider-level failure (only 408/500/502/503/504/transport
// should be reported; the caller decides) of unknown kind: an OPEN it causes
// holds for ResetTimeout.
func (p Permit) Failure() { p.report(outcomeFailure, "") }

// FailureOf reports a provider-level failure of kind k: an OPEN it causes
// holds for the profile's OpenByKind entry for k (ResetTimeout when unset).
func (p Permit) FailureOf(k FailureKind) { p.report(outcomeFailure, k) }

// Release gives a HALF_OPEN probe slot back without an outcome: for panics, client
// cancellation, or failures that must not count (e.g. a 429). Safe to defer.
func (p Permit) Release() { p.report(outcomeRelease, "") }

// Probe reports whether this permit is the single HALF_OPEN probe.
func (p Permit) Probe() bool { return p.p != nil && p.p.probe }

// report delivers the permit's first outcome (of kind k for a failure) to its breaker.
func (p Permit) report(o outcome, k FailureKind) {
	if p.p == nil || !p.p.done.CompareAndSwap(false, true) {
		return
	}
	p.p.b.settle(p.p, o, k)
}

// settle applies a permit outcome, fenced by generation.
func (b *Breaker) settle(pm *permit, o outcome, k FailureKind) {
	now := b.clk.Now()
	b.mu.Lock()
	before := b.mark()
	b.refresh(now)
	cause := CauseRecovery
	if pm.gen == b.gen {
		if pm.probe {
			b.probing = false
		}
		switch o {
		case outcomeSuccess:
			b.onSuccess(now)
			cause = CauseSuccess
		case outcomeFailure:
			b.onFailure(now, k)
			cause = CauseFailure
		}
	}
	b.queueIfChanged(before, now, cause)
	b.mu.Unlock()
	b.flush()
}

// Allow asks to send one request. CLOSED and DEGRADED always admit; OPEN refuses
// until its hold expires, then lazily becomes HALF_OPEN, which admits exactly one
// probe at a time until that probe reports.
func (b *Breaker) Allow() (Permit, bool) {
	return b.AllowIn(nil)
}

// AllowIn is Allow keeping the permit's record in slot (a new one when slot
// is nil).
func (b *Breaker) AllowIn(slot *Slot) (Permit, bool) {
	if slot == nil {
		slot = new(Slot)
	}
	now := b.clk.Now()
	b.mu.Lock()
	before := b.mark()
	b.refresh(now)
	var p Permit
	ok := false
	switch b.state {
	case Closed, Degraded:
		slot.rec = permit{b: b, gen: b.gen}
		p, ok = Permit{&slot.rec}, true
	case HalfOpen:
		if !b.probing {
			b.probing = true
			slot.rec = permit{b: b, gen: b.gen, probe: true}
			p, ok = Permit{&slot.rec}, true
		}
	}
	b.queueIfChanged(before, now, CauseRecovery)
	b.mu.Unlock()
	b.flush()
	return p, ok
}

// RecordFailure counts one provider-level failure of unknown kind observed
// without a permit. In HALF_OPEN it re-opens the breaker; in OPEN it is
// ignored (it never extends a hold).
func (b *Breaker) RecordFailure() { b.RecordFailureOf("") }

// RecordFailureOf is RecordFailure for a failure of kind k.
func (b *Breaker) RecordFailureOf(k FailureKind) {
	now := b.clk.Now()
	b.mu.Lock()
	before := b.mark()
	b.refresh(now)
	b.onFailure(now, k)
	b.queueIfChanged(before, now, CauseFailure)
	b.mu.Unlock()
	b.flush()
}

// Status returns the current snapshot, applying lazy recovery first.
func (b *Breaker) Status() Snapshot {
	now := b.clk.Now()
	b.mu.Lock()
	before := b.mark()
	b.refresh(now)
	s := b.snapshot(now)
	b.queueIfChanged(before, now, CauseRecovery)
	b.mu.Unlock()
	b.flush()
	return s
}

// State returns the current state after lazy recovery (shorthand for Status().State).
func (b *Breaker) State() State { return b.Status().State }

// RetryAfter returns the time left in OPEN (0 in any other state), after lazy recovery.
func (b *Breaker) RetryAfter() time.Duration { return b.Status().RetryAfter }

// Reset forces CLOSED with zero counters (operator action) and invalidates every
// outstanding permit.
func (b *Breaker) Reset() { b.reset() }

// reset is Reset returning the state the breaker was in (after lazy recovery).
func (b *Breaker) reset() State {
	now := b.clk.Now()
	b.mu.Lock()
	before := b.mark()
	b.refresh(now)
	prev := b.state
	if prev != Closed {
		b.changedAt = now
	}
	b.state = Closed
	b.failures, b.successes, b.cycles = 0, 0, 0
	b.lastFail, b.openedAt = time.Time{}, time.Time{}
	b.lastKind = ""
	b.gen++
	b.probing = false
	b.queueIfChanged(before, now, CauseReset)
	b.mu.Unlock()
	b.flush()
	return prev
}

// Restore loads a persisted snapshot at start-up (no onChange call). An OPEN whose
// hold expired while the process was down becomes HALF_OPEN at the next read (a
// DEGRADED past its quiet window decays likewise); an unknown state loads as CLOSED.
// Provider and RetryAfter in s are ignored; outstanding permits are invalidated.
//
// The times an OPEN hold and a DEGRADED quiet window run from (OpenedAt,
// LastFailureAt) are clamped to now: a snapshot written while the clock was
// ahead (a VM resumed with a wrong clock, RTC drift, an NTP step back) would
// otherwise hold the provider OPEN until that future instant plus the hold.
// Clamped, a loaded OPEN ends at most one hold of its cycle (ResetTimeout ×
// the backoff cap) from now, the longest a hold can be.
func (b *Breaker) Restore(s Snapshot) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clk.Now()
	if s.OpenedAt.After(now) {
		s.OpenedAt = now
	}
	if s.LastFailureAt.After(now) {
		s.LastFailureAt = now
	}
	st := s.State
	if !st.valid() {
		st = Closed
	}
	b.state = st
	b.failures = max(s.Failures, 0)
	b.successes = max(s.ConsecutiveSuccesses, 0)
	b.cycles = max(s.OpenCycles, 0)
	switch st {
	case Open, HalfOpen:
		b.cycles = max(b.cycles, 1)
	default:
		b.cycles = 0
	}
	b.lastFail = s.LastFailureAt
	b.lastKind = s.LastFailureKind
	b.openedAt = s.OpenedAt
	b.changedAt = s.StateChangedAt
	b.gen++
	b.probing = false
}

// SetProfile replaces the tuning; it applies from the next decision (an OPEN hold
// is recomputed from the new ResetTimeout at the next read).
func (b *Breaker) SetProfile(p Profile) {
	b.mu.Lock()
	b.profile = p.Normalize()
	b.mu.Unlock()
}

// Profile returns the normalized tuning in use.
func (b *Breaker) Profile() Profile {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.profile
}

// ConnectionTestPassed records a valid connection test: DEGRADED returns to CLOSED
// and a CLOSED failure count is cleared; OPEN and HALF_OPEN are left to the hold and probe.
func (b *Breaker) ConnectionTestPassed() {
	now := b.clk.Now()
	b.mu.Lock()
	before := b.mark()
	b.refresh(now)
	b.testPassed(now)
	b.queueIfChanged(before, now, CauseTestPassed)
	b.mu.Unlock()
	b.flush()
}

// Fold returns the state a breaker in state s reaches under profile p after
// one outcome of cause c (CauseFailure, CauseSuccess or CauseTestPassed; any
// other cause only applies lazy recovery) at at. It is how a database shared
// by several gateway instances (a team server) counts every instance's
// outcomes on the provider's one row, so the thresholds hold for the team.
// s.Provider is kept; the result's Cause and At are c and at. A failure's
// kind is s.LastFailureKind (the caller sets it from the outcome it folds).
func Fold(s Snapshot, p Profile, c Cause, at time.Time) Snapshot {
	b := New(s.Provider, p, nil, nil)
	b.Restore(s)
	b.refresh(at)
	switch c {
	case CauseFailure:
		b.onFailure(at, s.LastFailureKind)
	case CauseSuccess:
		b.onSuccess(at)
	case CauseTestPassed:
		b.testPassed(at)
	}
	out := b.snapshot(at)
	out.Cause, out.At = c, at
	return out
}

// ---- internals (all called with b.mu held) ----

// testPassed applies a valid connection test: DEGRADED closes, a CLOSED
// failure count is cleared.
func (b *Breaker) testPassed(now time.Time) {
	switch b.state {
	case Degraded:
		b.toClosed(now)
	case Closed:
		b.failures, b.successes = 0, 0
	}
}

// refresh applies lazy recovery at now: an expired OPEN becomes HALF_OPEN and a
// DEGRADED breaker quiet for the longest OPEN hold decays to CLOSED.
func (b *Breaker) refresh(now time.Time) {
	switch b.state {
	case Open:
		deadline := b.openedAt.Add(b.profile.openHold(b.cycles, b.lastKind))
		if !now.Before(deadline) {
			b.state = HalfOpen
			b.changedAt = deadline
			b.gen++
			b.probing = false
		}
	case Degraded:
		quietEnd := b.lastFail.Add(b.profile.quietWindow(b.lastKind))
		if !now.Before(quietEnd) {
			b.state = Closed
			b.failures, b.successes = 0, 0
			b.changedAt = quietEnd
		}
	}
}

// onSuccess applies one counted success at now.
func (b *Breaker) onSuccess(now time.Time) {
	switch b.state {
	case Closed:
		b.failures, b.successes = 0, 0
	case Degraded:
		b.successes++
		if b.successes >= b.profile.SuccessesToClose {
			b.toClosed(now)
		}
	case HalfOpen:
		b.toClosed(now)
		b.cycles = 0
		b.openedAt = time.Time{}
		b.gen++
		b.probing = false
	}
}

// onFailure applies one counted failure of kind k at now.
func (b *Breaker) onFailure(now time.Time, k FailureKind) {
	switch b.state {
	case Open:
		return
	case HalfOpen:
		b.failures++
		b.lastFail, b.lastKind = now, k
		b.toOpen(now, b.cycles+1)
	case Closed, Degraded:
		b.failures++
		b.successes = 0
		b.lastFail, b.lastKind = now, k
		switch {
		case b.failures >= b.profile.FailureThreshold:
			b.toOpen(now, 1)
		case b.state == Closed && b.failures >= b.profile.DegradationThreshold:
			b.state = Degraded
			b.changedAt = now
		}
	}
}

// toOpen enters OPEN for the given cycle, fencing every outstanding permit.
func (b *Breaker) toOpen(now time.Time, cycles int) {
	b.state = Open
	b.cycles = cycles
	b.successes = 0
	b.openedAt = now
	b.changedAt = now
	b.gen++
	b.probing = false
}

// toClosed enters CLOSED with zero counters.
func (b *Breaker) toClosed(now time.Time) {
	if b.state != Closed {
		b.changedAt = now
	}
	b.state = Closed
	b.failures, b.successes = 0, 0
}

// snapshot renders the current state as of now.
func (b *Breaker) snapshot(now time.Time) Snapshot {
	s := Snapshot{
		Provider:             b.provider,
		State:                b.state,
		Failures:             b.failures,
		ConsecutiveSuccesses: b.successes,
		OpenCycles:           b.cycles,
		LastFailureAt:        b.lastFail,
		OpenedAt:             b.openedAt,
		StateChangedAt:       b.changedAt,
		LastFailureKind:      b.lastKind,
	}
	if b.state == Open {
		if left := b.openedAt.Add(b.profile.openHold(b.cycles, b.lastKind)).Sub(now); left > 0 {
			s.RetryAfter = left
		}
	}
	return s
}

// changeMark is the part of the state whose change triggers onChange.
type changeMark struct {
	state    State
	failures int
	cycles   int
}

// mark captures the notification-relevant state.
func (b *Breaker) mark() changeMark {
	return changeMark{b.state, b.failures, b.cycles}
}

// queueIfChanged queues a snapshot for onChange when the state or counts moved.
func (b *Breaker) queueIfChanged(before changeMark, now time.Time, c Cause) {
	if b.onChange == nil || b.mark() == before {
		return
	}
	s := b.snapshot(now)
	s.Cause, s.At = c, now
	b.pending = append(b.pending, s)
}

// flush delivers queued snapshots outside the lock, in order, one deliverer at a
// time; re-entrant changes made from inside onChange are queued and delivered by
// the same loop instead of deadlocking.
func (b *Breaker) flush() {
	if b.onChange == nil {
		return
	}
	b.mu.Lock()
	if b.delivering || len(b.pending) == 0 {
		b.mu.Unlock()
		return
	}
	b.delivering = true
	b.mu.Unlock()
	finished := false
	defer func() {
		if !finished { // onChange panicked: let the next change deliver
			b.mu.Lock()
			b.delivering = false
			b.mu.Unlock()
		}
	}()
	for {
		b.mu.Lock()
		if len(b.pending) == 0 {
			b.pending = nil
			b.delivering = false
			b.mu.Unlock()
			finished = true
			return
		}
		s := b.pending[0]
		b.pending = b.pending[1:]
		b.mu.Unlock()
		b.onChange(s)
	}
}
