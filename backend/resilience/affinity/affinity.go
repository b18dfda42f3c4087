// Package affinity pins a client session (X-Session-Id, x-codex-session-id,
// x-omniroute-session) to the connection that served it, so multi-turn agents
// keep their account. A pin is a soft preference with a TTL: routing moves an
// ineligible session and re-pins it. Pins are written through to a store so
// they survive a restart; expiry is lazy.
package affinity

import (
	"sync"
	"time"

	"omniroute/backend/clock"
)

// Pin is one session's connection.
type Pin struct {
	SessionKey   string
	ConnectionID string
	Provider     string
	ExpiresAt    time.Time
	// Prev is the connection this pin replaces ("" for a new session): on a
	// team server the stored pin is overwritten only while it still names
	// Prev (or has expired), so two instances moving one session at once
	// cannot both win.
	Prev string
	// Pool and Among, on a new session's claim, are the accounts it may be
	// pinned to instead of ConnectionID (Spread; ConnectionID is the first):
	// the claimer pins the one holding the fewest sessions team-wide. Not
	// stored.
	Pool  string
	Among []Account
}

// Account is one connection a new session may be pinned to.
type Account struct {
	ConnectionID string
	Provider     string
}

// Spread is what routing's session spread leaves open for a new session:
// the provider's OAuth accounts at one priority that may take it, in the
// plan's order (its first choice first), and their pool (the provider: a
// team server's claims of one pool take turns). The zero Spread leaves the
// plan's first choice alone.
type Spread struct {
	Pool     string
	Accounts []Account
}

// Claimer decides a session's pin for every instance sharing a database (a
// team server): the first writer's pin stands until it expires. It returns
// the pin that holds (p, or the one written first).
type Claimer interface {
	ClaimPin(p Pin) (Pin, error)
}

// Saver persists pins (write-through).
type Saver interface {
	SavePin(p Pin) error
}

// maxKeyLen bounds a session key taken from a client header.
const maxKeyLen = 256

// Pins holds the live pins.
type Pins struct {
	clk   clock.Clock
	ttl   func() time.Duration
	saver Saver
	// claimer, when set, decides new and moved pins at dispatch (Claim).
	claimer Claimer
	mu      sync.Mutex
	m       map[string]Pin
	// occ counts the pins in m per connection: its session occupancy, which
	// spreads new sessions over a provider's accounts (Occupancy).
	occ map[string]int
	// reserved holds the sessions whose pin in m is a new session's
	// reservation (Claim without the database's decision) not yet written:
	// Served writes it when the session is served.
	reserved map[string]bool
}

// New returns an empty pin set; ttl is read per call (0 disables affinity).
func New(clk clock.Clock, ttl func() time.Duration, saver Saver) *Pins {
	return &Pins{clk: clk, ttl: ttl, saver: saver, m: map[string]Pin{}, occ: map[string]int{}, reserved: map[string]bool{}}
}

// ShareWith makes the pins team-wide: Claim asks c before a session's first
// attempt on a connection. Call it before serving.
func (p *Pins) ShareWith(c Claimer) { p.claimer = c }

// Shared reports whether the pins are team-wide (ShareWith was called).
func (p *Pins) Shared() bool { return p.claimer != nil }

