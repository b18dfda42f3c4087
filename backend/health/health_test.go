package health

import (
	"slices"
	"strings"
	"testing"
	"time"

	"omniroute/backend/resilience/breaker"
	"omniroute/backend/resilience/cooldown"
	"omniroute/backend/resilience/lockout"
)

var t0 = time.Date(2026, 12, 3, 13, 0, 0, 0, time.UTC)

func conn(id string, mods ...string) Conn {
	return Conn{ID: id, Name: "Conn " + id, Provider: "openai", ProviderID: "openai", ProviderName: "OpenAI", Active: true, Models: mods}
}

func lock(connID, model string, until time.Time) lockout.Entry {
	return lockout.Entry{Provider: "openai", ConnectionID: connID, Model: model, Scope: lockout.ScopeModel, Reason: "rate_limit",
		Status: 429, LockedAt: t0.Add(-time.Minute), ExpiresAt: until}
}

func TestConnectionStates(t *testing.T) {
	cooling := cooldown.State{RateLimitedUntil: t0.Add(14 * time.Minute), LastErrorType: "rate_limit", ErrorCode: "429", LastErrorAt: t0.Add(-time.Minute), TestStatus: "unavailable"}
	banned := cooldown.State{Terminal: "banned", TestStatus: "banned", LastErrorAt: t0.Add(-time.Hour)}
	open := breaker.Snapshot{Provider: "openai", State: breaker.Open, Failures: 5, OpenedAt: t0.Add(-10 * time.Second), RetryAfter: 50 * time.Second}
	degraded := breaker.Snapshot{Provider: "openai", State: breaker.Degraded, Failures: 2}
	half := breaker.Snapshot{Provider: "openai", State: breaker.HalfOpen}
	lease := Lease{ID: "L1", ConnectionID: "a", KeyID: "k-ci", KeyName: "CI key", Since: t0.Add(-time.Minute), ExpiresAt: t0.Add(5 * time.Minute)}
	rejected := cooldown.State{Terminal: "key_rejected", TestStatus: "key_rejected", ErrorCode: "KEY_REJECTED",
		LastError: "the provider rejected this key (401: Incorrect API key provided)", LastErrorAt: t0.Add(-time.Hour)}
	notFound := cooldown.State{Terminal: "endpoint_not_found", TestStatus: "endpoint_not_found", ErrorCode: "ENDPOINT_NOT_FOUND",
		LastError: "this URL answers 404: check the base URL (claude-sonnet-4-5 at http://h)", LastErrorAt: t0.Add(-time.Hour)}
	authExpired := cooldown.State{Terminal: "expired", TestStatus: "expired", ErrorCode: "UPSTREAM_AUTH_FAILED",
		LastError: "Invalid API key", LastErrorAt: t0.Add(-time.Hour)}
	saidExpired := cooldown.State{Terminal: "expired", TestStatus: "expired", ErrorCode: "UPSTREAM_AUTH_FAILED",
		LastError: "OAuth token has expired", LastErrorAt: t0.Add(-time.Hour)}

	tests := []struct {
		name      string
		conn      Conn
		breaker   *breaker.Snapshot
		locks     []lockout.Entry
		lease     *Lease
		forKey    string
		state     State
		serving   bool
		until     time.Time
		since     time.Time
		fixes     []string
		reasonHas string
	}{
		{name: "serving", conn: conn("a", "m1"), state: Serving, serving: true},
		{name: "disabled wins over everything", conn: func() Conn { c := conn("a"); c.Active = false; c.Cooldown = cooling; return c }(),
			breaker: &open, state: Disabled, fixes: []string{"enable"}},
		{name: "terminal", conn: func() Conn { c := conn("a"); c.Cooldown = banned; return c }(), state: Terminal,
			since: t0.Add(-time.Hour), fixes: []string{"edit_connection"}, reasonHas: "account suspended"},
		{name: "terminal beats open breaker, never back by itself", conn: func() Conn { c := conn("a"); c.Cooldown = banned; return c }(),
			breaker: &open, state: Terminal, since: t0.Add(-time.Hour), fixes: []string{"edit_connection"}},
		{name: "cooling until deadline", conn: func() Conn { c := conn("a"); c.Cooldown = cooling; return c }(), state: Cooling,
			until: t0.Add(14 * time.Minute), since: t0.Add(-time.Minute), fixes: []string{"clear_cooldown"}, reasonHas: "rate limited by the provider"},
		{name: "cooldown lapsed 1 ms ago is serving", conn: func() Conn {
			c := conn("a")
			c.Cooldown = cooling
			c.Cooldown.RateLimitedUntil = t0.Add(-time.Millisecond)
			return c
		}(), state: Serving, serving: true},
		{name: "cooldown ending in 1 ms is cooling", conn: func() Conn {
			c := conn("a")
			c.Cooldown = cooling
			c.Cooldown.RateLimitedUntil = t0.Add(time.Millisecond)
			return c
		}(), state: Cooling, until: t0.Add(time.Millisecond), since: t0.Add(-time.Minute), fixes: []string{"clear_cooldown"}},
		{name: "open breaker is not serving", conn: conn("a"), breaker: &open, state: BreakerOpen, until: t0.Add(50 * time.Second),
			since: t0.Add(-10 * time.Second), fixes: []string{"reset_breaker"}, reasonHas: "open after 5 failures"},
		{name: "open breaker and cooling: breaker named, back at the later", conn: func() Conn { c := conn("a"); c.Cooldown = cooling; return c }(),
			breaker: &open, state: BreakerOpen, until: t0.Add(14 * time.Minute), since: t0.Add(-10 * time.Second), fixes: []string{"clear_cooldown", "reset_breaker"}},
		{name: "degraded breaker still serves", conn: conn("a"), breaker: &degraded, state: Degraded, serving: true, fixes: []string{"reset_breaker"}},
		{name: "half-open breaker still serves", conn: conn("a"), breaker: &half, state: Degraded, serving: true, fixes: []string{"reset_breaker"}, reasonHas: "half-open"},
		{name: "one of two models locked serves", conn: conn("a", "m1", "m2"), locks: []lockout.Entry{lock("a", "m1", t0.Add(3*time.Minute))},
			state: ModelsLocked, serving: true, until: t0.Add(3 * time.Minute), since: t0.Add(-time.Minute), fixes: []string{"unlock_models"}, reasonHas: "m1 locked"},
		{name: "every model locked is not serving, back at the first unlock", conn: conn("a", "m1", "m2"),
			locks: []lockout.Entry{lock("a", "m1", t0.Add(3*time.Minute)), lock("a", "m2", t0.Add(2*time.Minute))},
			state: ModelsLocked, until: t0.Add(2 * time.Minute), since: t0.Add(-time.Minute), fixes: []string{"unlock_models"}, reasonHas: "every model"},
		{name: "lock expired at exactly now is gone", conn: conn("a", "m1"), locks: []lockout.Entry{lock("a", "m1", t0)}, state: Serving, serving: true},
		{name: "lock without a model list keeps serving", conn: conn("a"), locks: []lockout.Entry{lock("a", "m1", t0.Add(time.Minute))},
			state: ModelsLocked, serving: true, until: t0.Add(time.Minute), since: t0.Add(-time.Minute), fixes: []string{"unlock_models"}},
		{name: "leased is not serving for the dashboard", conn: conn("a"), lease: &lease, state: Leased, until: t0.Add(5 * time.Minute),
			since: t0.Add(-time.Minute), fixes: []string{"release_lease"}, reasonHas: "CI key"},
		{name: "leased is not serving for another key", conn: conn("a"), lease: &lease, forKey: "k-other", state: Leased,
			until: t0.Add(5 * time.Minute), since: t0.Add(-time.Minute), fixes: []string{"release_lease"}, reasonHas: "CI key"},
		{name: "leased serves its holder", conn: conn("a"), lease: &lease, forKey: "k-ci", state: Leased, serving: true,
			until: t0.Add(5 * time.Minute), since: t0.Add(-time.Minute), reasonHas: "by you"},
		{name: "lease expiring 1 ms from now still holds", conn: conn("a"), lease: &Lease{ConnectionID: "a", KeyID: "k", ExpiresAt: t0.Add(time.Millisecond)},
			state: Leased, until: t0.Add(time.Millisecond), fixes: []string{"release_lease"}},
		{name: "key rejected by the check is not serving, fix: replace key", conn: func() Conn { c := conn("a"); c.Cooldown = rejected; return c }(),
			state: KeyRejected, since: t0.Add(-time.Hour), fixes: []string{"replace_key"}, reasonHas: "the provider rejected this key (401: Incorrect"},
		{name: "live auth failures without the word expired read key rejected", conn: func() Conn { c := conn("a"); c.Cooldown = authExpired; return c }(),
			state: KeyRejected, since: t0.Add(-time.Hour), fixes: []string{"replace_key"}, reasonHas: "rejected this key (Invalid API key)"},
		{name: "expired only when the provider said so", conn: func() Conn { c := conn("a"); c.Cooldown = saidExpired; return c }(),
			state: Terminal, since: t0.Add(-time.Hour), fixes: []string{"edit_connection"}, reasonHas: "credentials expired"},
		{name: "a base URL answering 404 is endpoint_not_found, fix: edit it", conn: func() Conn { c := conn("a"); c.Cooldown = notFound; return c }(),
			state: EndpointNotFound, since: t0.Add(-time.Hour), fixes: []string{"edit_connection"}, reasonHas: "this URL answers 404: check the base URL (claude"},
		{name: "endpoint_not_found beats an open breaker and never comes back by itself", conn: func() Conn { c := conn("a"); c.Cooldown = notFound; return c }(), breaker: &open,
			state: EndpointNotFound, since: t0.Add(-time.Hour), fixes: []string{"edit_connection"}},
		{name: "key rejected beats an open breaker", conn: func() Conn { c := conn("a"); c.Cooldown = rejected; return c }(), breaker: &open,
			state: KeyRejected, since: t0.Add(-time.Hour), fixes: []string{"replace_key"}},
		{name: "leased but breaker open: breaker wins", conn: conn("a"), lease: &lease, breaker: &open, state: BreakerOpen,
			until: t0.Add(50 * time.Second), since: t0.Add(-10 * time.Second), fixes: []string{"reset_breaker"}},
		{name: "expired lease is ignored", conn: conn("a"), lease: &Lease{ConnectionID: "a", ExpiresAt: t0}, state: Serving, serving: true},
		{name: "never reached since added is unreachable", conn: func() Conn {
			c := conn("a")
			c.Reach = Reach{Misses: 1, Since: t0.Add(-time.Minute), LastMiss: "dial tcp: connection refused"}
			return c
		}(), state: Unreachable, since: t0.Add(-time.Minute), fixes: []string{"edit_connection"}, reasonHas: "could not be reached: dial tcp"},
		{name: "reached before, 2 misses in a row still serves", conn: func() Conn {
			c := conn("a")
			c.Reach = Reach{Reached: true, Misses: UnreachableAfter - 1, Since: t0.Add(-time.Minute)}
			return c
		}(), state: Serving, serving: true},
		{name: "reached before, 3 misses in a row is unreachable", conn: func() Conn {
			c := conn("a")
			c.Reach = Reach{Reached: true, Misses: UnreachableAfter, Since: t0.Add(-time.Minute), LastMiss: "unexpected EOF"}
			return c
		}(), state: Unreachable, since: t0.Add(-time.Minute), fixes: []string{"edit_connection"}, reasonHas: "(3 attempts in a row): unexpected EOF"},
		{name: "unreachable and cooling: unreachable, with no back-in time", conn: func() Conn {
			c := conn("a")
			c.Cooldown = cooling
			c.Reach = Reach{Misses: 2, Since: t0.Add(-time.Minute)}
			return c
		}(), state: Unreachable, since: t0.Add(-time.Minute), fixes: []string{"edit_connection"}},
		{name: "unreachable once the cooldown ran out", conn: func() Conn {
			c := conn("a")
			c.Cooldown = cooling
			c.Cooldown.RateLimitedUntil = t0.Add(-time.Millisecond)
			c.Reach = Reach{Misses: 1, Since: t0.Add(-time.Minute)}
			return c
		}(), state: Unreachable, since: t0.Add(-time.Minute), fixes: []string{"edit_connection"}},
		{name: "provider cooldown window", conn: func() Conn { c := conn("a"); c.ProviderCoolingUntil = t0.Add(30 * time.Second); return c }(),
			state: Cooling, until: t0.Add(30 * time.Second), reasonHas: "provider cooldown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Input{Now: t0, Connections: []Conn{tt.conn}, Lockouts: tt.locks, ForKey: tt.forKey}
			if tt.breaker != nil {
				in.Breakers = []breaker.Snapshot{*tt.breaker}
			}
			if tt.lease != nil {
				in.Leases = []Lease{*tt.lease}
			}
			c := Compute(in).Connections[0]
			if c.State != tt.state || c.Serving != tt.serving {
				t.Fatalf("state %s serving %v, want %s %v (%+v)", c.State, c.Serving, tt.state, tt.serving, c)
			}
			if !c.Until.Equal(tt.until) {
				t.Errorf("until %v, want %v", c.Until, tt.until)
			}
			if !c.Since.Equal(tt.since) {
				t.Errorf("since %v, want %v", c.Since, tt.since)
			}
			if tt.fixes == nil {
				tt.fixes = []string{}
			}
			if len(c.Fixes) != len(tt.fixes) {
				t.Fatalf("fixes %v, want %v", c.Fixes, tt.fixes)
			}
			for i := range tt.fixes {
				if c.Fixes[i] != tt.fixes[i] {
					t.Fatalf("fixes %v, want %v", c.Fixes, tt.fixes)
				}
			}
			if tt.reasonHas != "" && !contains(c.Reason, tt.reasonHas) {
				t.Errorf("reason %q lacks %q", c.Reason, tt.reasonHas)
			}
			if c.State != Serving && c.Reason == "" {
				t.Error("a state other than serving must say why")
			}
		})
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestOverallStatus(t *testing.T) {
	cooling := cooldown.State{RateLimitedUntil: t0.Add(14 * time.Minute), LastErrorType: "rate_limit"}
	cool := func(c Conn) Conn { c.Cooldown = cooling; return c }
	other := func(c Conn, p string) Conn { c.Provider, c.ProviderID = p, p; return c }
	tests := []struct {
		name             string
		conns            []Conn
		breakers         []breaker.Snapshot
		locks            []lockout.Entry
		combos           []Combo
		leases           []Lease
		paused           bool
		status           string
		serving, total   int
		servable, models int
		next             string
	}{
		{name: "no connections is setup, not healthy", status: StatusSetup},
		{name: "one serving", conns: []Conn{conn("a", "m1")}, status: StatusHealthy, serving: 1, total: 1, servable: 1, models: 1},
		{name: "one of two cooling, model still served elsewhere", conns: []Conn{cool(conn("a", "m1")), conn("b", "m1")},
			status: StatusDegraded, serving: 1, total: 2, servable: 1, models: 1, next: "a"},
		{name: "4 of 5 serve with one breaker open is degraded, not unhealthy",
			conns:    []Conn{other(conn("a", "m1"), "lab"), conn("b", "m1"), conn("c", "m2"), conn("d", "m3"), conn("e", "m4")},
			breakers: []breaker.Snapshot{{Provider: "lab", State: breaker.Open, RetryAfter: time.Minute}},
			status:   StatusDegraded, serving: 4, total: 5, servable: 4, models: 4, next: "a"},
		{name: "everything cooling is unhealthy", conns: []Conn{cool(conn("a", "m1")), cool(conn("b", "m2"))},
			status: StatusUnhealthy, serving: 0, total: 2, servable: 0, models: 2, next: "a"},
		{name: "every connection disabled is unhealthy", conns: []Conn{func() Conn { c := conn("a"); c.Active = false; return c }()},
			status: StatusUnhealthy, serving: 0, total: 1, servable: 0, models: 0},
		{name: "a locked model nobody else serves is degraded", conns: []Conn{conn("a", "m1", "m2")},
			locks:  []lockout.Entry{lock("a", "m1", t0.Add(time.Minute))},
			status: StatusDegraded, serving: 1, total: 1, servable: 1, models: 2},
		{name: "a dead combo is degraded", conns: []Conn{conn("a", "m1")},
			combos: []Combo{{Name: "work", Targets: []ComboTarget{{Model: "ghost/x"}}}},
			status: StatusDegraded, serving: 1, total: 1, servable: 1, models: 1},
		{name: "the only connection leased by another key is degraded, not unhealthy",
			conns: []Conn{conn("a", "m1")}, leases: []Lease{{ConnectionID: "a", KeyID: "k", ExpiresAt: t0.Add(time.Minute)}},
			status: StatusDegraded, serving: 0, total: 1, servable: 0, models: 1, next: "a"},
		{name: "a leased connection beside a serving one is degraded", conns: []Conn{conn("a", "m1"), conn("b", "m1")},
			leases: []Lease{{ConnectionID: "a", KeyID: "k", ExpiresAt: t0.Add(time.Minute)}},
			status: StatusDegraded, serving: 1, total: 2, servable: 1, models: 1, next: "a"},
		{name: "paused is paused, however healthy the connections", conns: []Conn{conn("a", "m1")}, paused: true,
			status: StatusPaused, serving: 1, total: 1, servable: 1, models: 1},
		{name: "paused with nothing serving is still paused", conns: []Conn{cool(conn("a", "m1"))}, paused: true,
			status: StatusPaused, serving: 0, total: 1, servable: 0, models: 1, next: "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Compute(Input{Now: t0, Connections: tt.conns, Breakers: tt.breakers, Lockouts: tt.locks, Combos: tt.combos,
				Leases: tt.leases, Paused: tt.paused})
			s := r.Summary
			if s.Status != tt.status || s.Serving != tt.serving || s.Total != tt.total || s.ModelsServable != tt.servable || s.ModelsTotal != tt.models {
				t.Fatalf("summary %+v, want %s %d/%d models %d/%d", s, tt.status, tt.serving, tt.total, tt.servable, tt.models)
			}
			if s.NextID != tt.next {
				t.Errorf("next back %q, want %q", s.NextID, tt.next)
			}
		})
	}
}

