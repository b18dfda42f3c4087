// Package lockout keeps per-connection model lockouts in memory: when one model
// (or its quota family) of a connection fails, only that model is taken out of
// routing for a cooldown, instead of the whole connection. On the desktop the
// state is lost on restart by design; only the Settings are persisted (by the
// caller). On a team server the caller shares every lock and clear through
// the database and feeds other instances' back with Adopt.
//
// Every decision is a function of the injected clock's now: there are no timers or
// goroutines. A lock is active while now < ExpiresAt — at exactly ExpiresAt the
// model is routable again. Expired entries are treated as absent by every reader
// and are physically removed lazily (on writes and on List) once their escalation
// window has also closed.
package lockout

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"omniroute/backend/clock"
)

// MaxLock is the longest any lock may last, whatever the settings or hints say
// (the guide's 24 h cap for body-declared retries such as Gemini's "86399s").
const MaxLock = 24 * time.Hour

// longRetryStatus is the Status recorded by LockFor: body-declared retries come
// with a 429.
const longRetryStatus = 429

// Settings tunes model lockouts (the "Model Lockout" settings card).
type Settings struct {
	// Enabled is the master switch; lockouts are off by default. The Table does not
	// consult it: callers gate with ShouldLock.
	Enabled bool
	// ErrorCodes are the upstream statuses that count as a model-scoped failure.
	ErrorCodes []int
	// BaseCooldown is the first failure's lock duration.
	BaseCooldown time.Duration
	// MaxCooldown caps the escalated cooldown and upstream hints, and is the length of
	// the escalation window that follows each lock's expiry.
	MaxCooldown time.Duration
	// MaxBackoffSteps caps the exponent: cooldown = Base × 2^min(failures−1, steps).
	MaxBackoffSteps int
	// UseExponentialBackoff makes repeated failures escalate; off means every lock
	// lasts BaseCooldown (or the hint).
	UseExponentialBackoff bool
}

// Defaults from DEFAULT_MODEL_LOCKOUT_SETTINGS.
const (
	// DefaultBaseCooldown is the first failure's lock (baseCooldownMs 120_000).
	DefaultBaseCooldown = 120 * time.Second
	// DefaultMaxCooldown caps escalation (maxCooldownMs 1_800_000).
	DefaultMaxCooldown = 30 * time.Minute
	// DefaultMaxBackoffSteps caps the exponent (maxBackoffSteps 10).
	DefaultMaxBackoffSteps = 10
)

// DefaultSettings returns the guide's defaults: disabled, error codes
// [403, 404, 429, 502, 503, 504], 120 s base, 30 min max, 10 backoff steps,
// exponential backoff on.
func DefaultSettings() Settings {
	return Settings{
		Enabled:               false,
		ErrorCodes:            []int{403, 404, 429, 502, 503, 504},
		BaseCooldown:          DefaultBaseCooldown,
		MaxCooldown:           DefaultMaxCooldown,
		MaxBackoffSteps:       DefaultMaxBackoffSteps,
		UseExponentialBackoff: true,
	}
}

// Normalize clamps unusable values: a non-positive BaseCooldown becomes
// DefaultBaseCooldown; BaseCooldown and MaxCooldown are capped at MaxLock;
// MaxCooldown is raised to at least BaseCooldown; a negative MaxBackoffSteps
// becomes 0. ErrorCodes and the switches are left alone. RecordFailure normalizes
// the settings it is given.
func (s Settings) Normalize() Settings {
	if s.BaseCooldown <= 0 {
		s.BaseCooldown = DefaultBaseCooldown
	}
	s.BaseCooldown = min(s.BaseCooldown, MaxLock)
	s.MaxCooldown = min(max(s.MaxCooldown, s.BaseCooldown), MaxLock)
	s.MaxBackoffSteps = max(s.MaxBackoffSteps, 0)
	return s
}

// Counts reports whether an upstream status is one of ErrorCodes. Status 0 (a
// transport failure) counts when 502 is listed, because the gateway reports a
// transport failure as a synthesised 502.
func (s Settings) Counts(status int) bool {
	if status == 0 {
		status = 502
	}
	return slices.Contains(s.ErrorCodes, status)
}

// ShouldLock is the caller's gate before RecordFailure: Enabled && Counts(status).
func (s Settings) ShouldLock(status int) bool {
	return s.Enabled && s.Counts(status)
}

