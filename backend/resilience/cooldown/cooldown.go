// Package cooldown decides a single connection's (account / key) cooldown and
// terminal state from one verdict. Everything here is pure: the caller loads the
// State, passes now, and writes the result back only when it changed.
package cooldown

import (
	"time"

	"omniroute/backend/resilience/verdict"
)

// Connection test_status values written by this package (terminal states use their
// own name: verdict.TerminalBanned, TerminalExpired, TerminalCreditsExhausted).
const (
	StatusActive      = "active"
	StatusUnavailable = "unavailable"
)

// ReasonCooldown is the Eligible reason for a connection in a transient cooldown.
const ReasonCooldown = "connection_cooldown"

// ExpiredRetryMax is how many auth failures (each with backoff) a connection gets
// before it becomes terminal "expired", so transient OAuth errors can self-heal.
const ExpiredRetryMax = 3

// RejectStreakMax is how many consecutive upstream request refusals
// (KindRequestRejected) make a connection terminal "banned".
const RejectStreakMax = 3

// Normalize bounds for Settings.
const (
	minBaseCooldown    = 100 * time.Millisecond
	maxBaseCooldown    = 10 * time.Minute
	maxBackoffSteps    = 15
	minMaxHintCooldown = time.Second
	maxMaxHintCooldown = 24 * time.Hour
)

// Settings tunes connection cooldowns.
type Settings struct {
	// BaseCooldown is the first rung of the exponential ladder.
	BaseCooldown time.Duration
	// UseUpstreamRetryHints prefers the upstream's Retry-After / reset hint over the ladder.
	UseUpstreamRetryHints bool
	// MaxBackoffSteps caps the ladder exponent: cooldown = Base × 2^min(level, steps).
	MaxBackoffSteps int
	// MaxHintCooldown caps hint-derived and fixed cooldowns, so one header can never
	// cool a connection for days.
	MaxHintCooldown time.Duration
	// QuotaCooldown is how long an exhausted quota cools the connection when the
	// upstream announced no reset (0: DefaultQuotaCooldown). An announced reset is
	// honoured up to MaxQuotaCooldown, whatever MaxHintCooldown says: a quota
	// window is long by nature and retrying before it resets only burns attempts.
	QuotaCooldown time.Duration
}

// DefaultQuotaCooldown is the cooldown of an exhausted quota without an announced reset.
const DefaultQuotaCooldown = time.Hour

// MaxQuotaCooldown caps a quota reset announced by the upstream (a daily window).
const MaxQuotaCooldown = 24 * time.Hour

// MaxStreakCooldown caps a cooldown written by a failure streak (5xx,
// reset, timeout), of a connection or of a model: a broken upstream gives no
// hint of when it is back, so a recovered one must be tried again within a
// bound (the breaker's probe interval, docs/FAILOVER.md "Prompt recovery"),
// not after a ladder that climbed to minutes.
const MaxStreakCooldown = 15 * time.Second

// DefaultFailureStreak is how many consecutive recoverable failures (5xx,
// reset, first-byte timeout), across the connection's models, cool it.
const DefaultFailureStreak = 3

// DefaultSettings returns the defaults for an auth type: "oauth" starts at 5s,
// anything else ("apikey", "none") at 3s; hints on, 5 backoff steps, hints capped at 1h.
func DefaultSettings(authType string) Settings {
	base := 3 * time.Second
	if authType == "oauth" {
		base = 5 * time.Second
	}
	return Settings{BaseCooldown: base, UseUpstreamRetryHints: true, MaxBackoffSteps: 5, MaxHintCooldown: time.Hour,
		QuotaCooldown: DefaultQuotaCooldown}
}

// Normalize clamps silly values: BaseCooldown in [100ms, 10min], MaxBackoffSteps in
// [0, 15], MaxHintCooldown in [1s, 24h]. Zero values clamp to the minimum, so start
// from DefaultSettings.
func (s Settings) Normalize() Settings {
	s.BaseCooldown = clampDur(s.BaseCooldown, minBaseCooldown, maxBaseCooldown)
	s.MaxBackoffSteps = min(max(s.MaxBackoffSteps, 0), maxBackoffSteps)
	s.MaxHintCooldown = clampDur(s.MaxHintCooldown, minMaxHintCooldown, maxMaxHintCooldown)
	if s.QuotaCooldown > 0 {
		s.QuotaCooldown = clampDur(s.QuotaCooldown, time.Second, MaxQuotaCooldown)
	}
	return s
}

// MaxCooldown is the longest cooldown these settings can set: an announced
// quota reset (MaxQuotaCooldown), the quota cooldown without one, a capped
// hint or fixed cooldown, or the top of the exponential ladder. A stored
// deadline further away than now + MaxCooldown was written with a clock
// ahead of this one, and is clamped at load.
func (s Settings) MaxCooldown() time.Duration {
	s = s.Normalize()
	ladder := s.BaseCooldown << s.MaxBackoffSteps
	return max(MaxQuotaCooldown, DefaultQuotaCooldown, s.QuotaCooldown, s.MaxHintCooldown, ladder)
}

