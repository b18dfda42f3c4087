// Package gate is the composite concurrency gate of the resilience guide §4:
// one permit spans several counters (global → provider → account → model) and
// is taken atomically — every counter or none — under a single mutex, so there
// is no partial hold and no lock order to get wrong. A counter's limit travels
// with each acquisition (the connection's maxConcurrent, its modelConcurrency
// entry), so a settings change applies to the next request and the most
// restrictive of the levels is what effectively holds.
//
// Callers that do not fit wait in one FIFO list. A release grants waiters in
// arrival order, but a waiter blocked on one saturated counter never holds up a
// later waiter that needs none of the saturated counters: a request for model
// B on a connection is not stuck behind queued requests for model A.
//
// The gate knows nothing of HTTP, settings or the other layers; it reports
// typed errors (SEMAPHORE_TIMEOUT, SEMAPHORE_QUEUE_FULL) that the edge maps to
// a status. A saturated gate is not an upstream failure: it feeds no breaker,
// cooldown or lockout.
package gate

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Error codes of the guide (§4, "typed admission errors").
const (
	// CodeTimeout: the wait budget ended before every counter had room.
	CodeTimeout = "SEMAPHORE_TIMEOUT"
	// CodeQueueFull: too many callers already wait on a saturated counter.
	CodeQueueFull = "SEMAPHORE_QUEUE_FULL"
)

// Error is a refused acquisition.
type Error struct {
	Code string
	// Key names the counter that was saturated (the first one found).
	Key string
	// Limit is that counter's limit.
	Limit int
}

func (e *Error) Error() string {
	switch e.Code {
	case CodeQueueFull:
		return fmt.Sprintf("%s: too many requests already wait for %s (limit %d in flight)", e.Code, e.Key, e.Limit)
	default:
		return fmt.Sprintf("%s: no free slot on %s (limit %d in flight) before the wait budget ended", e.Code, e.Key, e.Limit)
	}
}

// IsTimeout reports whether err is a gate timeout.
func IsTimeout(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == CodeTimeout
}

// Key is one counter of a composite permit.
type Key struct {
	// Name identifies the counter, e.g. "account:<connection id>".
	Name string
	// Limit is the most requests that may hold this counter at once; 0 or less
	// means the counter is only counted (for the live in-flight figures).
	Limit int
}

// Count is a counter's live state.
type Count struct {
	InFlight int `json:"inFlight"`
	Waiting  int `json:"waiting"`
}

// Gate holds every counter. The zero value is not usable; call New.
type Gate struct {
	mu      sync.Mutex
	held    map[string]int
	waiting map[string]int
	queue   []*waiter
}

type waiter struct {
	keys    []Key
	ready   chan struct{}
	granted bool
}

// New returns an empty gate.
func New() *Gate {
	return &Gate{held: map[string]int{}, waiting: map[string]int{}}
}

// Permit is a held composite slot. Release gives every counter back; it is
// idempotent and safe from any goroutine.
type Permit struct {
	g        *Gate
	keys     []Key
	released bool
	// WaitedOn names the saturated counter the caller queued behind ("" when
	// the permit was granted at once).
	WaitedOn string
}

// Acquire takes one unit of every key, atomically. It returns at once when
// all of them have room and nobody waits ahead on a saturated one; otherwise
// it waits until they have, or ctx ends: a deadline gives CodeTimeout, a
// cancellation gives ctx's error. maxWaiting > 0 refuses at once with
// CodeQueueFull when that many callers already wait on a saturated key.
func (g *Gate) Acquire(ctx context.Context, keys []Key, maxWaiting int) (*Permit, error) {
	g.mu.Lock()
	if len(g.queue) == 0 && g.fits(keys, nil) {
		g.take(keys)
		g.mu.Unlock()
		return &Permit{g: g, keys: keys}, nil
	}
	w := &waiter{keys: keys}
	blocker, full := g.saturated(keys)
	if full && maxWaiting > 0 && g.waiting[blocker.Name] >= maxWaiting {
		g.mu.Unlock()
		return nil, &Error{Code: CodeQueueFull, Key: blocker.Name, Limit: blocker.Limit}
	}
	if !full { // queued behind earlier waiters only: name the busiest counter
		blocker = g.busiest(keys)
	}
	w.ready = make(chan struct{})
	g.queue = append(g.queue, w)
	for _, k := range keys {
		g.waiting[k.Name]++
	}
	g.grant()
	if w.granted {
		g.mu.Unlock()
		return &Permit{g: g, keys: keys}, nil
	}
	g.mu.Unlock()

	select {
	case <-w.ready:
		return &Permit{g: g, keys: keys, WaitedOn: blocker.Name}, nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	if w.granted {
		// Granted while ctx ended: give it back, the caller is gone.
		g.give(keys)
	} else {
		g.remove(w)
	}
	if k, full := g.saturated(keys); full {
		blocker = k
	}
	g.grant() // a removed waiter may have been holding later ones back
	g.mu.Unlock()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, &Error{Code: CodeTimeout, Key: blocker.Name, Limit: blocker.Limit}
	}
	return nil, ctx.Err()
}