func TestProvidersAndCombos(t *testing.T) {
	lab := Conn{ID: "l", Name: "Lab", Provider: "openai-compatible:lab", ProviderID: "openai-compatible", ProviderName: "Lab endpoint", Active: true, Models: []string{"m1"}}
	a, b := conn("a", "m1"), conn("b", "m2", "m3")
	a.Cooldown = cooldown.State{RateLimitedUntil: t0.Add(2 * time.Minute), LastErrorType: "rate_limit"}
	in := Input{Now: t0, Connections: []Conn{lab, a, b},
		Breakers: []breaker.Snapshot{{Provider: "openai-compatible:lab", State: breaker.Open, Failures: 5, RetryAfter: 40 * time.Second}},
		Lockouts: []lockout.Entry{lock("b", "m2", t0.Add(5*time.Minute))},
		Combos: []Combo{
			{Name: "alive", Targets: []ComboTarget{{Model: "m1", Candidates: []Candidate{{"l", "m1"}, {"a", "m1"}}}, {Model: "openai/m3", Candidates: []Candidate{{"b", "m3"}}}}},
			{Name: "dead", Targets: []ComboTarget{{Model: "m1", Candidates: []Candidate{{"l", "m1"}, {"a", "m1"}}}, {Model: "m2", Candidates: []Candidate{{"b", "m2"}}}}},
		}}
	r := Compute(in)
	if len(r.Providers) != 2 {
		t.Fatalf("providers %+v", r.Providers)
	}
	p := r.Providers[1] // sorted: openai, openai-compatible:lab
	if p.ID != "openai-compatible:lab" || p.State != BreakerOpen || p.Name != "Lab endpoint" || !p.Until.Equal(t0.Add(40*time.Second)) || p.RetryAfterMs != 40000 {
		t.Fatalf("lab provider %+v", p)
	}
	if o := r.Providers[0]; o.State != Degraded || o.Serving != 1 || o.Total != 2 || !o.Until.Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("openai provider %+v", o)
	}
	// b serves m3 with m2 locked; a is cooling: openai is degraded by the cooldown first.
	if o := r.Providers[0]; o.Reason == "" {
		t.Fatalf("openai provider without a reason %+v", o)
	}
	only := Compute(Input{Now: t0, Connections: []Conn{b}, Lockouts: in.Lockouts})
	if p := only.Providers[0]; p.State != Degraded || !contains(p.Reason, "models locked on 1 of 1") {
		t.Fatalf("a provider with a partly locked connection %+v", p)
	}
	if c := r.Combos[0]; c.Name != "alive" || c.State != Degraded || c.Serving != 1 || c.Total != 2 {
		t.Fatalf("alive combo %+v", c)
	}
	// dead: m1 back when the lab breaker half-opens (40 s), m2 when its lock lapses (5 min): soonest wins.
	if c := r.Combos[1]; c.Name != "dead" || c.State != Dead || !c.Until.Equal(t0.Add(40*time.Second)) {
		t.Fatalf("dead combo %+v", c)
	}
	// A dead combo says why for each target and offers the targets' fixes.
	dead := r.Combos[1]
	if len(dead.Targets) != 2 || dead.Targets[0].Serving || dead.Targets[1].Serving {
		t.Fatalf("dead combo targets %+v", dead.Targets)
	}
	if why := dead.Targets[0].Reason; !contains(why, "circuit breaker open") || !contains(why, "rate limit") {
		t.Errorf("m1 says why for each connection: %q", why)
	}
	if why := dead.Targets[1].Reason; !contains(why, "m2 locked") {
		t.Errorf("m2 says its model is locked: %q", why)
	}
	for _, f := range []string{"reset_breaker", "clear_cooldown", "unlock_models"} {
		if !slices.Contains(dead.Fixes, f) {
			t.Errorf("dead combo fixes %v lack %s", dead.Fixes, f)
		}
	}
	if len(dead.Targets[0].Connections) != 2 || len(dead.Targets[0].Connections[0].Fixes) == 0 {
		t.Errorf("target connections %+v", dead.Targets[0].Connections)
	}
	if !contains(dead.Reason, "m1 — ") {
		t.Errorf("dead combo reason %q", dead.Reason)
	}
	if r.Summary.DeadCombo != 1 || r.Summary.Locks != 1 {
		t.Fatalf("summary %+v", r.Summary)
	}
}

