package breaker

import (
	"sync"
	"time"

	"omniroute/backend/clock"
)

// Normalize bounds for WindowProfile durations.
const (
	minWindowDuration = time.Second
	maxWindowDuration = 24 * time.Hour
)

// WindowProfile tunes the optional provider cooldown gate: FailureThreshold
// failures within Window put the provider in cooldown for Cooldown.
type WindowProfile struct {
	FailureThreshold int
	Window           time.Duration
	Cooldown         time.Duration
}

// DefaultWindowProfile returns the built-in window gate profile for a category
// ("oauth" 10/15min/5min, "apikey" 15/30min/10min, "local" 2/5min/1min); any other
// category gets "apikey".
func DefaultWindowProfile(category string) WindowProfile {
	switch category {
	case CategoryOAuth:
		return WindowProfile{FailureThreshold: 10, Window: 15 * time.Minute, Cooldown: 5 * time.Minute}
	case CategoryLocal:
		return WindowProfile{FailureThreshold: 2, Window: 5 * time.Minute, Cooldown: time.Minute}
	default:
		return WindowProfile{FailureThreshold: 15, Window: 30 * time.Minute, Cooldown: 10 * time.Minute}
	}
}

// Normalize clamps silly values: FailureThreshold ≥ 1, Window and Cooldown in [1s, 24h].
func (p WindowProfile) Normalize() WindowProfile {
	if p.FailureThreshold < 1 {
		p.FailureThreshold = 1
	}
	p.Window = clampDur(p.Window, minWindowDuration, maxWindowDuration)
	p.Cooldown = clampDur(p.Cooldown, minWindowDuration, maxWindowDuration)
	return p
}

// WindowProfilesFromEnv returns the default window profiles for "oauth", "apikey"
// and "local", overridden by OMNIROUTE_PROVIDER_BREAKER_{OAUTH,API_KEY,LOCAL}_
// {FAILURE_THRESHOLD,FAILURE_WINDOW_MS,COOLDOWN_MS}; non-positive or unparsable values are ignored.
func WindowProfilesFromEnv(getenv func(string) string) map[string]WindowProfile {
	cats := envCategories()
	out := make(map[string]WindowProfile, len(cats))
	for _, c := range cats {
		p := DefaultWindowProfile(c.category)
		prefix := "OMNIROUTE_PROVIDER_BREAKER_" + c.env + "_"
		if v, ok := envPositive(getenv, prefix+"FAILURE_THRESHOLD"); ok {
			p.FailureThreshold = clampInt(v)
		}
		if v, ok := envPositive(getenv, prefix+"FAILURE_WINDOW_MS"); ok {
			p.Window = msToDuration(v)
		}
		if v, ok := envPositive(getenv, prefix+"COOLDOWN_MS"); ok {
			p.Cooldown = msToDuration(v)
		}
		out[c.category] = p.Normalize()
	}
	return out
}

// WindowGate remembers recent provider failures across requests so combo routing
// can skip a provider that just failed FailureThreshold times within Window.
// Whether the gate is consulted at all (PROVIDER_COOLDOWN_ENABLED) is the caller's
// decision. It is safe for concurrent use.
type WindowGate struct {
	clk        clock.Clock
	profileFor func(provider string) WindowProfile

	mu      sync.Mutex
	entries map[string]*windowEntry
}

// windowEntry is one provider's failure window and cooldown deadline.
type windowEntry struct {
	failures []time.Time // failure times inside the window, oldest first
	until    time.Time   // cooldown deadline; zero when not cooling
}

// NewWindowGate returns an empty gate. profileFor picks each provider's window
// profile at every call (nil means DefaultWindowProfile("apikey")).
func NewWindowGate(clk clock.Clock, profileFor func(provider string) WindowProfile) *WindowGate {
	if clk == nil {
		clk = clock.Real{}
	}
	if profileFor == nil {
		profileFor = func(string) WindowProfile { return DefaultWindowProfile(CategoryAPIKey) }
	}
	return &WindowGate{clk: clk, profileFor: profileFor, entries: map[string]*windowEntry{}}
}

// RecordFailure counts one provider failure at now. Failures older than Window no
// longer count; reaching FailureThreshold starts a Cooldown and empties the window.
// Failures arriving while already cooling are ignored (they never extend it).
func (g *WindowGate) RecordFailure(provider string) {
	p := g.profileFor(provider).Normalize()
	now := g.clk.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	e := g.entries[provider]
	if e == nil {
		e = &windowEntry{}
		g.entries[provider] = e
	}
	if now.Before(e.until) {
		return
	}
	e.until = time.Time{}
	e.failures = pruneWindow(e.failures, now, p.Window)
	e.failures = append(e.failures, now)
	if len(e.failures) >= p.FailureThreshold {
		e.until = now.Add(p.Cooldown)
		e.failures = nil
	}
}

// RecordSuccess clears the provider's failure window and ends any cooldown:
// the provider has just proved it answers.
func (g *WindowGate) RecordSuccess(provider string) {
	g.mu.Lock()
	delete(g.entries, provider)
	g.mu.Unlock()
}

// CoolingDown reports whether the provider is in cooldown at now and for how long
// still; the deadline itself is not cooling (expiry is exclusive).
func (g *WindowGate) CoolingDown(provider string) (bool, time.Duration) {
	now := g.clk.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	e := g.entries[provider]
	if e == nil {
		return false, 0
	}
	if now.Before(e.until) {
		return true, e.until.Sub(now)
	}
	if len(e.failures) == 0 {
		delete(g.entries, provider) // lazy cleanup of an expired, empty entry
	}
	return false, 0
}

// ResetAll forgets every window and cooldown (operator reset) and returns how
// many providers were cooling down.
func (g *WindowGate) ResetAll() int {
	now := g.clk.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, e := range g.entries {
		if now.Before(e.until) {
			n++
		}
	}
	clear(g.entries)
	return n
}

// Reset forgets one provider's window and cooldown (operator reset) and
// reports whether it was cooling down.
func (g *WindowGate) Reset(provider string) bool {
	now := g.clk.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	e := g.entries[provider]
	delete(g.entries, provider)
	return e != nil && now.Before(e.until)
}

// pruneWindow drops failures at or older than window before now (a failure exactly
// Window old is outside the window), reusing the slice.
func pruneWindow(fs []time.Time, now time.Time, window time.Duration) []time.Time {
	keep := fs[:0]
	for _, t := range fs {
		if now.Sub(t) < window {
			keep = append(keep, t)
		}
	}
	return keep
}