// Claim is called right before a session request's first attempt is sent to
// connectionID (the plan's first choice); planned is the session's pin the
// plan was ordered by ("" when it saw none). Without a claimer, or when the
// session's live pin already names connectionID, it returns connectionID.
// Otherwise the claimer decides — the pin is written now, before the
// upstream answers, so a next turn reaching any instance finds it — and the
// connection that holds the session team-wide is returned and kept as this
// instance's pin. The claim moves the session (Pin.Prev) only from the pin
// the plan saw: a pin adopted from another instance after the plan was made
// was not passed over, and naming it would overwrite the first writer's pin
// while other instances already serve it. When the claimer fails (the
// database does not answer) the local choice stands and is written behind
// the response, as without one. A new session (no pin planned or held) with
// a spread of two accounts or more is claimed over all of them: the claimer
// pins it to the one holding the fewest sessions on every instance (this
// instance's occupancy, which ordered the plan, counts its own pins and
// those the change feed brought so far).
//
// Without a claimer (one instance), or when the claimer fails, such a new
// session is reserved here instead (reserve): the least occupied account
// of its spread is chosen and the session pinned to it in one step under
// the table's lock, so a burst of new sessions whose plans all read the same
// occupancy still spreads, and concurrent first turns of one session all
// take the first one's account.
func (p *Pins) Claim(key, connectionID, provider, planned string, spread Spread) string {
	ttl := p.ttl()
	if key == "" || ttl <= 0 {
		return connectionID
	}
	newSpread := planned == "" && len(spread.Accounts) > 1
	if p.claimer == nil {
		if !newSpread {
			return connectionID
		}
		return p.reserve(key, spread, p.clk.Now(), ttl)
	}
	now := p.clk.Now()
	p.mu.Lock()
	cur, had := p.m[key]
	live := had && now.Before(cur.ExpiresAt)
	p.mu.Unlock()
	if live && cur.ConnectionID == connectionID {
		return connectionID
	}
	pin := Pin{SessionKey: key, ConnectionID: connectionID, Provider: provider, ExpiresAt: now.Add(ttl)}
	if planned != connectionID {
		pin.Prev = planned
	}
	if newSpread && !live {
		pin.Pool, pin.Among = spread.Pool, spread.Accounts
	}
	won, err := p.claimer.ClaimPin(pin)
	if err != nil || won.ConnectionID == "" {
		if pin.Among != nil {
			return p.reserve(key, spread, now, ttl)
		}
		return connectionID
	}
	won.Prev, won.Pool, won.Among = "", "", nil
	if won.ExpiresAt.After(pin.ExpiresAt) {
		won.ExpiresAt = pin.ExpiresAt // written with another instance's clock ahead
	}
	p.mu.Lock()
	p.setLocked(won)
	p.mu.Unlock()
	return won.ConnectionID
}

// reserve pins a new session to the account of spread holding the fewest
// sessions here (reservations included; the first in the plan's order among
// equals) in one step under the table's lock, and returns it; a session that
// has a live pin by then (an earlier first turn of it reserved one) keeps
// it. The reservation is a pin: the next plans count it and find the session
// pinned. It is written when the session is served (Served), and stays in
// memory until it expires if no turn is.
func (p *Pins) reserve(key string, spread Spread, now time.Time, ttl time.Duration) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cur, ok := p.m[key]; ok && now.Before(cur.ExpiresAt) {
		return cur.ConnectionID
	}
	best := spread.Accounts[0]
	bestN := p.occ[best.ConnectionID]
	for _, a := range spread.Accounts[1:] {
		if n := p.occ[a.ConnectionID]; n < bestN {
			best, bestN = a, n
		}
	}
	p.setLocked(Pin{SessionKey: key, ConnectionID: best.ConnectionID, Provider: best.Provider, ExpiresAt: now.Add(ttl)})
	p.reserved[key] = true
	return best.ConnectionID
}

// Key normalises a header value into a session key ("" when unusable).
func Key(v string) string {
	if len(v) > maxKeyLen {
		v = v[:maxKeyLen]
	}
	return v
}

// Load restores persisted pins.
func (p *Pins) Load(pins []Pin) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pin := range pins {
		p.setLocked(pin)
	}
}

// setLocked stores pin (a written one: no longer a reservation), keeping
// the occupancy counts.
func (p *Pins) setLocked(pin Pin) {
	if old, ok := p.m[pin.SessionKey]; ok {
		p.dec(old.ConnectionID)
	}
	delete(p.reserved, pin.SessionKey)
	p.m[pin.SessionKey] = pin
	p.occ[pin.ConnectionID]++
}

