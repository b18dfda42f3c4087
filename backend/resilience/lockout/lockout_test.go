package lockout_test

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"omniroute/backend/clock"
	"omniroute/backend/resilience/lockout"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// start is the fixed instant tests begin at.
func start() time.Time { return time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC) }

// newTable returns a table on a fake clock at start() with the made-up
// quota families of families.
func newTable() (*lockout.Table, *clock.Fake) {
	clk := clock.NewFake(start())
	return lockout.NewFamilies(clk, families), clk
}

// families are the tests' made-up quota families: provider acme's models
// named "big-…" share the family "big", its "mid-…" ones "mid"; every other
// model (and every model of another provider) is its own family.
func families(provider, model string) string {
	if provider != "acme" {
		return model
	}
	if fam, _, ok := strings.Cut(model, "-"); ok && (fam == "big" || fam == "mid") {
		return fam
	}
	return model
}

// enabled is DefaultSettings with the master switch on.
func enabled() lockout.Settings {
	s := lockout.DefaultSettings()
	s.Enabled = true
	return s
}

func TestDefaultSettings(t *testing.T) {
	want := lockout.Settings{
		Enabled:               false,
		ErrorCodes:            []int{403, 404, 429, 502, 503, 504},
		BaseCooldown:          120 * time.Second,
		MaxCooldown:           30 * time.Minute,
		MaxBackoffSteps:       10,
		UseExponentialBackoff: true,
	}
	got := lockout.DefaultSettings()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if !reflect.DeepEqual(got.Normalize(), got) {
		t.Fatal("defaults are not normalized")
	}
	// Each call returns its own slice: no shared mutable state.
	got.ErrorCodes[0] = 999
	if lockout.DefaultSettings().ErrorCodes[0] != 403 {
		t.Fatal("DefaultSettings shares its ErrorCodes slice")
	}
}

func TestSettingsNormalize(t *testing.T) {
	tests := []struct {
		name      string
		in        lockout.Settings
		base, max time.Duration
		steps     int
	}{
		{"zero value", lockout.Settings{}, 120 * time.Second, 120 * time.Second, 0},
		{"negative base", lockout.Settings{BaseCooldown: -time.Second, MaxCooldown: time.Hour}, 120 * time.Second, time.Hour, 0},
		{"max below base", lockout.Settings{BaseCooldown: 10 * time.Minute, MaxCooldown: time.Minute}, 10 * time.Minute, 10 * time.Minute, 0},
		{"max above 24h", lockout.Settings{BaseCooldown: time.Minute, MaxCooldown: 48 * time.Hour}, time.Minute, 24 * time.Hour, 0},
		{"base above 24h", lockout.Settings{BaseCooldown: 30 * time.Hour, MaxCooldown: 40 * time.Hour}, 24 * time.Hour, 24 * time.Hour, 0},
		{"negative steps", lockout.Settings{BaseCooldown: time.Second, MaxCooldown: time.Minute, MaxBackoffSteps: -3}, time.Second, time.Minute, 0},
		{"kept", lockout.Settings{BaseCooldown: time.Second, MaxCooldown: time.Minute, MaxBackoffSteps: 7}, time.Second, time.Minute, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in.Normalize()
			if got.BaseCooldown != tt.base || got.MaxCooldown != tt.max || got.MaxBackoffSteps != tt.steps {
				t.Fatalf("got base=%v max=%v steps=%d, want %v %v %d", got.BaseCooldown, got.MaxCooldown, got.MaxBackoffSteps, tt.base, tt.max, tt.steps)
			}
		})
	}
}

func TestSettingsCounts(t *testing.T) {
	def := lockout.DefaultSettings()
	no502 := lockout.Settings{ErrorCodes: []int{429, 503}}
	tests := []struct {
		name   string
		s      lockout.Settings
		status int
		want   bool
	}{
		{"403", def, 403, true},
		{"404", def, 404, true},
		{"429", def, 429, true},
		{"502", def, 502, true},
		{"503", def, 503, true},
		{"504", def, 504, true},
		{"500 not listed", def, 500, false},
		{"400 not listed", def, 400, false},
		{"402 not listed", def, 402, false},
		{"transport counts as 502", def, 0, true},
		{"transport without 502", no502, 0, false},
		{"custom 503", no502, 503, true},
		{"empty list", lockout.Settings{}, 429, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.Counts(tt.status); got != tt.want {
				t.Fatalf("Counts(%d) = %v, want %v", tt.status, got, tt.want)
			}
		})
	}
}

func TestSettingsShouldLock(t *testing.T) {
	tests := []struct {
		name   string
		s      lockout.Settings
		status int
		want   bool
	}{
		{"disabled by default", lockout.DefaultSettings(), 429, false},
		{"enabled and listed", enabled(), 429, true},
		{"enabled transport", enabled(), 0, true},
		{"enabled not listed", enabled(), 500, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.ShouldLock(tt.status); got != tt.want {
				t.Fatalf("ShouldLock(%d) = %v, want %v", tt.status, got, tt.want)
			}
		})
	}
}

