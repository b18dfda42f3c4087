package routing

import (
	"sync"
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/providers/registry"
	"omniroute/backend/resilience/breaker"
	"omniroute/backend/resilience/cooldown"
	"omniroute/backend/resilience/lockout"
	"omniroute/backend/store"
)

// savedCooldowns records what the engine writes back.
type savedCooldowns struct {
	mu   sync.Mutex
	rows map[string]store.CooldownFields
}

func (s *savedCooldowns) SaveCooldown(id string, f store.CooldownFields) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows[id] = f
	return nil
}

// TestClampCooldownsAtLoad: a loaded cooldown deadline further than now +
// the longest cooldown the connection's settings can set (24 h with the
// defaults: an announced quota reset) is clamped to exactly that and written
// back; one at the bound or earlier loads as it is.
func TestClampCooldownsAtLoad(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(now)
	def := cooldown.DefaultSettings("apikey").MaxCooldown()
	if def != cooldown.MaxQuotaCooldown {
		t.Fatalf("default MaxCooldown = %v, want %v", def, cooldown.MaxQuotaCooldown)
	}
	// A ladder configured past 24 h: 10 min × 2^15.
	bigLadder := `{"baseCooldownMs":600000,"maxBackoffSteps":15}`
	ladderMax := 10 * time.Minute << 15
	year := 365 * 24 * time.Hour
	for _, tc := range []struct {
		name      string
		until     time.Time
		overrides string
		want      time.Time // the deadline after the load
	}{
		{"a year ahead", now.Add(year), "{}", now.Add(def)},
		{"1 ms past the bound", now.Add(def + time.Millisecond), "{}", now.Add(def)},
		{"at the bound", now.Add(def), "{}", now.Add(def)},
		{"an ordinary cooldown", now.Add(90 * time.Second), "{}", now.Add(90 * time.Second)},
		{"expired", now.Add(-time.Hour), "{}", now.Add(-time.Hour)},
		{"none", time.Time{}, "{}", time.Time{}},
		{"a year ahead, a longer ladder configured", now.Add(year), bigLadder, now.Add(ladderMax)},
		{"within a longer ladder configured", now.Add(30 * 24 * time.Hour), bigLadder, now.Add(30 * 24 * time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := NewRegistry(registry.Catalog(nil))
			row := store.Connection{ID: "c", Provider: "openai", Name: "c", Priority: 1, IsActive: true, Models: `["m"]`,
				RateLimitOverrides: tc.overrides, TestStatus: cooldown.StatusUnavailable, LastErrorAt: tc.until.UnixMilli()}
			if !tc.until.IsZero() {
				row.RateLimitedUntil = tc.until.UnixMilli()
			}
			if err := reg.Load([]store.Connection{row}, plainBox{}); err != nil {
				t.Fatal(err)
			}
			saved := &savedCooldowns{rows: map[string]store.CooldownFields{}}
			e := NewEngine(EngineDeps{Registry: reg, Clock: clk, Lockouts: lockout.New(clk), Store: saved, Policy: testPolicy{},
				Breakers: breaker.NewRegistry(clk, func(string) breaker.Profile { return breaker.DefaultProfile("apikey") }, nil)})
			clamped := e.ClampCooldowns()
			c, _ := reg.Get("c")
			if got := c.Cooldown().RateLimitedUntil; !got.Equal(tc.want) {
				t.Fatalf("deadline after load = %v, want %v", got, tc.want)
			}
			wantClamp := tc.until.After(tc.want)
			if (len(clamped) == 1) != wantClamp {
				t.Fatalf("clamped = %v, want clamped %v", clamped, wantClamp)
			}
			f, wrote := saved.rows["c"]
			if wrote != wantClamp || (wrote && f.RateLimitedUntil != tc.want.UnixMilli()) {
				t.Fatalf("written back: %v %+v; want written %v with the clamped deadline", wrote, f, wantClamp)
			}
			if wrote && f.LastErrorAt > now.UnixMilli() {
				t.Fatalf("last error time still in the future: %d", f.LastErrorAt)
			}
		})
	}
}
