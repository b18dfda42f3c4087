// Package auththrottle throttles failed authentication per source address
// with a token bucket: each wrong credential takes a token; the bucket holds
// Burst and refills one token per Refill. While a source's bucket is empty
// it must wait (Wait) until a token is back. The HTTP edge decides what a
// wait means for a request (backend/api: 429 AUTH_RATE_LIMITED, loopback
// always checked).
package auththrottle

import (
	"sync"
	"sync/atomic"
	"time"
)

const (
	// Burst is the wrong credentials a source may send before it waits.
	Burst = 30
	// Refill is the time one token takes to come back.
	Refill = time.Second
	// MaxSources bounds the table: past it, sources whose bucket is full
	// again are forgotten, then any one.
	MaxSources = 4096
)

// Throttle is the per-source failure buckets, on an injected clock.
type Throttle struct {
	now     func() time.Time
	any     atomic.Bool // some source has failed: Wait has a table to read
	mu      sync.Mutex
	sources map[string]bucket
}

// bucket is a source's tokens at a moment (they refill from there).
type bucket struct {
	tokens float64
	at     time.Time
	logged bool // its throttling was reported (until the bucket is full again)
}

// New is an empty throttle reading the time from now.
func New(now func() time.Time) *Throttle {
	return &Throttle{now: now, sources: map[string]bucket{}}
}

// level is b's tokens at now, refilled and capped at Burst.
func (b bucket) level(now time.Time) float64 {
	d := now.Sub(b.at)
	if d < 0 { // the clock stepped back: count nothing refilled
		d = 0
	}
	return min(b.tokens+float64(d)/float64(Refill), Burst)
}

// Wait is how long src must wait before its credentials are checked again;
// 0 means now.
func (t *Throttle) Wait(src string) time.Duration {
	if !t.any.Load() { // no failure yet: nothing to look up
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	b, ok := t.sources[src]
	if !ok {
		return 0
	}
	lvl := b.level(t.now())
	if lvl >= 1 {
		return 0
	}
	return time.Duration((1 - lvl) * float64(Refill))
}

// Fail takes one token from src's bucket; it reports whether the source is
// throttled from here on for the first time since its bucket was full (once
// per burst, so a steady guesser is logged once, not once a token).
func (t *Throttle) Fail(src string) (newlyThrottled bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	b, ok := t.sources[src]
	lvl := float64(Burst)
	if ok {
		if lvl = b.level(now); lvl >= Burst {
			b.logged = false
		}
	} else if len(t.sources) >= MaxSources {
		t.prune(now)
	}
	lvl = max(lvl-1, 0)
	newlyThrottled = lvl < 1 && !b.logged
	t.sources[src] = bucket{tokens: lvl, at: now, logged: b.logged || newlyThrottled}
	t.any.Store(true)
	return newlyThrottled
}

// prune forgets the sources whose bucket is full again, or one source when
// none is.
func (t *Throttle) prune(now time.Time) {
	for src, b := range t.sources {
		if b.level(now) >= Burst {
			delete(t.sources, src)
		}
	}
	if len(t.sources) < MaxSources {
		return
	}
	for src := range t.sources {
		delete(t.sources, src)
		return
	}
}