func TestEntryRemaining(t *testing.T) {
	exp := start().Add(time.Minute)
	e := lockout.Entry{ExpiresAt: exp}
	tests := []struct {
		name   string
		now    time.Time
		want   time.Duration
		active bool
	}{
		{"before", start(), time.Minute, true},
		{"1ms before", exp.Add(-time.Millisecond), time.Millisecond, true},
		{"at expiry", exp, 0, false},
		{"after", exp.Add(time.Hour), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := e.Remaining(tt.now); got != tt.want {
				t.Fatalf("Remaining = %v, want %v", got, tt.want)
			}
			if got := e.Active(tt.now); got != tt.active {
				t.Fatalf("Active = %v, want %v", got, tt.active)
			}
		})
	}
}

// TestExpiryBoundary pins the documented choice: a lock holds while now <
// ExpiresAt, so it is still locked 1 ms before expiry and unlocked exactly at it.
func TestExpiryBoundary(t *testing.T) {
	tests := []struct {
		name   string
		offset time.Duration // from ExpiresAt
		locked bool
	}{
		{"expiry -1ms", -time.Millisecond, true},
		{"expiry -1ns", -time.Nanosecond, true},
		{"exactly at expiry", 0, false},
		{"expiry +1ms", time.Millisecond, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, clk := newTable()
			e := tab.RecordFailure("acme", "c1", "mid-pro", 503, "unavailable", "", enabled(), 0)
			if want := start().Add(120 * time.Second); !e.ExpiresAt.Equal(want) {
				t.Fatalf("ExpiresAt = %v, want %v", e.ExpiresAt, want)
			}
			clk.Set(e.ExpiresAt.Add(tt.offset))
			_, locked := tab.Locked("acme", "c1", "mid-pro")
			if locked != tt.locked {
				t.Fatalf("Locked = %v, want %v", locked, tt.locked)
			}
			wantN := 0
			if tt.locked {
				wantN = 1
			}
			if n := tab.Count(); n != wantN {
				t.Fatalf("Count = %d, want %d", n, wantN)
			}
			if n := len(tab.List()); n != wantN {
				t.Fatalf("len(List) = %d, want %d", n, wantN)
			}
		})
	}
}

// failAfterExpiry records n failures, each one exactly when the previous lock
// expires (inside the escalation window), returning each lock's duration and count.
func failAfterExpiry(t *testing.T, s lockout.Settings, n int, hint time.Duration) (cds []time.Duration, counts []int) {
	t.Helper()
	tab, clk := newTable()
	for i := 0; i < n; i++ {
		now := clk.Now()
		e := tab.RecordFailure("acme", "c1", "big-1", 429, "quota", "", s, hint)
		cds = append(cds, e.ExpiresAt.Sub(now))
		counts = append(counts, e.FailureCount)
		clk.Set(e.ExpiresAt)
	}
	return cds, counts
}

func TestEscalation(t *testing.T) {
	def := enabled()
	steps3 := lockout.Settings{BaseCooldown: time.Second, MaxCooldown: time.Hour, MaxBackoffSteps: 3, UseExponentialBackoff: true}
	steps0 := lockout.Settings{BaseCooldown: time.Second, MaxCooldown: time.Hour, MaxBackoffSteps: 0, UseExponentialBackoff: true}
	constant := enabled()
	constant.UseExponentialBackoff = false
	s := time.Second
	tests := []struct {
		name string
		s    lockout.Settings
		want []time.Duration
	}{
		{"defaults double then cap at 30 min", def, []time.Duration{120 * s, 240 * s, 480 * s, 960 * s, 30 * time.Minute, 30 * time.Minute, 30 * time.Minute}},
		{"capped by MaxBackoffSteps", steps3, []time.Duration{s, 2 * s, 4 * s, 8 * s, 8 * s, 8 * s}},
		{"zero steps is constant", steps0, []time.Duration{s, s, s}},
		{"non-exponential constant", constant, []time.Duration{120 * s, 120 * s, 120 * s, 120 * s}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cds, counts := failAfterExpiry(t, tt.s, len(tt.want), 0)
			if !reflect.DeepEqual(cds, tt.want) {
				t.Fatalf("cooldowns = %v, want %v", cds, tt.want)
			}
			for i, c := range counts {
				if c != i+1 {
					t.Fatalf("counts = %v, want 1..%d", counts, len(counts))
				}
			}
		})
	}
}

