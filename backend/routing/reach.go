package routing

import (
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/resilience/verdict"
)

// Reach is what the gateway has seen of whether a connection's upstream can
// be reached at all (an answer of any status counts as reached): the health
// model calls a connection unreachable when it has not been reached since it
// was loaded, or when its last attempts all failed before any answer.
type Reach struct {
	// Reached: some attempt or check got an answer since the connection was loaded.
	Reached bool
	// Misses counts the consecutive attempts (and checks) that got no answer
	// (connection refused, reset, DNS, TLS: verdict kind transport).
	Misses int
	// Since is when the current streak of misses began (zero: no miss).
	Since time.Time
	// LastMiss is the transport's own words for the last miss (redacted).
	LastMiss string
}

// Reach returns a copy of what the gateway has seen of the upstream's reach.
func (c *Conn) Reach() Reach {
	c.reachMu.Lock()
	defer c.reachMu.Unlock()
	return c.reach
}

// NoteReach records one attempt's or check's reach: ok when the upstream
// answered (whatever the status), else why it could not be reached. A reached
// upstream with no streak to end costs one atomic load.
func (c *Conn) NoteReach(ok bool, why string, now time.Time) {
	if ok && c.reachClean.Load() {
		return
	}
	c.reachMu.Lock()
	defer c.reachMu.Unlock()
	if ok {
		c.reach = Reach{Reached: true}
		c.reachClean.Store(true)
		return
	}
	if c.reach.Misses == 0 {
		c.reach.Since = now
	}
	c.reach.Misses++
	c.reach.LastMiss = why
	c.reachClean.Store(false)
}

// noteVerdict folds an attempt's verdict into the connection's reach: a
// transport failure is a miss; any answer from the upstream (an error status
// included) reaches it. A timeout says neither (the upstream may be slow).
// The clock is read only for a miss (a reach records no time).
func (c *Conn) noteVerdict(v verdict.Verdict, clk clock.Clock) {
	switch v.Kind {
	case verdict.KindTransport:
		c.NoteReach(false, v.Message, clk.Now())
	case verdict.KindTimeout, verdict.KindClientCanceled, verdict.KindStall:
	default:
		c.NoteReach(true, "", time.Time{})
	}
}

// adoptReach carries old's reach over a reload when the upstream address did
// not change (a new base URL starts from nothing known).
func (c *Conn) adoptReach(old *Conn) {
	if old.BaseURL != c.BaseURL {
		return
	}
	r := old.Reach()
	c.reachMu.Lock()
	c.reach = r
	c.reachClean.Store(r.Reached && r.Misses == 0)
	c.reachMu.Unlock()
}
