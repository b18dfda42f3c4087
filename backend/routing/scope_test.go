package routing

import (
	"net/http"
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/providers/registry"
	"omniroute/backend/resilience/breaker"
	"omniroute/backend/resilience/cooldown"
	"omniroute/backend/resilience/lockout"
	"omniroute/backend/resilience/verdict"
	"omniroute/backend/store"
)

// scopePolicy is testPolicy with a failure streak and a switchable lockout.
type scopePolicy struct {
	testPolicy
	streak  int
	lockout bool
}

func (p scopePolicy) CooldownOptions() cooldown.Options {
	return cooldown.Options{FailureStreak: p.streak}
}
func (p scopePolicy) LockoutSettings() lockout.Settings {
	s := lockout.DefaultSettings()
	s.Enabled = p.lockout
	return s
}

// scopeEngine is one API-key connection "c" serving models m1 and m2.
func scopeEngine(t *testing.T, p scopePolicy) (*Engine, *clock.Fake, Candidate, Candidate) {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	reg := NewRegistry(registry.Catalog(nil))
	if err := reg.Load([]store.Connection{{ID: "c", Provider: "openai-compatible", Name: "c", BaseURL: "http://x/v1",
		Prefix: "p", IsActive: true, Models: `["m1","m2"]`}}, plainBox{}); err != nil {
		t.Fatal(err)
	}
	breakers := breaker.NewRegistry(clk, func(string) breaker.Profile { return breaker.DefaultProfile("apikey") }, nil)
	e := NewEngine(EngineDeps{Registry: reg, Clock: clk, Breakers: breakers, Lockouts: lockout.New(clk),
		Store: nopStore{}, Policy: p})
	conn := reg.All()[0]
	return e, clk, Candidate{Conn: conn, Model: "m1"}, Candidate{Conn: conn, Model: "m2"}
}

func finish(t *testing.T, e *Engine, c Candidate, v verdict.Verdict) {
	t.Helper()
	tk, x := e.Admit(c)
	if x != nil {
		t.Fatalf("%s refused: %+v", c.Model, *x)
	}
	tk.Finish(v)
}

func classify(status int, hdr map[string]string, now time.Time) verdict.Verdict {
	h := http.Header{}
	for k, v := range hdr {
		h.Set(k, v)
	}
	return verdict.Classify(verdict.Outcome{Status: status, Header: h, Now: now})
}

// TestModel429CoolsTheModelNotTheConnection: a model's 429 with Retry-After 2
// excludes that model for exactly 2 s; the connection's other model stays
// eligible throughout, with the lockout off and on.
func TestModel429CoolsTheModelNotTheConnection(t *testing.T) {
	for _, lockoutOn := range []bool{false, true} {
		e, clk, m1, m2 := scopeEngine(t, scopePolicy{lockout: lockoutOn})
		finish(t, e, m1, classify(429, map[string]string{"Retry-After": "2"}, clk.Now()))
		if x := e.Check(m2); x != nil {
			t.Fatalf("lockout %v: the sibling model is excluded: %+v", lockoutOn, *x)
		}
		if ok, _, _ := cooldown.Eligible(m1.Conn.Cooldown(), clk.Now()); !ok {
			t.Fatalf("lockout %v: the connection was cooled", lockoutOn)
		}
		x := e.Check(m1)
		if x == nil || !x.Transient {
			t.Fatalf("lockout %v: the rate-limited model is not excluded transiently: %+v", lockoutOn, x)
		}
		if lockoutOn {
			if x.Reason != "model_lockout" {
				t.Fatalf("lockout on: reason %q, want model_lockout", x.Reason)
			}
			continue
		}
		if x.Reason != "model_cooldown" || x.Remaining != 2*time.Second {
			t.Fatalf("reason %q remaining %v, want model_cooldown for exactly 2 s", x.Reason, x.Remaining)
		}
		clk.Advance(2*time.Second - time.Millisecond)
		if e.Check(m1) == nil {
			t.Fatal("eligible 1 ms before the hint ends")
		}
		clk.Advance(time.Millisecond)
		if x := e.Check(m1); x != nil {
			t.Fatalf("still excluded when the hint ends: %+v", *x)
		}
	}
}