// TestQuotaFamilyLockCoversItsMembers: a quota_family lock takes out every
// model of its family (Input.Family) and no other; without Family each
// model is its own.
func TestQuotaFamilyLockCoversItsMembers(t *testing.T) {
	fam := func(provider, model string) string {
		if provider == "acme" && strings.HasPrefix(model, "big-") {
			return "big"
		}
		return model
	}
	c := Conn{ID: "a", Name: "A", Provider: "acme", ProviderID: "acme", Active: true, Models: []string{"big-1", "big-2"}}
	e := lockout.Entry{Provider: "acme", ConnectionID: "a", Model: "big-1", Scope: lockout.ScopeQuotaFamily, ExpiresAt: t0.Add(time.Minute)}
	for _, tt := range []struct {
		name        string
		fam         lockout.Families
		models      []string
		wantServing bool
	}{
		{"family covers both", fam, []string{"big-1", "big-2"}, false},
		{"another model serves", fam, []string{"big-1", "small"}, true},
		{"no families: own model only", nil, []string{"big-1", "big-2"}, true},
	} {
		c.Models = tt.models
		r := Compute(Input{Now: t0, Connections: []Conn{c}, Lockouts: []lockout.Entry{e}, Family: tt.fam})
		if r.Connections[0].Serving != tt.wantServing {
			t.Errorf("%s: serving %v, want %v", tt.name, r.Connections[0].Serving, tt.wantServing)
		}
	}
}

