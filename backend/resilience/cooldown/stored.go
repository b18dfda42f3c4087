package cooldown

import (
	"time"

	"omniroute/backend/resilience/verdict"
)

// ApplyStored folds one outcome into a connection state that several gateway
// instances share (a team server on PostgreSQL): the database serialises the
// instances' outcomes on the stored row and this decides each one against the
// row as stored, so the anti-thundering-herd rule holds across instances.
//
// It is Apply, but stricter about a herd: a failure arriving while the stored
// state is already cooling at now — whichever instance it went through —
// leaves the level and the deadline exactly as they are (Apply would move the
// deadline later by the herd's spread, a few milliseconds per instance), so a
// herd sets one cooldown. It still moves the deadline when its own evidence
// asks for a longer cooldown than the one running (a quota window, a longer
// Retry-After), and it still ends the connection (banned, expired) or clears
// it (a success). The running cooldown's length is RateLimitedUntil −
// LastErrorAt: the failure that set a deadline is the last error recorded.
func ApplyStored(s State, v verdict.Verdict, set Settings, opt Options, now time.Time) (State, bool) {
	next, changed := Apply(s, v, set, opt, now)
	if !changed || v.OK() || !cooling(s, now) || TerminalOf(next) != "" || next.BackoffLevel != s.BackoffLevel {
		return next, changed
	}
	running := s.RateLimitedUntil.Sub(s.LastErrorAt)
	if s.LastErrorAt.IsZero() || s.LastErrorAt.After(now) {
		running = s.RateLimitedUntil.Sub(now)
	}
	if next.RateLimitedUntil.Sub(now) > running {
		return next, true // longer evidence: the cooldown it asks for
	}
	return s, false // a herd: the stored cooldown stands
}
