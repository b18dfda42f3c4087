package breaker

import (
	"sort"
	"sync"

	"omniroute/backend/clock"
)

// Registry holds one Breaker per provider, created on demand. It is safe for
// concurrent use.
type Registry struct {
	clk        clock.Clock
	profileFor func(provider string) Profile
	onChange   func(Snapshot)

	mu       sync.RWMutex
	breakers map[string]*Breaker
}

// NewRegistry returns an empty registry. profileFor picks each new breaker's
// profile (nil means DefaultProfile("apikey")); onChange (may be nil) is passed
// to every breaker.
func NewRegistry(clk clock.Clock, profileFor func(provider string) Profile, onChange func(Snapshot)) *Registry {
	if clk == nil {
		clk = clock.Real{}
	}
	if profileFor == nil {
		profileFor = func(string) Profile { return DefaultProfile(CategoryAPIKey) }
	}
	return &Registry{clk: clk, profileFor: profileFor, onChange: onChange, breakers: map[string]*Breaker{}}
}

// Get returns the provider's breaker, creating it on first use.
func (r *Registry) Get(provider string) *Breaker {
	r.mu.RLock()
	b := r.breakers[provider]
	r.mu.RUnlock()
	if b != nil {
		return b
	}
	p := r.profileFor(provider) // outside the lock: profileFor may be slow or re-enter
	r.mu.Lock()
	defer r.mu.Unlock()
	if b = r.breakers[provider]; b == nil {
		b = New(provider, p, r.clk, r.onChange)
		r.breakers[provider] = b
	}
	return b
}

// all returns the current breakers sorted by provider.
func (r *Registry) all() []*Breaker {
	r.mu.RLock()
	out := make([]*Breaker, 0, len(r.breakers))
	for _, b := range r.breakers {
		out = append(out, b)
	}
	r.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].provider < out[j].provider })
	return out
}

// Snapshots returns every breaker's status (after lazy recovery), sorted by provider.
func (r *Registry) Snapshots() []Snapshot {
	bs := r.all()
	out := make([]Snapshot, len(bs))
	for i, b := range bs {
		out[i] = b.Status()
	}
	return out
}

// ResetAll resets every breaker to CLOSED and returns how many were not CLOSED.
func (r *Registry) ResetAll() int {
	n := 0
	for _, b := range r.all() {
		if b.reset() != Closed {
			n++
		}
	}
	return n
}

// Restore loads persisted snapshots (one per provider, empty providers skipped),
// creating breakers as needed.
func (r *Registry) Restore(snaps []Snapshot) {
	for _, s := range snaps {
		if s.Provider == "" {
			continue
		}
		r.Get(s.Provider).Restore(s)
	}
}

// Counts returns how many breakers are in each state (after lazy recovery) and the total.
func (r *Registry) Counts() (open, halfOpen, degraded, closed, total int) {
	for _, b := range r.all() {
		switch b.State() {
		case Open:
			open++
		case HalfOpen:
			halfOpen++
		case Degraded:
			degraded++
		default:
			closed++
		}
		total++
	}
	return open, halfOpen, degraded, closed, total
}