// Entry is one model lockout, as listed to operators.
type Entry struct {
	Provider     string `json:"provider"`
	ConnectionID string `json:"connectionId"`
	// Model is the model whose failure wrote the entry (for a quota-family entry,
	// the most recent failing member of the family).
	Model string `json:"model"`
	Scope Scope  `json:"scope"`
	// Key is the lock key: "provider:conn:exact:model", "provider:conn:model" or
	// "provider:conn:family:<family>".
	Key    string `json:"key"`
	Reason string `json:"reason"`
	// Status is the upstream status of the latest failure (0 = transport).
	Status int `json:"status"`
	// FailureCount is the escalation level: consecutive failures inside the
	// escalation window, halved by each success (Decay).
	FailureCount int `json:"failureCount"`
	// LockedAt is when the entry was last written by a failure.
	LockedAt time.Time `json:"lockedAt"`
	// ExpiresAt is when the model becomes routable again (unlocked at exactly this
	// instant).
	ExpiresAt time.Time `json:"expiresAt"`
}

// Remaining returns how long the lock still holds at now, 0 once expired.
func (e Entry) Remaining(now time.Time) time.Duration {
	if !now.Before(e.ExpiresAt) {
		return 0
	}
	return e.ExpiresAt.Sub(now)
}

// Active reports whether the lock holds at now (now < ExpiresAt).
func (e Entry) Active(now time.Time) bool { return now.Before(e.ExpiresAt) }

// key identifies an entry without string-concatenation ambiguity (provider or
// connection ids may themselves contain ':').
type key struct {
	provider, conn string
	scope          Scope
	name           string // the model, or the quota family for ScopeQuotaFamily
}

// String renders the guide's key format.
func (k key) String() string {
	switch k.scope {
	case ScopeExact:
		return fmt.Sprintf("%s:%s:exact:%s", k.provider, k.conn, k.name)
	case ScopeQuotaFamily:
		return fmt.Sprintf("%s:%s:family:%s", k.provider, k.conn, k.name)
	}
	return fmt.Sprintf("%s:%s:%s", k.provider, k.conn, k.name)
}

// keyFor returns the key a lock of scope on this tuple is stored under.
func (t *Table) keyFor(provider, conn, model string, scope Scope) key {
	name := model
	if scope == ScopeQuotaFamily {
		name = t.Family(provider, model)
	}
	return key{provider: provider, conn: conn, scope: scope, name: name}
}

// keysCovering returns the keys whose lock would block model on this connection,
// in the order exact, model, quota family.
func (t *Table) keysCovering(provider, conn, model string) [3]key {
	return [3]key{
		t.keyFor(provider, conn, model, ScopeExact),
		t.keyFor(provider, conn, model, ScopeModel),
		t.keyFor(provider, conn, model, ScopeQuotaFamily),
	}
}

// record is a stored entry plus the end of its escalation window, after which the
// entry is dead and may be swept.
type record struct {
	Entry
	windowEnd time.Time
}

// Table holds the active model lockouts. It is safe for concurrent use; create it
// with New.
type Table struct {
	clk      clock.Clock
	families Families

	mu      sync.RWMutex
	entries map[key]record
	// nextSweep is at or before the earliest windowEnd in entries (zero when
	// empty): writes only scan the map once now reaches it.
	nextSweep time.Time
}

// New returns an empty table reading time from clk (nil means the wall
// clock) in which every model is its own quota family.
func New(clk clock.Clock) *Table { return NewFamilies(clk, nil) }

// NewFamilies returns an empty table reading time from clk (nil means the
// wall clock) whose ScopeQuotaFamily locks cover the families names (nil:
// every model is its own family).
func NewFamilies(clk clock.Clock, families Families) *Table {
	if clk == nil {
		clk = clock.Real{}
	}
	return &Table{clk: clk, families: families, entries: map[key]record{}}
}