// State is one connection's resilience columns (rate_limited_until, test_status,
// last_error, last_error_type, error_code, backoff_level, plus streak counters).
type State struct {
	RateLimitedUntil time.Time // cooldown deadline; eligible again at exactly this instant
	TestStatus       string    // "active", "unavailable" or a terminal name
	LastError        string
	LastErrorType    string // string(verdict.Kind)
	ErrorCode        string
	LastErrorAt      time.Time
	BackoffLevel     int    // rungs climbed on the exponential ladder
	Terminal         string // "", or verdict.TerminalBanned / TerminalExpired / TerminalCreditsExhausted
	RejectStreak     int    // consecutive request_rejected refusals
	ExpiredRetries   int    // auth failures since the last success
	// FailStreak counts consecutive recoverable failures (5xx, reset, timeout)
	// across the connection's models since its last success; in memory only.
	FailStreak int
}

// Options are per-deployment switches for Apply.
type Options struct {
	// StallCooldown makes a content stall cool the connection (default off: a stall
	// belongs to that request, usually a long reasoning turn).
	StallCooldown bool
	// FailureStreak is how many consecutive recoverable failures (5xx, reset,
	// first-byte timeout) across the connection's models cool it with the
	// exponential ladder (guide §2); one alone never does. 0 turns it off.
	FailureStreak int
}

// TerminalOf returns the connection's terminal state name, or "" when it has none.
// A TestStatus holding a terminal name counts even if Terminal was not loaded.
func TerminalOf(s State) string {
	if s.Terminal != "" {
		return s.Terminal
	}
	switch s.TestStatus {
	case verdict.TerminalBanned, verdict.TerminalExpired, verdict.TerminalCreditsExhausted:
		return s.TestStatus
	}
	return ""
}

// Apply folds one verdict into the connection state at now and reports whether
// anything changed. Terminal states are never overwritten; banned/credits_exhausted
// verdicts become terminal; request_rejected and auth failures cool until their
// streak limit, then become terminal; CoolConnection verdicts cool (fixed, hint or
// exponential ladder, with anti-thundering-herd); stalls only record the error unless
// opt.StallCooldown; other verdicts (5xx, 404, 400) record nothing here.
func Apply(s State, v verdict.Verdict, set Settings, opt Options, now time.Time) (State, bool) {
	if TerminalOf(s) != "" {
		return s, false
	}
	if v.OK() {
		return Success(s)
	}
	if v.Kind == verdict.KindClientCanceled {
		return s, false // the caller went away: no evidence about the account
	}
	set = set.Normalize()
	ns := s
	if v.Kind != verdict.KindRequestRejected {
		ns.RejectStreak = 0 // any other upstream outcome breaks a refusal streak
	}
	switch {
	case v.Terminal == verdict.TerminalBanned || v.Terminal == verdict.TerminalCreditsExhausted:
		ns = toTerminal(ns, v.Terminal, v, now)
	case v.Kind == verdict.KindRequestRejected:
		if !cooling(s, now) { // refusals of a concurrent herd count once
			ns.RejectStreak++
		}
		if ns.RejectStreak >= RejectStreakMax {
			ns = toTerminal(ns, verdict.TerminalBanned, v, now)
		} else {
			ns = cool(ns, v, set, now)
		}
	case v.Kind == verdict.KindAuth || v.Terminal == verdict.TerminalExpired:
		if !cooling(s, now) {
			ns.ExpiredRetries++
		}
		if ns.ExpiredRetries >= ExpiredRetryMax {
			ns = toTerminal(ns, verdict.TerminalExpired, v, now)
		} else {
			ns = cool(ns, v, set, now)
		}
	case v.Kind == verdict.KindStall:
		if opt.StallCooldown {
			ns = cool(ns, v, set, now)
		} else {
			ns = recordError(ns, v, now)
		}
	case v.CoolConnection:
		ns = cool(ns, v, set, now)
	case recoverable(v.Kind) && opt.FailureStreak > 0:
		if !cooling(s, now) { // failures of a concurrent herd count once
			ns.FailStreak++
		}
		if ns.FailStreak >= opt.FailureStreak {
			ns = cool(ns, v, set, now)
			ns.FailStreak = 0
			if until := now.Add(MaxStreakCooldown); ns.RateLimitedUntil.After(until) {
				ns.RateLimitedUntil = until // the ladder climbs, the wait stays bounded
			}
		}
	}
	return ns, !equal(s, ns)
}

// recoverable reports the failures that say nothing alone but, repeated across
// the connection's models, show the connection itself is broken.
func recoverable(k verdict.Kind) bool {
	return k == verdict.KindServer || k == verdict.KindTransport || k == verdict.KindTimeout
}

// Success clears every error field, the cooldown, the backoff level and the streaks
// and sets TestStatus "active". A terminal state is not cleared by success. changed
// is false when the state was already clean, so the hot path writes nothing.
func Success(s State) (State, bool) {
	if TerminalOf(s) != "" {
		return s, false
	}
	clean := State{TestStatus: StatusActive}
	return clean, !equal(s, clean)
}

