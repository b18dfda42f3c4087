// Package events is the in-process publish/subscribe bus behind GET /api/events:
// state changes (breakers, cooldowns, requests, settings, health) fan out to the
// dashboard and the tray. Publishing never blocks: a slow subscriber loses events.
package events

import (
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"
)

// Event is one state change.
type Event struct {
	ID   uint64          `json:"id"`
	Type string          `json:"type"`
	At   time.Time       `json:"at"`
	Data json.RawMessage `json:"data"`
}

// Bus fans events out to subscribers.
type Bus struct {
	mu     sync.Mutex
	subs   map[*Subscription]struct{}
	count  atomic.Int64 // len(subs), read without the lock before every publish
	nextID atomic.Uint64
	now    func() time.Time
}

// New returns a bus stamping events with now.
func New(now func() time.Time) *Bus {
	return &Bus{subs: map[*Subscription]struct{}{}, now: now}
}

// Subscription receives events on C until Close.
type Subscription struct {
	C       <-chan Event
	c       chan Event
	bus     *Bus
	once    sync.Once
	dropped atomic.Int64
}

// Subscribe registers a subscriber with a buffer of n events.
func (b *Bus) Subscribe(n int) *Subscription {
	c := make(chan Event, n)
	s := &Subscription{C: c, c: c, bus: b}
	b.mu.Lock()
	b.subs[s] = struct{}{}
	b.count.Store(int64(len(b.subs)))
	b.mu.Unlock()
	return s
}

// Close unregisters the subscription.
func (s *Subscription) Close() {
	s.once.Do(func() {
		s.bus.mu.Lock()
		delete(s.bus.subs, s)
		s.bus.count.Store(int64(len(s.bus.subs)))
		s.bus.mu.Unlock()
	})
}

// Dropped reports how many events this subscriber missed.
func (s *Subscription) Dropped() int64 { return s.dropped.Load() }

// Publish sends an event of type typ carrying data (marshalled to JSON).
func (b *Bus) Publish(typ string, data any) {
	if b.Subscribers() == 0 {
		return
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return
	}
	b.PublishJSON(typ, raw)
}

// PublishJSON sends an event of type typ carrying raw, a JSON value the
// caller encoded itself and no longer modifies (the subscribers keep it):
// for events published on the request path, where a map and reflection per
// request would cost more than the request's own work.
func (b *Bus) PublishJSON(typ string, raw []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.subs) == 0 {
		return
	}
	ev := Event{ID: b.nextID.Add(1), Type: typ, At: b.now(), Data: raw}
	for s := range b.subs {
		select {
		case s.c <- ev:
		default:
			s.dropped.Add(1)
		}
	}
}

// Subscribers reports the number of live subscriptions.
func (b *Bus) Subscribers() int { return int(b.count.Load()) }