// RecordFailure records one failure of model on the connection and returns the
// resulting entry. The key is chosen by ResolveScope(status, explicit).
//
// Escalation: when the key's previous entry has expired but is still inside its
// escalation window (now < its ExpiresAt + the MaxCooldown in force when it was
// written, i.e. failures that keep coming after the lock), FailureCount is
// incremented; otherwise it restarts at 1. A failure while the lock is still
// active keeps the count (anti-thundering-herd, as for connection cooldowns: a
// burst of concurrent failures escalates once).
//
// Cooldown: BaseCooldown × 2^min(FailureCount−1, MaxBackoffSteps) with
// UseExponentialBackoff, else BaseCooldown; capped at MaxCooldown. A positive hint
// (upstream Retry-After), itself capped at MaxCooldown (and so at MaxLock), is a
// floor. A still-active lock is never shortened: ExpiresAt is the later of the old
// one and now + cooldown.
//
// The table does not consult s.Enabled or s.ErrorCodes: gate with s.ShouldLock.
// s is normalized first.
func (t *Table) RecordFailure(provider, connectionID, model string, status int, reason string, explicit Scope, s Settings, hint time.Duration) Entry {
	s = s.Normalize()
	now := t.clk.Now()
	scope := ResolveScope(status, explicit)
	k := t.keyFor(provider, connectionID, model, scope)

	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweepLocked(now)

	failures := 1
	prev, had := t.entries[k]
	herd := had && prev.Active(now)
	switch {
	case herd:
		// Anti-herd: a failure while the lock holds comes from a request that was
		// already in flight when it was written; a burst escalates once and does
		// not move the expiry (only a later upstream hint can).
		failures = max(prev.FailureCount, 1)
	case had && now.Before(prev.windowEnd):
		failures = prev.FailureCount + 1
	}

	cd := cooldownFor(failures, s)
	if herd {
		cd = 0
	}
	if hint > 0 {
		cd = max(cd, min(hint, s.MaxCooldown))
	}
	expires := now.Add(cd)
	if had && prev.ExpiresAt.After(expires) {
		expires = prev.ExpiresAt // never shorten an active lock
	}

	e := Entry{
		Provider: provider, ConnectionID: connectionID, Model: model,
		Scope: scope, Key: k.String(), Reason: reason, Status: status,
		FailureCount: failures, LockedAt: now, ExpiresAt: expires,
	}
	t.putLocked(k, record{Entry: e, windowEnd: expires.Add(s.MaxCooldown)})
	return e
}

// cooldownFor is the ladder for the failure count (s normalized).
func cooldownFor(failures int, s Settings) time.Duration {
	cd := s.BaseCooldown
	if s.UseExponentialBackoff {
		steps := min(failures-1, s.MaxBackoffSteps)
		for i := 0; i < steps && cd < s.MaxCooldown; i++ {
			cd *= 2
		}
	}
	return min(cd, s.MaxCooldown)
}

// LockFor is the long body-declared retry (Gemini RetryInfo "86399s"): it locks the
// exact model on the connection for d, capped at MaxLock (24 h), without
// escalation. A new entry has FailureCount 1; an entry already in its escalation
// window keeps its count (not incremented) and an active lock is never shortened.
// Status is recorded as 429. The lock leaves no escalation window after it expires.
// A non-positive d locks nothing and returns an entry that is already expired.
func (t *Table) LockFor(provider, connectionID, model string, d time.Duration, reason string) Entry {
	now := t.clk.Now()
	k := t.keyFor(provider, connectionID, model, ScopeExact)
	e := Entry{
		Provider: provider, ConnectionID: connectionID, Model: model,
		Scope: ScopeExact, Key: k.String(), Reason: reason, Status: longRetryStatus,
		FailureCount: 1, LockedAt: now, ExpiresAt: now,
	}
	if d <= 0 {
		return e
	}
	e.ExpiresAt = now.Add(min(d, MaxLock))

	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweepLocked(now)

	windowEnd := e.ExpiresAt
	if prev, had := t.entries[k]; had && now.Before(prev.windowEnd) {
		e.FailureCount = max(prev.FailureCount, 1)
		if prev.ExpiresAt.After(e.ExpiresAt) {
			e.ExpiresAt = prev.ExpiresAt
		}
		if prev.windowEnd.After(windowEnd) {
			windowEnd = prev.windowEnd
		}
	}
	t.putLocked(k, record{Entry: e, windowEnd: windowEnd})
	return e
}

// Locked reports whether a request for model on this connection is locked by an
// exact, model or quota-family entry, returning the active entry that expires last
// (ties go to the narrower scope). Expired entries are treated as absent.
func (t *Table) Locked(provider, connectionID, model string) (Entry, bool) {
	t.mu.RLock()
	empty := len(t.entries) == 0
	t.mu.RUnlock()
	if empty { // the common case, checked for every candidate of every request
		return Entry{}, false
	}
	return t.locked(provider, connectionID, model)
}