// TryAcquire takes the permit only if it is free now (every key has room and
// nobody waits): the cheap path, with no context or waiter to build.
func (g *Gate) TryAcquire(keys []Key) (*Permit, bool) {
	p := new(Permit)
	if !g.TryAcquireInto(p, keys) {
		return nil, false
	}
	return p, true
}

// TryAcquireInto is TryAcquire writing the permit into p, a part of the
// caller's own per-request state, instead of allocating one. p keeps keys
// until it is released.
func (g *Gate) TryAcquireInto(p *Permit, keys []Key) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queue) == 0 && g.fits(keys, nil) {
		g.take(keys)
		*p = Permit{g: g, keys: keys}
		return true
	}
	return false
}

// Release gives the permit's counters back and wakes the waiters that now fit.
func (p *Permit) Release() {
	if p == nil {
		return
	}
	g := p.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if p.released {
		return
	}
	p.released = true
	g.give(p.keys)
	g.grant()
}

// Get returns one counter's live state.
func (g *Gate) Get(name string) Count {
	g.mu.Lock()
	defer g.mu.Unlock()
	return Count{InFlight: g.held[name], Waiting: g.waiting[name]}
}

// Snapshot returns every non-idle counter.
func (g *Gate) Snapshot() map[string]Count {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[string]Count, len(g.held)+len(g.waiting))
	for k, n := range g.held {
		c := out[k]
		c.InFlight = n
		out[k] = c
	}
	for k, n := range g.waiting {
		c := out[k]
		c.Waiting = n
		out[k] = c
	}
	return out
}

// Idle reports whether no permit is held and nobody waits.
func (g *Gate) Idle() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.held) == 0 && len(g.waiting) == 0 && len(g.queue) == 0
}

// fits reports whether every key has room and none is blocked by an earlier waiter.
func (g *Gate) fits(keys []Key, blocked map[string]bool) bool {
	for _, k := range keys {
		if blocked[k.Name] || (k.Limit > 0 && g.held[k.Name] >= k.Limit) {
			return false
		}
	}
	return true
}

// saturated returns the first key at its limit.
func (g *Gate) saturated(keys []Key) (Key, bool) {
	for _, k := range keys {
		if k.Limit > 0 && g.held[k.Name] >= k.Limit {
			return k, true
		}
	}
	return Key{}, false
}

// busiest returns the limited key with the most waiters.
func (g *Gate) busiest(keys []Key) Key {
	var best Key
	for _, k := range keys {
		if k.Limit > 0 && (best.Name == "" || g.waiting[k.Name] > g.waiting[best.Name]) {
			best = k
		}
	}
	return best
}

func (g *Gate) take(keys []Key) {
	for _, k := range keys {
		g.held[k.Name]++
	}
}

func (g *Gate) give(keys []Key) {
	for _, k := range keys {
		if g.held[k.Name]--; g.held[k.Name] <= 0 {
			delete(g.held, k.Name)
		}
	}
}

func (g *Gate) unwait(keys []Key) {
	for _, k := range keys {
		if g.waiting[k.Name]--; g.waiting[k.Name] <= 0 {
			delete(g.waiting, k.Name)
		}
	}
}

func (g *Gate) remove(w *waiter) {
	for i, x := range g.queue {
		if x == w {
			g.queue = append(g.queue[:i], g.queue[i+1:]...)
			g.unwait(w.keys)
			return
		}
	}
}

// grant wakes, in arrival order, every waiter whose counters all have room and
// are not claimed by an earlier waiter that is still blocked on them.
func (g *Gate) grant() {
	if len(g.queue) == 0 {
		return
	}
	var blocked map[string]bool
	kept := g.queue[:0]
	for _, w := range g.queue {
		if g.fits(w.keys, blocked) {
			g.take(w.keys)
			g.unwait(w.keys)
			w.granted = true
			close(w.ready)
			continue
		}
		for _, k := range w.keys {
			if k.Limit > 0 && g.held[k.Name] >= k.Limit {
				if blocked == nil {
					blocked = map[string]bool{}
				}
				blocked[k.Name] = true
			}
		}
		kept = append(kept, w)
	}
	for i := len(kept); i < len(g.queue); i++ {
		g.queue[i] = nil
	}
	g.queue = kept
}