// Eligible reports whether the connection may be routed to at now. Terminal →
// (false, terminal name, 0); cooling → (false, "connection_cooldown", remaining);
// a deadline at or before now is eligible (lazy recovery, no write needed).
func Eligible(s State, now time.Time) (ok bool, reason string, remaining time.Duration) {
	if t := TerminalOf(s); t != "" {
		return false, t, 0
	}
	if cooling(s, now) {
		return false, ReasonCooldown, s.RateLimitedUntil.Sub(now)
	}
	return true, "", 0
}

// Clear is the operator / bulk clear of a transient cooldown: it drops the deadline,
// backoff level and streaks and sets "active", keeping the last error as history.
// A terminal state is never cleared (returns s, false); use ClearTerminal.
func Clear(s State) (State, bool) {
	if TerminalOf(s) != "" {
		return s, false
	}
	ns := s
	ns.RateLimitedUntil = time.Time{}
	ns.BackoffLevel = 0
	ns.RejectStreak = 0
	ns.ExpiredRetries = 0
	ns.TestStatus = StatusActive
	return ns, !equal(s, ns)
}

// ClearTerminal returns a fully clean, active state: for new credentials or an
// explicit operator reset of a banned / expired / credits_exhausted connection.
func ClearTerminal(s State) State {
	return State{TestStatus: StatusActive}
}

// cooling reports whether the connection is inside a transient cooldown at now.
func cooling(s State, now time.Time) bool {
	return s.RateLimitedUntil.After(now)
}

// toTerminal enters terminal state name, dropping any transient cooldown.
func toTerminal(s State, name string, v verdict.Verdict, now time.Time) State {
	s = recordError(s, v, now)
	s.Terminal = name
	s.TestStatus = name
	s.RateLimitedUntil = time.Time{}
	return s
}

// recordError stores the verdict as the connection's last error.
func recordError(s State, v verdict.Verdict, now time.Time) State {
	s.LastError = v.Message
	s.LastErrorType = string(v.Kind)
	s.ErrorCode = v.Code
	s.LastErrorAt = now
	return s
}

// cool starts (or, during a herd, possibly extends) a cooldown for v.
// A connection already cooling is part of a concurrent herd: its level is not
// raised again and its deadline only moves later if the cooldown recomputed at the
// level that produced the current one ends later.
func cool(s State, v verdict.Verdict, set Settings, now time.Time) State {
	level := max(s.BackoffLevel, 0)
	if cooling(s, now) {
		d, _ := cooldownFor(v, set, max(level-1, 0))
		if until := now.Add(d); until.After(s.RateLimitedUntil) {
			s = recordError(s, v, now)
			s.RateLimitedUntil = until
		}
		return s
	}
	d, next := cooldownFor(v, set, level)
	s = recordError(s, v, now)
	s.RateLimitedUntil = now.Add(d)
	s.TestStatus = StatusUnavailable
	s.BackoffLevel = next
	return s
}

// cooldownFor returns the cooldown for v at ladder level and the level to store next.
// Fixed cooldowns (concurrency limits) keep the level; hints and the ladder raise it
// by one, capped at MaxBackoffSteps. An exhausted quota waits for its reset,
// except a restated one (CodeQuotaRestated), which climbs the ladder.
func cooldownFor(v verdict.Verdict, set Settings, level int) (time.Duration, int) {
	hint := time.Duration(0)
	if set.UseUpstreamRetryHints && v.RetryAfter > 0 {
		hint = v.RetryAfter
	}
	next := min(level+1, set.MaxBackoffSteps)
	// A restated quota (agentrouter's "403 额度不足") is a short window by
	// declaration (guide §7): the ordinary ladder, not the quota cooldown.
	quota := v.Kind == verdict.KindQuota && v.Code != verdict.CodeQuotaRestated
	switch {
	case quota && hint > 0:
		return min(hint, MaxQuotaCooldown), level
	case quota && set.QuotaCooldown > 0:
		return set.QuotaCooldown, level
	case quota:
		return DefaultQuotaCooldown, level
	case v.FixedCooldown > 0:
		return min(max(v.FixedCooldown, hint), set.MaxHintCooldown), level
	case hint > 0:
		return min(hint, set.MaxHintCooldown), next
	default:
		return set.BaseCooldown << min(level, set.MaxBackoffSteps), next
	}
}

// equal compares two states field by field (time instants with Equal).
func equal(a, b State) bool {
	return a.RateLimitedUntil.Equal(b.RateLimitedUntil) &&
		a.TestStatus == b.TestStatus &&
		a.LastError == b.LastError &&
		a.LastErrorType == b.LastErrorType &&
		a.ErrorCode == b.ErrorCode &&
		a.LastErrorAt.Equal(b.LastErrorAt) &&
		a.BackoffLevel == b.BackoffLevel &&
		a.Terminal == b.Terminal &&
		a.RejectStreak == b.RejectStreak &&
		a.ExpiredRetries == b.ExpiredRetries &&
		a.FailStreak == b.FailStreak
}

// clampDur bounds d to [lo, hi].
func clampDur(d, lo, hi time.Duration) time.Duration {
	return min(max(d, lo), hi)
}
