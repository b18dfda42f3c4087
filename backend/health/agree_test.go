package health

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"omniroute/backend/resilience/breaker"
	"omniroute/backend/resilience/cooldown"
	"omniroute/backend/resilience/lockout"
)

// mixedInput is the state issue 42 was tried on: a wrong key, a wrong base
// URL, a closed port (with a model lock from its 404s), a 429-ing one, an
// OPEN breaker, a leased one, a switched-off one, one with a model locked,
// a degraded breaker, a serving one; a combo dead for good and one dead for
// a while.
func mixedInput() Input {
	mk := func(id, name, provider string, mods ...string) Conn {
		return Conn{ID: id, Name: name, Provider: provider, ProviderID: provider, ProviderName: provider, Active: true, Models: mods}
	}
	rejected := mk("rej", "Work OpenAI", "openai", "gpt-4o")
	rejected.Cooldown = cooldown.State{Terminal: "key_rejected", TestStatus: "key_rejected", ErrorCode: "KEY_REJECTED", LastError: "the provider rejected this key", LastErrorAt: t0.Add(-time.Hour)}
	notFound := mk("nf", "Claude no v1", "anthropic", "claude")
	notFound.Cooldown = cooldown.State{Terminal: "endpoint_not_found", TestStatus: "endpoint_not_found", ErrorCode: "ENDPOINT_NOT_FOUND", LastErrorAt: t0.Add(-time.Hour)}
	closed := mk("cp", "Closed port", "openai-compatible:cp", "m")
	closed.Reach = Reach{Misses: 4, Since: t0.Add(-time.Minute), LastMiss: "connection refused"}
	cooling := mk("429", "Busy", "openai-compatible:busy", "m")
	cooling.Cooldown = cooldown.State{RateLimitedUntil: t0.Add(79 * time.Second), LastErrorType: "rate_limit", ErrorCode: "UPSTREAM_RATE_LIMITED", LastErrorAt: t0.Add(-time.Second)}
	flaky := mk("503", "Flaky", "openai-compatible:flaky", "m")
	leased := mk("ls", "Leased", "openai-compatible:ls", "m")
	off := mk("off", "Off", "openai-compatible:off", "m")
	off.Active = false
	locked := mk("lk", "Locked", "openai-compatible:lk", "a", "b")
	wobbly := mk("wb", "Wobbly", "openai-compatible:wb", "m")
	fine := mk("ok", "Fine", "openai-compatible:ok", "m")
	return Input{
		Now:         t0,
		Connections: []Conn{rejected, notFound, closed, cooling, flaky, leased, off, locked, wobbly, fine},
		Breakers: []breaker.Snapshot{
			{Provider: "openai-compatible:flaky", State: breaker.Open, Failures: 5, OpenedAt: t0.Add(-5 * time.Second), RetryAfter: 30 * time.Second},
			{Provider: "openai-compatible:wb", State: breaker.Degraded, Failures: 2},
		},
		Lockouts: []lockout.Entry{
			{Provider: "openai-compatible", ConnectionID: "cp", Model: "m", Scope: lockout.ScopeModel, Reason: "not_found", Status: 404, LockedAt: t0.Add(-time.Minute), ExpiresAt: t0.Add(79 * time.Second)},
			{Provider: "openai-compatible", ConnectionID: "lk", Model: "a", Scope: lockout.ScopeModel, Reason: "rate_limit", Status: 429, LockedAt: t0.Add(-time.Minute), ExpiresAt: t0.Add(3 * time.Minute)},
		},
		Leases: []Lease{{ID: "L1", ConnectionID: "ls", KeyID: "k", KeyName: "CI", Since: t0.Add(-time.Minute), ExpiresAt: t0.Add(10 * time.Minute)}},
		Combos: []Combo{
			// Dead for good: every target's connection needs a person (the
			// closed port's model lock ends in 79 s, but the port stays closed).
			{ID: "c1", Name: "forever", Targets: []ComboTarget{
				{Model: "gpt-4o", Candidates: []Candidate{{"rej", "gpt-4o"}}},
				{Model: "m", Candidates: []Candidate{{"cp", "m"}, {"nf", "claude"}}},
			}},
			// Dead for a while: one target is back when the breaker half-opens.
			{ID: "c2", Name: "later", Targets: []ComboTarget{
				{Model: "gpt-4o", Candidates: []Candidate{{"rej", "gpt-4o"}}},
				{Model: "flaky/m", Candidates: []Candidate{{"503", "m"}}},
			}},
		},
	}
}

var rawCode = regexp.MustCompile(`\b[A-Z][A-Z0-9]+(_[A-Z0-9]+)+\b|\(\d{3}\)`)

