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
}

// New returns an empty pin set; ttl is read per call (0 disables affinity).
func New(clk clock.Clock, ttl func() time.Duration, saver Saver) *Pins {
	return &Pins{clk: clk, ttl: ttl, saver: saver, m: map[string]Pin{}, occ: map[string]int{}}
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
func (p *Pins) Claim(key, connectionID, provider, planned string, spread Spread) string {
	ttl := p.ttl()
	if p.claimer == nil || key == "" || ttl <= 0 {
		return connectionID
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
	if planned == "" && !live && len(spread.Accounts) > 1 {
		pin.Pool, pin.Among = spread.Pool, spread.Accounts
	}
	won, err := p.claimer.ClaimPin(pin)
	if err != nil || won.ConnectionID == "" {
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

// setLocked stores pin, keeping the occupancy counts.
func (p *Pins) setLocked(pin Pin) {
	if old, ok := p.m[pin.SessionKey]; ok {
		p.dec(old.ConnectionID)
	}
	p.m[pin.SessionKey] = pin
	p.occ[pin.ConnectionID]++
}

// deleteLocked removes a session's pin, keeping the occupancy counts.
func (p *Pins) deleteLocked(key string) {
	if old, ok := p.m[key]; ok {
		p.dec(old.ConnectionID)
		delete(p.m, key)
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
// is written at once; an unchanged pin is refreshed in memory and written only
// when half its TTL has passed, so a busy session costs no write per request.
func (p *Pins) Served(key, connectionID, provider string) error {
	ttl := p.ttl()
	if key == "" || ttl <= 0 {
		return nil
	}
	now := p.clk.Now()
	p.mu.Lock()
	old, had := p.m[key]
	pin := Pin{SessionKey: key, ConnectionID: connectionID, Provider: provider, ExpiresAt: now.Add(ttl)}
	write := !had || old.ConnectionID != connectionID || old.ExpiresAt.Sub(now) < ttl/2
	if had && now.Before(old.ExpiresAt) {
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