func TestHuman(t *testing.T) {
	tests := map[time.Duration]string{
		0: "now", -time.Second: "now", 300 * time.Millisecond: "a moment", time.Second: "1 s", 1001 * time.Millisecond: "2 s",
		59 * time.Second: "59 s", time.Minute: "1 min", 90 * time.Second: "1 min 30 s", 13*time.Minute + 12*time.Second: "14 min",
		14 * time.Minute: "14 min", time.Hour: "1 h", 65 * time.Minute: "1 h 5 min", 27 * time.Hour: "1 d 3 h", 48 * time.Hour: "2 d",
	}
	for d, want := range tests {
		if got := Human(d); got != want {
			t.Errorf("Human(%v) = %q, want %q", d, got, want)
		}
	}
}

// BenchmarkCompute: the model is computed after every bus event for every
// event stream; 50 connections, 10 locks and 10 combos.
func BenchmarkCompute(b *testing.B) {
	in := Input{Now: t0}
	for i := 0; i < 50; i++ {
		c := conn(string(rune('a'+i%26))+string(rune('a'+i/26)), "m1", "m2", "m3")
		if i%7 == 0 {
			c.Cooldown = cooldown.State{RateLimitedUntil: t0.Add(time.Minute), LastErrorType: "rate_limit"}
		}
		in.Connections = append(in.Connections, c)
	}
	for i := 0; i < 10; i++ {
		in.Lockouts = append(in.Lockouts, lock(in.Connections[i].ID, "m1", t0.Add(time.Minute)))
		in.Combos = append(in.Combos, Combo{Name: string(rune('k' + i)), Targets: []ComboTarget{{Model: "m1",
			Candidates: []Candidate{{in.Connections[i].ID, "m1"}, {in.Connections[i+10].ID, "m1"}}}}})
	}
	b.ReportAllocs()
	for b.Loop() {
		Compute(in)
	}
}