// TestMixedStateNumbersAgree: on the mixed state, every number the Overview
// shows comes out of one Compute and agrees: the summary's serving count, the
// tiles (each connection not serving in exactly one), the providers' serving
// counts, a provider never "Degraded" without a reason, a dead combo "back
// in" only when one of its targets comes back by itself.
func TestMixedStateNumbersAgree(t *testing.T) {
	r := Compute(mixedInput())
	s := r.Summary
	serving := 0
	for _, c := range r.Connections {
		if c.Serving {
			serving++
		}
	}
	if s.Serving != serving || s.Total != len(r.Connections) {
		t.Fatalf("summary %d of %d, connections say %d of %d", s.Serving, s.Total, serving, len(r.Connections))
	}
	if s.Serving+s.Cooling+s.BreakerOpen+s.OutOfService != s.Total {
		t.Fatalf("tiles do not add up: %+v", s)
	}
	// rej, nf, cp, ls (leased away), off are out of service; 429 cools; 503's breaker is open.
	if s.Serving != 3 || s.Cooling != 1 || s.BreakerOpen != 1 || s.OutOfService != 5 {
		t.Errorf("counts %+v, want 3 serving, 1 cooling, 1 breaker open, 5 out of service", s)
	}
	pServing, pTotal := 0, 0
	for _, p := range r.Providers {
		pServing += p.Serving
		pTotal += p.Total
		if p.State != Serving && p.Reason == "" {
			t.Errorf("provider %s is %s without a reason", p.ID, p.State)
		}
		if p.Total > 0 && p.Serving == p.Total && p.State != Serving && p.State != Degraded {
			t.Errorf("provider %s: %d of %d serving but %s", p.ID, p.Serving, p.Total, p.State)
		}
	}
	if pServing != s.Serving || pTotal != s.Total {
		t.Errorf("providers say %d of %d, summary %d of %d", pServing, pTotal, s.Serving, s.Total)
	}
	byName := map[string]ComboHealth{}
	for _, c := range r.Combos {
		byName[c.Name] = c
	}
	if c := byName["forever"]; c.State != Dead || !c.Until.IsZero() {
		t.Errorf("a combo whose targets never come back by themselves says back at %v (%s)", c.Until, c.State)
	}
	for _, tg := range byName["forever"].Targets {
		if !tg.Until.IsZero() {
			t.Errorf("target %s back at %v", tg.Model, tg.Until)
		}
	}
	later := byName["later"]
	if later.State != Dead || !later.Until.Equal(t0.Add(30*time.Second)) || !later.Targets[1].Until.Equal(later.Until) || !later.Targets[0].Until.IsZero() {
		t.Errorf("later combo %+v", later)
	}
	if s.DeadCombo != 2 {
		t.Errorf("dead combos %d", s.DeadCombo)
	}
}

// TestFixesFitTheState: a state only a person ends offers its own fix and
// nothing else (never Unlock models for a closed port or a 404 URL); words
// only, no raw code, in every reason.
func TestFixesFitTheState(t *testing.T) {
	r := Compute(mixedInput())
	want := map[string][]string{"rej": {"replace_key"}, "nf": {"edit_connection"}, "cp": {"edit_connection"}, "429": {"clear_cooldown"},
		"503": {"reset_breaker"}, "ls": {"release_lease"}, "off": {"enable"}, "lk": {"unlock_models"}, "wb": {"reset_breaker"}, "ok": {}}
	for _, c := range r.Connections {
		if !slices.Equal(c.Fixes, want[c.ID]) {
			t.Errorf("%s (%s): fixes %v, want %v", c.ID, c.State, c.Fixes, want[c.ID])
		}
		if rawCode.MatchString(c.Reason) {
			t.Errorf("%s: raw code in reason %q", c.ID, c.Reason)
		}
		for _, l := range c.Locks {
			if rawCode.MatchString(l.Reason) {
				t.Errorf("%s: raw code in lock reason %q", c.ID, l.Reason)
			}
		}
	}
	for _, co := range r.Combos {
		for _, tg := range co.Targets {
			for _, cc := range tg.Connections {
				if slices.Contains(cc.Fixes, "unlock_models") && (cc.State == Unreachable || cc.State == EndpointNotFound || cc.State == KeyRejected) {
					t.Errorf("combo %s offers unlock_models for %s (%s)", co.Name, cc.ID, cc.State)
				}
			}
		}
	}
}

// TestMixedStateFixture keeps the dashboard's copy of the mixed state
// (frontend/tests/unit/fixtures/health-mixed.json, read by
// overview-numbers.test.ts) equal to what Compute says of it; run with
// OMNIROUTE_WRITE_FIXTURES=1 to rewrite it.
func TestMixedStateFixture(t *testing.T) {
	b, err := json.MarshalIndent(Compute(mixedInput()), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	path := filepath.Join("..", "..", "frontend", "tests", "unit", "fixtures", "health-mixed.json")
	if os.Getenv("OMNIROUTE_WRITE_FIXTURES") == "1" {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(old, b) {
		t.Errorf("%s is stale: run OMNIROUTE_WRITE_FIXTURES=1 go test -run TestMixedStateFixture ./backend/health/", path)
	}
}