// TestAccountWide429CoolsTheConnection: account-wide evidence excludes every model.
func TestAccountWide429CoolsTheConnection(t *testing.T) {
	e, clk, m1, m2 := scopeEngine(t, scopePolicy{})
	finish(t, e, m1, classify(429, map[string]string{"Retry-After": "5", "X-RateLimit-Scope": "account"}, clk.Now()))
	for _, c := range []Candidate{m1, m2} {
		if x := e.Check(c); x == nil || x.Reason != "connection_cooldown" || x.Remaining != 5*time.Second || x.Detail != "rate_limit" {
			t.Fatalf("%s: %+v, want a 5 s connection_cooldown", c.Model, x)
		}
	}
}

// TestFailureStreakAcrossModels: N−1 recoverable failures across the models
// leave everything eligible; the Nth cools the connection; a sibling's success
// in between restarts the count.
func TestFailureStreakAcrossModels(t *testing.T) {
	e, clk, m1, m2 := scopeEngine(t, scopePolicy{streak: 3})
	reset := verdict.Classify(verdict.Outcome{Err: errReset{}, Now: clk.Now()})
	finish(t, e, m1, classify(503, nil, clk.Now()))
	finish(t, e, m2, reset)
	for _, c := range []Candidate{m1, m2} {
		if x := e.Check(c); x != nil {
			t.Fatalf("after 2 failures %s is excluded: %+v", c.Model, *x)
		}
	}
	finish(t, e, m1, classify(502, nil, clk.Now()))
	for _, c := range []Candidate{m1, m2} {
		if x := e.Check(c); x == nil || x.Reason != "connection_cooldown" || x.Remaining != 3*time.Second {
			t.Fatalf("after 3 failures %s: %+v, want a 3 s connection cooldown", c.Model, x)
		}
	}
	// A success between failures restarts the streak.
	e2, clk2, a1, a2 := scopeEngine(t, scopePolicy{streak: 3})
	finish(t, e2, a1, classify(503, nil, clk2.Now()))
	finish(t, e2, a1, classify(503, nil, clk2.Now()))
	finish(t, e2, a2, verdict.Verdict{Kind: verdict.KindSuccess, Status: 200})
	finish(t, e2, a1, classify(503, nil, clk2.Now()))
	if x := e2.Check(a2); x != nil {
		t.Fatalf("a success did not restart the connection streak: %+v", *x)
	}
	// m1 alone failed 3 times in a row: the model (only) is cooled.
	if x := e2.Check(a1); x == nil || x.Reason != "model_cooldown" || x.Remaining != 3*time.Second {
		t.Fatalf("model streak: %+v, want a 3 s model_cooldown", x)
	}
}

type errReset struct{}

func (errReset) Error() string { return "read: connection reset by peer" }

// TestQuotaExclusionNamesQuota: a quota exhaustion cools the connection until
// the announced reset and names the quota, never transient.
func TestQuotaExclusionNamesQuota(t *testing.T) {
	e, clk, m1, _ := scopeEngine(t, scopePolicy{})
	v := verdict.Classify(verdict.Outcome{Status: 429, Header: map[string][]string{"Retry-After": {"7200"}},
		Body: []byte(`{"error":{"message":"You exceeded your current quota","code":"insufficient_quota"}}`), Now: clk.Now()})
	finish(t, e, m1, v)
	x := e.Check(m1)
	if x == nil || x.Detail != "quota" || x.Transient || x.Remaining != 2*time.Hour {
		t.Fatalf("%+v, want a non-transient 2 h quota cooldown", x)
	}
}

// TestModelLocksListAndClear: model cooldowns are listed with the lockouts and
// cleared with them.
func TestModelLocksListAndClear(t *testing.T) {
	e, clk, m1, _ := scopeEngine(t, scopePolicy{})
	finish(t, e, m1, classify(429, map[string]string{"Retry-After": "9"}, clk.Now()))
	locks := e.ModelLocks()
	if len(locks) != 1 || locks[0].Layer != "model_cooldown" || locks[0].Model != "m1" {
		t.Fatalf("ModelLocks = %+v", locks)
	}
	if n := e.ClearConnectionLocks("c"); n != 1 {
		t.Fatalf("cleared %d, want 1", n)
	}
	if x := e.Check(m1); x != nil {
		t.Fatalf("still excluded after clear: %+v", *x)
	}
}