// locked is Locked over a table that holds entries. Out of line, so the
// common check keeps a small stack frame.
//
//go:noinline
func (t *Table) locked(provider, connectionID, model string) (Entry, bool) {
	now := t.clk.Now()
	keys := t.keysCovering(provider, connectionID, model)

	t.mu.RLock()
	defer t.mu.RUnlock()
	var best Entry
	found := false
	for _, k := range keys {
		r, ok := t.entries[k]
		if !ok || !r.Active(now) {
			continue
		}
		if !found || r.ExpiresAt.After(best.ExpiresAt) {
			best, found = r.Entry, true
		}
	}
	return best, found
}

// Decay is the success path (decayModelFailureCount): every entry covering this
// provider/connection/model (exact, model and quota family) has its FailureCount
// halved (floor(n/2)); an entry reaching 0 is deleted before its timer, unlocking
// the model. Entries whose lock has expired but whose escalation window is still
// open are decayed the same way, so a recovered model stops escalating. Returns how
// many active locks were removed.
func (t *Table) Decay(provider, connectionID, model string) int {
	n, _ := t.DecayEntries(provider, connectionID, model)
	return n
}

// DecayEntries is Decay, also returning the entries it deleted (active or
// not), so a caller sharing the table with other instances can tell them.
func (t *Table) DecayEntries(provider, connectionID, model string) (int, []Entry) {
	t.mu.RLock()
	empty := len(t.entries) == 0
	t.mu.RUnlock()
	if empty { // every success decays: nothing to do, no clock read, no keys
		return 0, nil
	}
	return t.decayEntries(provider, connectionID, model)
}

// decayEntries is DecayEntries over a table that holds entries (a sweep of
// an empty map would only reset nextSweep, which putLocked keeps valid).
func (t *Table) decayEntries(provider, connectionID, model string) (int, []Entry) {
	now := t.clk.Now()
	keys := t.keysCovering(provider, connectionID, model)

	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweepLocked(now)
	removed := 0
	var gone []Entry
	for _, k := range keys {
		r, ok := t.entries[k]
		if !ok {
			continue
		}
		r.FailureCount /= 2
		if r.FailureCount > 0 {
			t.entries[k] = r
			continue
		}
		delete(t.entries, k)
		gone = append(gone, r.Entry)
		if r.Active(now) {
			removed++
		}
	}
	return removed, gone
}

// List returns the active entries sorted by ExpiresAt, then Key. It also sweeps
// the map: entries whose lock and escalation window have both passed are dropped
// (expired entries still inside their escalation window stay, unlisted, so that
// escalation does not depend on whether anyone listed).
func (t *Table) List() []Entry {
	now := t.clk.Now()

	t.mu.Lock()
	t.sweepLocked(now)
	out := make([]Entry, 0, len(t.entries))
	for _, r := range t.entries {
		if r.Active(now) {
			out = append(out, r.Entry)
		}
	}
	t.mu.Unlock()

	slices.SortFunc(out, func(a, b Entry) int {
		if c := a.ExpiresAt.Compare(b.ExpiresAt); c != 0 {
			return c
		}
		if a.Key < b.Key {
			return -1
		}
		if a.Key > b.Key {
			return 1
		}
		return 0
	})
	return out
}

// Clear is the operator's manual reactivation: it removes every entry of the
// connection that covers model — its exact and model entries and its quota-family
// entry (which also unlocks the family's other models). provider and model may be
// "" to match any; connectionID must match exactly. Escalation history of the
// removed entries is dropped too. Returns how many active locks were removed.
func (t *Table) Clear(provider, connectionID, model string) int {
	n, _ := t.ClearEntries(provider, connectionID, model)
	return n
}

// ClearEntries is Clear, also returning the entries it removed (active or
// not).
func (t *Table) ClearEntries(provider, connectionID, model string) (int, []Entry) {
	return t.removeWhere(func(k key) bool {
		if k.conn != connectionID || (provider != "" && k.provider != provider) {
			return false
		}
		if model == "" {
			return true
		}
		if k.scope == ScopeQuotaFamily {
			return k.name == t.Family(k.provider, model)
		}
		return k.name == model
	})
}

// ClearConnection removes every entry of the connection (all providers, models and
// scopes). Returns how many active locks were removed.
func (t *Table) ClearConnection(connectionID string) int {
	n, _ := t.ClearConnectionEntries(connectionID)
	return n
}