func TestEscalationLargeSteps(t *testing.T) {
	// Many steps with a 24 h cap must not overflow.
	s := lockout.Settings{BaseCooldown: time.Nanosecond, MaxCooldown: 100 * time.Hour, MaxBackoffSteps: 1000, UseExponentialBackoff: true}
	tab, clk := newTable()
	var e lockout.Entry
	for i := 0; i < 80; i++ {
		e = tab.RecordFailure("p", "c", "m", 500, "", "", s, 0)
		clk.Set(e.ExpiresAt)
	}
	if got := e.ExpiresAt.Sub(e.LockedAt); got != 24*time.Hour {
		t.Fatalf("cooldown = %v, want 24h", got)
	}
}

func TestHint(t *testing.T) {
	wide := enabled()
	wide.MaxCooldown = 48 * time.Hour // normalized to 24 h
	tests := []struct {
		name string
		s    lockout.Settings
		hint time.Duration
		want time.Duration
	}{
		{"no hint", enabled(), 0, 120 * time.Second},
		{"negative hint ignored", enabled(), -time.Minute, 120 * time.Second},
		{"shorter hint loses", enabled(), 30 * time.Second, 120 * time.Second},
		{"longer hint wins", enabled(), 10 * time.Minute, 10 * time.Minute},
		{"hint capped at MaxCooldown", enabled(), 2 * time.Hour, 30 * time.Minute},
		{"hint capped at 24h", wide, 72 * time.Hour, 24 * time.Hour},
		{"hint under 24h kept", wide, 23 * time.Hour, 23 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, _ := newTable()
			e := tab.RecordFailure("zeta", "c1", "gpt-4o", 429, "rate", "", tt.s, tt.hint)
			if got := e.ExpiresAt.Sub(e.LockedAt); got != tt.want {
				t.Fatalf("cooldown = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestHintDoesNotResetEscalation(t *testing.T) {
	tab, clk := newTable()
	s := enabled()
	e := tab.RecordFailure("zeta", "c1", "gpt-4o", 429, "", "", s, 10*time.Minute)
	clk.Set(e.ExpiresAt)
	e = tab.RecordFailure("zeta", "c1", "gpt-4o", 429, "", "", s, 0)
	if e.FailureCount != 2 || e.ExpiresAt.Sub(e.LockedAt) != 240*time.Second {
		t.Fatalf("got count %d cooldown %v, want 2 and 240s", e.FailureCount, e.ExpiresAt.Sub(e.LockedAt))
	}
}

// TestEscalationWindow: the window runs from the failure until ExpiresAt +
// MaxCooldown (120 s + 30 min with defaults); half-open like the lock itself.
func TestEscalationWindow(t *testing.T) {
	window := 120*time.Second + 30*time.Minute
	tests := []struct {
		name      string
		at        time.Duration // second failure, from the first
		wantCount int
		wantCD    time.Duration
	}{
		{"while locked: a herd, no escalation, expiry kept", time.Second, 1, 119 * time.Second},
		{"at expiry", 120 * time.Second, 2, 240 * time.Second},
		{"window -1ms", window - time.Millisecond, 2, 240 * time.Second},
		{"exactly at window end", window, 1, 120 * time.Second},
		{"window +1ms", window + time.Millisecond, 1, 120 * time.Second},
		{"a day later", 24 * time.Hour, 1, 120 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, clk := newTable()
			tab.RecordFailure("acme", "c1", "big-1", 429, "", "", enabled(), 0)
			clk.Set(start().Add(tt.at))
			e := tab.RecordFailure("acme", "c1", "big-1", 429, "", "", enabled(), 0)
			if e.FailureCount != tt.wantCount {
				t.Fatalf("FailureCount = %d, want %d", e.FailureCount, tt.wantCount)
			}
			if cd := e.ExpiresAt.Sub(clk.Now()); cd != tt.wantCD {
				t.Fatalf("cooldown = %v, want %v", cd, tt.wantCD)
			}
		})
	}
}

func TestEscalationSurvivesList(t *testing.T) {
	// An expired lock still inside its window is unlisted, yet still escalates.
	tab, clk := newTable()
	e := tab.RecordFailure("acme", "c1", "big-1", 429, "", "", enabled(), 0)
	clk.Set(e.ExpiresAt.Add(time.Minute))
	if n := len(tab.List()); n != 0 {
		t.Fatalf("List has %d entries after expiry, want 0", n)
	}
	if n := tab.Count(); n != 0 {
		t.Fatalf("Count = %d, want 0", n)
	}
	if e := tab.RecordFailure("acme", "c1", "big-1", 429, "", "", enabled(), 0); e.FailureCount != 2 {
		t.Fatalf("FailureCount = %d, want 2", e.FailureCount)
	}
}

func TestActiveLockNeverShortened(t *testing.T) {
	tab, clk := newTable()
	long := tab.RecordFailure("zeta", "c1", "gpt-4o", 429, "", "", enabled(), 20*time.Minute)
	clk.Advance(time.Minute)
	e := tab.RecordFailure("zeta", "c1", "gpt-4o", 429, "again", "", enabled(), 0)
	if e.FailureCount != 1 || !e.ExpiresAt.Equal(long.ExpiresAt) {
		t.Fatalf("got count %d expires %v, want 1 (herd) and %v", e.FailureCount, e.ExpiresAt, long.ExpiresAt)
	}
	if e.Reason != "again" || !e.LockedAt.Equal(clk.Now()) {
		t.Fatalf("latest failure not recorded: %+v", e)
	}
}

func TestEntryFields(t *testing.T) {
	tests := []struct {
		name     string
		provider string
		conn     string
		model    string
		status   int
		explicit lockout.Scope
		scope    lockout.Scope
		key      string
	}{
		{"429 family", "acme", "c1", "big-1-x", 429, "", lockout.ScopeQuotaFamily, "acme:c1:family:big"},
		{"404 model", "ollama-local", "c2", "llama3", 404, "", lockout.ScopeModel, "ollama-local:c2:llama3"},
		{"500 exact", "zeta", "c3", "gpt-4o", 500, "", lockout.ScopeExact, "zeta:c3:exact:gpt-4o"},
		{"transport exact", "zeta", "c3", "gpt-4o", 0, "", lockout.ScopeExact, "zeta:c3:exact:gpt-4o"},
		{"explicit exact 429", "zeta", "c4", "solo-3", 429, lockout.ScopeExact, lockout.ScopeExact, "zeta:c4:exact:solo-3"},
		{"mid family", "acme", "c5", "mid-pro-preview", 429, "", lockout.ScopeQuotaFamily, "acme:c5:family:mid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, _ := newTable()
			e := tab.RecordFailure(tt.provider, tt.conn, tt.model, tt.status, "why", tt.explicit, enabled(), 0)
			want := lockout.Entry{
				Provider: tt.provider, ConnectionID: tt.conn, Model: tt.model, Scope: tt.scope,
				Key: tt.key, Reason: "why", Status: tt.status, FailureCount: 1,
				LockedAt: start(), ExpiresAt: start().Add(120 * time.Second),
			}
			if e != want {
				t.Fatalf("got %+v\nwant %+v", e, want)
			}
			got, ok := tab.Locked(tt.provider, tt.conn, tt.model)
			if !ok || got != want {
				t.Fatalf("Locked = %+v, %v", got, ok)
			}
		})
	}
}

type probe struct {
	provider, conn, model string
	locked                bool
}

func TestScopeReach(t *testing.T) {
	tests := []struct {
		name                  string
		provider, conn, model string
		status                int
		explicit              lockout.Scope
		probes                []probe
	}{
		{
			name: "429 on big-1 locks the big family of that connection", provider: "acme", conn: "A", model: "big-1", status: 429,
			probes: []probe{
				{"acme", "A", "big-1", true},
				{"acme", "A", "big-mini", true},
				{"acme", "A", "big-1-x", true},
				{"acme", "B", "big-mini", false},
				{"acme", "B", "big-1", false},
				{"acme", "A", "gpt-4o", false},
				{"zeta", "A", "big-mini", false},
			},
		},
		{
			name: "403 locks the family, not another", provider: "acme", conn: "A", model: "mid-4-5", status: 403,
			probes: []probe{
				{"acme", "A", "mid-4-20250514", true},
				{"acme", "A", "big-4-1", false},
			},
		},
		{
			name: "404 locks only that model", provider: "acme", conn: "A", model: "big-1", status: 404,
			probes: []probe{
				{"acme", "A", "big-1", true},
				{"acme", "A", "big-mini", false},
				{"acme", "B", "big-1", false},
			},
		},
		{
			name: "500 locks only the exact tuple", provider: "acme", conn: "A", model: "big-6", status: 500,
			probes: []probe{
				{"acme", "A", "big-6", true},
				{"acme", "A", "big-mini", false},
				{"acme", "A", "big-1", false},
				{"acme", "B", "big-6", false},
			},
		},
		{
			name: "synthesised 502 locks only the exact tuple", provider: "acme", conn: "A", model: "mid-pro", status: 502,
			probes: []probe{
				{"acme", "A", "mid-pro", true},
				{"acme", "A", "mid-pro-preview", false},
			},
		},
		{
			name: "explicit exact on a 429 does not spread", provider: "acme", conn: "A", model: "big-1", status: 429, explicit: lockout.ScopeExact,
			probes: []probe{
				{"acme", "A", "big-1", true},
				{"acme", "A", "big-mini", false},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, _ := newTable()
			tab.RecordFailure(tt.provider, tt.conn, tt.model, tt.status, "", tt.explicit, enabled(), 0)
			for _, p := range tt.probes {
				if _, got := tab.Locked(p.provider, p.conn, p.model); got != p.locked {
					t.Errorf("Locked(%s, %s, %s) = %v, want %v", p.provider, p.conn, p.model, got, p.locked)
				}
			}
		})
	}
}

func TestScopesAreSeparateKeys(t *testing.T) {
	tab, _ := newTable()
	tab.RecordFailure("acme", "A", "big-1", 500, "", "", enabled(), 0)
	tab.RecordFailure("acme", "A", "big-1", 404, "", "", enabled(), 0)
	e := tab.RecordFailure("acme", "A", "big-1", 429, "", "", enabled(), 0)
	if e.FailureCount != 1 {
		t.Fatalf("family FailureCount = %d, want 1 (own key)", e.FailureCount)
	}
	if n := tab.Count(); n != 3 {
		t.Fatalf("Count = %d, want 3", n)
	}
}

func TestLockedReturnsLatestExpiry(t *testing.T) {
	tab, clk := newTable()
	tab.RecordFailure("acme", "A", "big-1", 429, "family", "", enabled(), 0) // 120 s
	tab.RecordFailure("acme", "A", "big-1", 500, "exact", "", enabled(), 0)  // 120 s (tie)
	tab.RecordFailure("acme", "A", "big-1", 404, "model", "", enabled(), 15*time.Minute)
	tab.RecordFailure("acme", "A", "big-mini", 429, "sib", "", enabled(), time.Minute) // family again, count 2
	e, ok := tab.Locked("acme", "A", "big-1")
	if !ok || e.Scope != lockout.ScopeModel || e.Reason != "model" {
		t.Fatalf("Locked = %+v, %v; want the 15 min model entry", e, ok)
	}
	clk.Advance(15 * time.Minute)
	if _, ok := tab.Locked("acme", "A", "big-1"); ok {
		t.Fatal("still locked after every entry expired")
	}
	// Tie between exact and family at the same expiry: the narrower (exact) wins.
	tab2, _ := newTable()
	tab2.RecordFailure("acme", "A", "big-1", 429, "family", "", enabled(), 0)
	tab2.RecordFailure("acme", "A", "big-1", 500, "exact", "", enabled(), 0)
	if e, _ := tab2.Locked("acme", "A", "big-1"); e.Scope != lockout.ScopeExact {
		t.Fatalf("tie went to %q, want exact", e.Scope)
	}
}

func TestDecay(t *testing.T) {
	tab, clk := newTable()
	var e lockout.Entry
	for i := 0; i < 5; i++ {
		if i > 0 {
			clk.Set(e.ExpiresAt) // each failure after the previous lock: escalates
		}
		e = tab.RecordFailure("acme", "A", "big-1", 429, "", "", enabled(), 0)
	}
	if e.FailureCount != 5 {
		t.Fatalf("FailureCount = %d, want 5", e.FailureCount)
	}
	clk.Advance(time.Second) // well before the timer
	steps := []struct {
		count   int // after this Decay; 0 = removed
		removed int
	}{{2, 0}, {1, 0}, {0, 1}}
	for i, st := range steps {
		// Decay via a sibling of the family: success anywhere in the family counts.
		if got := tab.Decay("acme", "A", "big-mini"); got != st.removed {
			t.Fatalf("step %d: Decay removed %d, want %d", i, got, st.removed)
		}
		got, locked := tab.Locked("acme", "A", "big-1")
		if st.count == 0 {
			if locked {
				t.Fatalf("step %d: still locked after count reached 0", i)
			}
			continue
		}
		if !locked || got.FailureCount != st.count || !got.ExpiresAt.Equal(e.ExpiresAt) {
			t.Fatalf("step %d: got %+v locked=%v, want count %d, timer unchanged", i, got, locked, st.count)
		}
	}
	if n := tab.Decay("acme", "A", "big-1"); n != 0 {
		t.Fatalf("Decay on nothing removed %d", n)
	}
	// After removal the next failure starts over.
	if e := tab.RecordFailure("acme", "A", "big-1", 429, "", "", enabled(), 0); e.FailureCount != 1 {
		t.Fatalf("FailureCount after decay to 0 = %d, want 1", e.FailureCount)
	}
}

// countingClock counts its reads.
type countingClock struct {
	clock.Fake
	reads int
}

func (c *countingClock) Now() time.Time { c.reads++; return c.Fake.Now() }

// Every success decays both tables of the engine; with nothing recorded (the
// common case) that must cost no clock read (≈ 70 ns each on the benchmark
// machine) and no key building, and still decay what a table holds.
func TestDecayOfEmptyTableReadsNoClock(t *testing.T) {
	clk := &countingClock{Fake: *clock.NewFake(start())}
	tab := lockout.New(clk)
	if n, gone := tab.DecayEntries("acme", "A", "big-1"); n != 0 || gone != nil {
		t.Fatalf("DecayEntries on an empty table = %d, %v", n, gone)
	}
	if _, locked := tab.Locked("acme", "A", "big-1"); locked || clk.reads != 0 {
		t.Fatalf("empty table: locked %v, %d clock reads, want none", locked, clk.reads)
	}
	tab.RecordFailure("acme", "A", "big-1", 500, "", "", enabled(), 0)
	if n, gone := tab.DecayEntries("acme", "A", "big-1"); n != 1 || len(gone) != 1 || tab.Count() != 0 {
		t.Fatalf("DecayEntries of one entry = %d, %v, %d left", n, gone, tab.Count())
	}
}

func TestDecayCoversAllScopes(t *testing.T) {
	tab, _ := newTable()
	tab.RecordFailure("acme", "A", "big-1", 500, "", "", enabled(), 0)
	tab.RecordFailure("acme", "A", "big-1", 404, "", "", enabled(), 0)
	tab.RecordFailure("acme", "A", "big-1", 429, "", "", enabled(), 0)
	tab.RecordFailure("acme", "B", "big-1", 500, "", "", enabled(), 0)  // other connection
	tab.RecordFailure("acme", "A", "gpt-4o", 500, "", "", enabled(), 0) // other model
	if n := tab.Decay("acme", "A", "big-1"); n != 3 {
		t.Fatalf("Decay removed %d, want 3", n)
	}
	if n := tab.Count(); n != 2 {
		t.Fatalf("Count = %d, want 2", n)
	}
}

func TestDecayExpiredInWindow(t *testing.T) {
	// A success after the lock expired still halves the escalation memory.
	tab, clk := newTable()
	var e lockout.Entry
	for i := 0; i < 4; i++ {
		if i > 0 {
			clk.Set(e.ExpiresAt)
		}
		e = tab.RecordFailure("zeta", "A", "gpt-4o", 503, "", "", enabled(), 0)
	}
	clk.Set(e.ExpiresAt)
	if n := tab.Decay("zeta", "A", "gpt-4o"); n != 0 {
		t.Fatalf("Decay removed %d active locks, want 0 (already expired)", n)
	}
	if e := tab.RecordFailure("zeta", "A", "gpt-4o", 503, "", "", enabled(), 0); e.FailureCount != 3 {
		t.Fatalf("FailureCount = %d, want 3 (4 halved to 2, then +1)", e.FailureCount)
	}
}

func TestLockFor(t *testing.T) {
	tests := []struct {
		name   string
		d      time.Duration
		want   time.Duration
		locked bool
	}{
		{"gemini 86399s", 86399 * time.Second, 86399 * time.Second, true},
		{"exactly 24h", 24 * time.Hour, 24 * time.Hour, true},
		{"capped at 24h", 72 * time.Hour, 24 * time.Hour, true},
		{"short", 90 * time.Second, 90 * time.Second, true},
		{"zero locks nothing", 0, 0, false},
		{"negative locks nothing", -time.Second, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, clk := newTable()
			e := tab.LockFor("acme", "A", "mid-pro", tt.d, "RetryInfo")
			if got := e.ExpiresAt.Sub(start()); got != tt.want {
				t.Fatalf("duration = %v, want %v", got, tt.want)
			}
			if e.Scope != lockout.ScopeExact || e.Key != "acme:A:exact:mid-pro" || e.FailureCount != 1 || e.Status != 429 {
				t.Fatalf("unexpected entry %+v", e)
			}
			if _, ok := tab.Locked("acme", "A", "mid-pro"); ok != tt.locked {
				t.Fatalf("Locked = %v, want %v", ok, tt.locked)
			}
			if _, ok := tab.Locked("acme", "A", "mid-pro-preview"); ok {
				t.Fatal("LockFor spread beyond the exact model")
			}
			if tt.locked {
				clk.Set(e.ExpiresAt.Add(-time.Millisecond))
				if _, ok := tab.Locked("acme", "A", "mid-pro"); !ok {
					t.Fatal("unlocked 1 ms before expiry")
				}
				clk.Set(e.ExpiresAt)
				if _, ok := tab.Locked("acme", "A", "mid-pro"); ok {
					t.Fatal("locked at expiry")
				}
			}
		})
	}
}

func TestLockForNoEscalation(t *testing.T) {
	tab, clk := newTable()
	first := tab.LockFor("acme", "A", "m", time.Hour, "")
	clk.Advance(time.Minute)
	again := tab.LockFor("acme", "A", "m", 10*time.Minute, "")
	if again.FailureCount != 1 {
		t.Fatalf("FailureCount = %d, want 1 (no escalation)", again.FailureCount)
	}
	if !again.ExpiresAt.Equal(first.ExpiresAt) {
		t.Fatalf("shorter LockFor shortened the lock: %v, want %v", again.ExpiresAt, first.ExpiresAt)
	}
	// LockFor keeps (does not raise or reset) an escalated exact count.
	tab2, clk2 := newTable()
	for i := 0; i < 3; i++ {
		e := tab2.RecordFailure("acme", "A", "m", 503, "", "", enabled(), 0)
		if i < 2 {
			clk2.Set(e.ExpiresAt)
		}
	}
	if e := tab2.LockFor("acme", "A", "m", time.Hour, ""); e.FailureCount != 3 || e.ExpiresAt.Sub(e.LockedAt) != time.Hour {
		t.Fatalf("got count %d duration %v, want 3 and 1h", e.FailureCount, e.ExpiresAt.Sub(e.LockedAt))
	}
	// No escalation window after a LockFor: a failure at its expiry starts at 1.
	clk.Set(first.ExpiresAt)
	if e := tab.RecordFailure("acme", "A", "m", 500, "", "", enabled(), 0); e.FailureCount != 1 {
		t.Fatalf("FailureCount after LockFor expiry = %d, want 1", e.FailureCount)
	}
}

// seed fills a table with a known set of locks, returning it.
func seed(t *testing.T) (*lockout.Table, *clock.Fake) {
	t.Helper()
	tab, clk := newTable()
	s := enabled()
	tab.RecordFailure("acme", "A", "big-1", 429, "", "", s, 5*time.Minute) // acme:A:family:big, 5 min
	tab.RecordFailure("acme", "A", "gpt-4o", 500, "", "", s, 0)            // acme:A:exact:gpt-4o, 2 min
	tab.RecordFailure("acme", "B", "big-1", 404, "", "", s, 3*time.Minute) // acme:B:big-1, 3 min
	tab.RecordFailure("zeta", "A", "big-1", 500, "", "", s, 0)             // zeta:A:exact:big-1, 2 min
	tab.RecordFailure("acme", "C", "mid-pro", 404, "", "", s, 0)           // acme:C:mid-pro, 2 min
	return tab, clk
}

// keys returns the entries' keys.
func keys(es []lockout.Entry) []string {
	out := make([]string, 0, len(es))
	for _, e := range es {
		out = append(out, e.Key)
	}
	return out
}

func TestList(t *testing.T) {
	tab, clk := seed(t)
	want := []string{
		"acme:A:exact:gpt-4o", "acme:C:mid-pro", "zeta:A:exact:big-1", // 2 min, by key
		"acme:B:big-1",      // 3 min
		"acme:A:family:big", // 5 min
	}
	if got := keys(tab.List()); !reflect.DeepEqual(got, want) {
		t.Fatalf("List = %v, want %v", got, want)
	}
	clk.Advance(2 * time.Minute)
	if got := keys(tab.List()); !reflect.DeepEqual(got, want[3:]) {
		t.Fatalf("List after 2 min = %v, want %v", got, want[3:])
	}
	if n := tab.Count(); n != 2 {
		t.Fatalf("Count = %d, want 2", n)
	}
	clk.Advance(3 * time.Minute)
	if got := tab.List(); len(got) != 0 {
		t.Fatalf("List after expiry = %v, want empty", keys(got))
	}
}

func TestClear(t *testing.T) {
	tests := []struct {
		name                  string
		provider, conn, model string
		removed               int
		left                  []string
	}{
		{"family member clears family lock", "acme", "A", "big-mini", 1,
			[]string{"acme:A:exact:gpt-4o", "acme:C:mid-pro", "zeta:A:exact:big-1", "acme:B:big-1"}},
		{"exact tuple", "acme", "A", "gpt-4o", 1,
			[]string{"acme:C:mid-pro", "zeta:A:exact:big-1", "acme:B:big-1", "acme:A:family:big"}},
		{"any model of provider+connection", "acme", "A", "", 2,
			[]string{"acme:C:mid-pro", "zeta:A:exact:big-1", "acme:B:big-1"}},
		{"any provider for model", "", "A", "big-1", 2,
			[]string{"acme:A:exact:gpt-4o", "acme:C:mid-pro", "acme:B:big-1"}},
		{"any provider, any model", "", "A", "", 3,
			[]string{"acme:C:mid-pro", "acme:B:big-1"}},
		{"connection must match", "acme", "Z", "", 0,
			[]string{"acme:A:exact:gpt-4o", "acme:C:mid-pro", "zeta:A:exact:big-1", "acme:B:big-1", "acme:A:family:big"}},
		{"other model untouched", "acme", "B", "big-mini", 0,
			[]string{"acme:A:exact:gpt-4o", "acme:C:mid-pro", "zeta:A:exact:big-1", "acme:B:big-1", "acme:A:family:big"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, _ := seed(t)
			if n := tab.Clear(tt.provider, tt.conn, tt.model); n != tt.removed {
				t.Fatalf("Clear removed %d, want %d", n, tt.removed)
			}
			if got := keys(tab.List()); !reflect.DeepEqual(got, tt.left) {
				t.Fatalf("left %v, want %v", got, tt.left)
			}
		})
	}
}

func TestClearResetsEscalation(t *testing.T) {
	tab, _ := newTable()
	tab.RecordFailure("acme", "A", "big-1", 429, "", "", enabled(), 0)
	tab.RecordFailure("acme", "A", "big-1", 429, "", "", enabled(), 0)
	tab.Clear("acme", "A", "big-1")
	if e := tab.RecordFailure("acme", "A", "big-1", 429, "", "", enabled(), 0); e.FailureCount != 1 {
		t.Fatalf("FailureCount after Clear = %d, want 1", e.FailureCount)
	}
}

func TestClearConnectionAndAll(t *testing.T) {
	tab, clk := seed(t)
	if n := tab.ClearConnection("A"); n != 3 {
		t.Fatalf("ClearConnection(A) removed %d, want 3", n)
	}
	if got, want := keys(tab.List()), []string{"acme:C:mid-pro", "acme:B:big-1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("left %v, want %v", got, want)
	}
	if n := tab.ClearConnection("nope"); n != 0 {
		t.Fatalf("ClearConnection(nope) removed %d", n)
	}
	clk.Advance(2 * time.Minute) // the acme:C lock expires: not counted as removed
	if n := tab.ClearAll(); n != 1 {
		t.Fatalf("ClearAll removed %d, want 1", n)
	}
	if n := tab.Count(); n != 0 {
		t.Fatalf("Count after ClearAll = %d", n)
	}
	if n := tab.ClearAll(); n != 0 {
		t.Fatalf("second ClearAll removed %d", n)
	}
}

func TestNilClock(t *testing.T) {
	tab := lockout.New(nil)
	e := tab.RecordFailure("p", "c", "m", 500, "", "", enabled(), 0)
	if _, ok := tab.Locked("p", "c", "m"); !ok || e.ExpiresAt.Before(time.Now()) {
		t.Fatalf("real clock lock not active: %+v", e)
	}
}

func TestConcurrent(t *testing.T) {
	tab, clk := newTable()
	s := enabled()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			conn := fmt.Sprintf("c%d", g%3)
			for i := 0; i < 300; i++ {
				model := fmt.Sprintf("big-%d", i%4)
				switch i % 7 {
				case 0, 1:
					tab.RecordFailure("acme", conn, model, []int{429, 404, 500, 0}[i%4], "x", "", s, 0)
				case 2:
					tab.Locked("acme", conn, model)
				case 3:
					tab.Decay("acme", conn, model)
				case 4:
					tab.LockFor("acme", conn, model, time.Minute, "y")
				case 5:
					tab.List()
					tab.Count()
				case 6:
					if i%50 == 6 {
						tab.Clear("acme", conn, "")
					}
					clk.Advance(time.Second)
				}
			}
		}(g)
	}
	wg.Wait()
	for _, e := range tab.List() {
		if !e.Active(clk.Now()) {
			t.Fatalf("listed an expired entry %+v", e)
		}
	}
	tab.ClearAll()
	if n := tab.Count(); n != 0 {
		t.Fatalf("Count = %d after ClearAll", n)
	}
}