// TestDiskFull: a full disk is a storage state with a plain message, and
// turns an otherwise healthy gateway degraded (requests still route); an
// unhealthy or setup status stays as it is.
func TestDiskFull(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Input
		full bool
		want string
	}{
		{"healthy, disk fine", Input{Now: t0, Connections: []Conn{conn("a", "m")}}, false, StatusHealthy},
		{"healthy, disk full", Input{Now: t0, Connections: []Conn{conn("a", "m")}, DiskFullSince: t0.Add(-time.Minute)}, true, StatusDegraded},
		{"setup, disk full", Input{Now: t0, DiskFullSince: t0}, true, StatusSetup},
		{"unhealthy, disk full", Input{Now: t0, Connections: []Conn{{ID: "a", Provider: "openai", Active: false, Models: []string{"m"}}},
			DiskFullSince: t0}, true, StatusUnhealthy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Compute(tc.in)
			if r.Summary.Status != tc.want {
				t.Fatalf("status %q, want %q", r.Summary.Status, tc.want)
			}
			if (r.Summary.Storage != nil) != tc.full {
				t.Fatalf("storage %+v, want set %v", r.Summary.Storage, tc.full)
			}
			if tc.full && (r.Summary.Storage.State != DiskFull || r.Summary.Storage.Reason != DiskFullReason ||
				!r.Summary.Storage.Since.Equal(tc.in.DiskFullSince)) {
				t.Fatalf("storage %+v", r.Summary.Storage)
			}
		})
	}
}

// TestProviderStateAgreesWithUntil: a provider none of whose connections
// serves reads as the state of the one back soonest when one comes back by
// itself (never "out of service" beside "back in 6 min"), and as the worst
// state, with no back-in time, when none does.
func TestProviderStateAgreesWithUntil(t *testing.T) {
	banned := cooldown.State{Terminal: "banned", TestStatus: "banned", LastErrorAt: t0.Add(-time.Hour)}
	cooling := cooldown.State{RateLimitedUntil: t0.Add(6 * time.Minute), LastErrorType: "rate_limit", LastErrorAt: t0, TestStatus: "unavailable"}
	a, b := conn("a"), conn("b")
	a.Cooldown, b.Cooldown = banned, cooling
	p := Compute(Input{Now: t0, Connections: []Conn{a, b}}).Providers[0]
	if p.State != Cooling || !p.Until.Equal(t0.Add(6*time.Minute)) {
		t.Fatalf("one back in 6 min: %s until %v", p.State, p.Until)
	}
	p = Compute(Input{Now: t0, Connections: []Conn{a}}).Providers[0]
	if p.State != Terminal || !p.Until.IsZero() {
		t.Fatalf("none back: %s until %v", p.State, p.Until)
	}
}