// ClearConnectionEntries is ClearConnection, also returning the entries it
// removed (active or not).
func (t *Table) ClearConnectionEntries(connectionID string) (int, []Entry) {
	return t.removeWhere(func(k key) bool { return k.conn == connectionID })
}

// ClearAll removes every entry. Returns how many active locks were removed.
func (t *Table) ClearAll() int {
	n, _ := t.ClearAllEntries()
	return n
}

// ClearAllEntries is ClearAll, also returning the entries it removed (active
// or not).
func (t *Table) ClearAllEntries() (int, []Entry) {
	return t.removeWhere(func(key) bool { return true })
}

// Remote is an entry written by another instance sharing the database: a
// lock, or a tombstone (Cleared) saying that instance cleared the key at
// LockedAt.
type Remote struct {
	Entry
	Cleared bool
}

// Adopt takes what other instances wrote: an entry newer than this table's
// entry of the same key (a later LockedAt; no entry at all counts as older)
// replaces it when it is a lock still active at now, and deletes it when it is
// a tombstone. An entry as new as or older than this table's is ignored (an
// equal LockedAt is this instance's own write coming back), and so is an
// expired lock (at exactly ExpiresAt it no longer holds). An adopted lock
// keeps this table's escalation window when that ends later (another
// instance's MaxCooldown is not known here). An adopted lock ends no later
// than now + MaxLock. Nothing is written back. Returns how many entries were
// taken or deleted.
func (t *Table) Adopt(remote []Remote) int {
	now := t.clk.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, r := range remote {
		k := t.keyFor(r.Provider, r.ConnectionID, r.Model, r.Scope)
		prev, had := t.entries[k]
		if had && !r.LockedAt.After(prev.LockedAt) {
			continue
		}
		if r.Cleared {
			if had {
				delete(t.entries, k)
				n++
			}
			continue
		}
		if !r.Active(now) {
			continue
		}
		e := r.Entry
		e.Key = k.String()
		// No lock lasts longer than MaxLock: one written by an instance whose
		// clock was ahead is clamped to now + MaxLock, not held until then.
		if bound := now.Add(MaxLock); e.ExpiresAt.After(bound) {
			e.ExpiresAt = bound
		}
		windowEnd := e.ExpiresAt
		if had && prev.windowEnd.After(windowEnd) {
			windowEnd = prev.windowEnd
		}
		t.putLocked(k, record{Entry: e, windowEnd: windowEnd})
		n++
	}
	return n
}

// Count returns the number of active locks.
func (t *Table) Count() int {
	now := t.clk.Now()
	t.mu.RLock()
	defer t.mu.RUnlock()
	n := 0
	for _, r := range t.entries {
		if r.Active(now) {
			n++
		}
	}
	return n
}

// removeWhere deletes the matching entries, counting the active ones and
// returning every one it deleted.
func (t *Table) removeWhere(match func(key) bool) (int, []Entry) {
	now := t.clk.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweepLocked(now)
	removed := 0
	var gone []Entry
	for k, r := range t.entries {
		if !match(k) {
			continue
		}
		delete(t.entries, k)
		gone = append(gone, r.Entry)
		if r.Active(now) {
			removed++
		}
	}
	t.resetSweepLocked()
	return removed, gone
}

// putLocked stores r under k. It keeps the invariant that nextSweep is non-zero
// and no later than every entry's window end whenever the map is non-empty (an
// earlier nextSweep only costs one extra scan).
func (t *Table) putLocked(k key, r record) {
	t.entries[k] = r
	if t.nextSweep.IsZero() || r.windowEnd.Before(t.nextSweep) {
		t.nextSweep = r.windowEnd
	}
}

// sweepLocked drops dead entries (escalation window closed) once now reaches
// nextSweep, keeping the map bounded by recent failures.
func (t *Table) sweepLocked(now time.Time) {
	if t.nextSweep.IsZero() || now.Before(t.nextSweep) {
		return
	}
	for k, r := range t.entries {
		if !now.Before(r.windowEnd) {
			delete(t.entries, k)
		}
	}
	t.resetSweepLocked()
}

// resetSweepLocked recomputes nextSweep from the entries.
func (t *Table) resetSweepLocked() {
	t.nextSweep = time.Time{}
	for _, r := range t.entries {
		if t.nextSweep.IsZero() || r.windowEnd.Before(t.nextSweep) {
			t.nextSweep = r.windowEnd
		}
	}
}