// TestBurstEscalatesOnce: a burst of concurrent failures of one model (all
// while the first lock holds) escalates the lock once, like a connection
// cooldown's anti-thundering-herd rule; the next failure after expiry escalates.
func TestBurstEscalatesOnce(t *testing.T) {
	tab, clk := newTable()
	first := tab.RecordFailure("zeta", "A", "gpt-4o", 429, "", "", enabled(), 0)
	for i := 0; i < 5; i++ {
		clk.Advance(time.Millisecond)
		e := tab.RecordFailure("zeta", "A", "gpt-4o", 429, "", "", enabled(), 0)
		if e.FailureCount != 1 || !e.ExpiresAt.Equal(first.ExpiresAt) {
			t.Fatalf("burst failure %d: count %d expires %v, want 1 and %v", i, e.FailureCount, e.ExpiresAt, first.ExpiresAt)
		}
	}
	clk.Set(first.ExpiresAt.Add(-time.Millisecond)) // still locked: herd
	if e := tab.RecordFailure("zeta", "A", "gpt-4o", 429, "", "", enabled(), 0); e.FailureCount != 1 {
		t.Fatalf("1 ms before expiry: count %d, want 1", e.FailureCount)
	}
	clk.Set(first.ExpiresAt) // expired: a new failure escalates
	if e := tab.RecordFailure("zeta", "A", "gpt-4o", 429, "", "", enabled(), 0); e.FailureCount != 2 {
		t.Fatalf("at expiry: count %d, want 2", e.FailureCount)
	}
}