// deleteLocked removes a session's pin, keeping the occupancy counts.
func (p *Pins) deleteLocked(key string) {
	if old, ok := p.m[key]; ok {
		p.dec(old.ConnectionID)
		delete(p.m, key)
		delete(p.reserved, key)
	}
}

func (p *Pins) dec(connectionID string) {
	if p.occ[connectionID] <= 1 {
		delete(p.occ, connectionID)
		return
	}
	p.occ[connectionID]--
}

// Occupancy is the number of sessions pinned to a connection (expired pins
// not yet swept included: a soft measure), for spreading new sessions over
// one provider's OAuth accounts as the guide's session occupancy does.
func (p *Pins) Occupancy(connectionID string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.occ[connectionID]
}

// Adopt takes pins another instance sharing the database wrote: the database
// decides a session's pin (Claim), so a live stored pin replaces this
// instance's pin of the same session when it names another connection, or
// the same one with a later expiry. Nothing is saved. It returns how many
// pins it took.
func (p *Pins) Adopt(pins []Pin) int {
	now := p.clk.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, pin := range pins {
		if !now.Before(pin.ExpiresAt) {
			continue
		}
		if cur, ok := p.m[pin.SessionKey]; ok && cur.ConnectionID == pin.ConnectionID && !pin.ExpiresAt.After(cur.ExpiresAt) {
			continue
		}
		p.setLocked(pin)
		n++
	}
	return n
}

// Pinned returns the live pin's connection for a session.
func (p *Pins) Pinned(key string) (string, bool) {
	if key == "" || p.ttl() <= 0 {
		return "", false
	}
	now := p.clk.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	pin, ok := p.m[key]
	if !ok {
		return "", false
	}
	if !now.Before(pin.ExpiresAt) {
		p.deleteLocked(key)
		return "", false
	}
	return pin.ConnectionID, true
}

// Served records that a session was served by a connection: a new or moved pin
// (or a new session's reservation) is written at once; an unchanged pin is
// refreshed in memory and written only when half its TTL has passed, so a
// busy session costs no write per request.
func (p *Pins) Served(key, connectionID, provider string) error {
	ttl := p.ttl()
	if key == "" || ttl <= 0 {
		return nil
	}
	now := p.clk.Now()
	p.mu.Lock()
	old, had := p.m[key]
	pin := Pin{SessionKey: key, ConnectionID: connectionID, Provider: provider, ExpiresAt: now.Add(ttl)}
	reserved := had && p.reserved[key] // never written: nothing stored to move from
	write := !had || reserved || old.ConnectionID != connectionID || old.ExpiresAt.Sub(now) < ttl/2
	if had && !reserved && now.Before(old.ExpiresAt) {
		pin.Prev = old.ConnectionID
	}
	if write || !had {
		p.setLocked(pin)
	}
	if had && !write {
		old.ExpiresAt = pin.ExpiresAt
		p.m[key] = old // the same connection: occupancy unchanged
	}
	if len(p.m) > 100_000 {
		p.sweepLocked(now)
	}
	p.mu.Unlock()
	if write && p.saver != nil {
		return p.saver.SavePin(pin)
	}
	return nil
}

// Sweep drops the pins expired at the clock's now (reservations included),
// so the occupancy counts only live sessions, and returns how many it
// dropped: the periodic maintenance calls it, beside the store's sweep.
func (p *Pins) Sweep() int {
	now := p.clk.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.m)
	p.sweepLocked(now)
	return n - len(p.m)
}

func (p *Pins) sweepLocked(now time.Time) {
	for k, pin := range p.m {
		if !now.Before(pin.ExpiresAt) {
			p.deleteLocked(k)
		}
	}
}

// Count returns the number of live pins.
func (p *Pins) Count() int {
	now := p.clk.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sweepLocked(now)
	return len(p.m)
}
