package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
)

func (e *env) addCombo(name, strategy string, targets ...map[string]any) string {
	e.t.Helper()
	ts := make([]any, len(targets))
	for i, t := range targets {
		ts[i] = t
	}
	code, m := e.mgmt("POST", "/api/combos", map[string]any{"name": name, "strategy": strategy, "targets": ts})
	if code != http.StatusCreated {
		e.t.Fatalf("create combo: %d %v", code, m)
	}
	return m["combo"].(map[string]any)["id"].(string)
}

func (e *env) patchResilience(p map[string]any) {
	e.t.Helper()
	if code, m := e.mgmt("PATCH", "/api/resilience", p); code != 200 {
		e.t.Fatalf("patch resilience: %d %v", code, m)
	}
}

// isolateBreaker turns off the in-place retry and the §2 failure streak, so a
// test counts one breaker failure per request and no connection cooldown.
func (e *env) isolateBreaker() {
	e.patchResilience(map[string]any{"failover": map[string]any{"failureStreak": 0, "retriesPerTarget": 0}})
}

func target(model string) map[string]any { return map[string]any{"model": model} }

// TestComboFallbackOpensBreakerAndRecovers: the first target answers 503
// persistently; the second serves every time, the first's breaker opens, and
// after the first recovers traffic returns to it within one reset timeout.
func TestComboFallbackOpensBreakerAndRecovers(t *testing.T) {
	e := newEnv(t)
	e.patchResilience(map[string]any{"providerBreaker": map[string]any{"apikey": map[string]any{"failureThreshold": 4, "degradationThreshold": 2}},
		"failover": map[string]any{"failureStreak": 0}}) // the breaker alone, not the §2 streak
	e.addEndpoint("first", "key-a")
	second := e.addEndpoint("backup", "key-b")
	e.addCombo("coding", "priority", target("first/gpt-4o-mini"), target("backup/gpt-4o-mini"))
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503})

	for i := 0; i < 4; i++ {
		resp, body := e.chat("coding", false, nil)
		if resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != second {
			t.Fatalf("request %d: %d %s", i, resp.StatusCode, body)
		}
		if resp.Header.Get("X-OmniRoute-Model") != "gpt-4o-mini" || gjson.GetBytes(body, "usage.total_tokens").Int() == 0 {
			t.Fatalf("model or usage missing: %v %s", resp.Header, body)
		}
	}
	if s := breakerState(e.health(), "openai-compatible:first"); s != "OPEN" {
		t.Fatalf("breaker %s after persistent 503s", s)
	}
	hitsWhileOpen := e.up.Hits("key-a")
	e.chat("combo/coding", false, nil)
	if e.up.Hits("key-a") != hitsWhileOpen {
		t.Fatal("an open breaker's target was dispatched")
	}
	e.up.ClearFaults()
	e.clk.Advance(30*time.Second + time.Millisecond)
	resp, _ := e.chat("coding", false, nil)
	if resp.Header.Get("X-OmniRoute-Selected-Connection-Id") == second {
		t.Fatal("traffic did not return to the recovered first target within one reset timeout")
	}
	if s := breakerState(e.health(), "openai-compatible:first"); s != "CLOSED" {
		t.Fatalf("breaker %s after a successful probe", s)
	}
}

func TestComboTerminalErrors(t *testing.T) {
	t.Run("no_executable_targets", func(t *testing.T) {
		e := newEnv(t)
		e.addCombo("ghost", "priority", target("nobody/x"))
		resp, body := e.chat("ghost", false, nil)
		if resp.StatusCode != 404 || errorCode(body) != "no_executable_targets" {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	})
	t.Run("all_targets_cooling_down", func(t *testing.T) {
		e := newEnv(t)
		e.patchResilience(map[string]any{"providerBreaker": map[string]any{"apikey": map[string]any{"failureThreshold": 1, "degradationThreshold": 0}},
			"comboCooldownWait": map[string]any{"enabled": false}})
		e.addEndpoint("a", "key-a")
		e.addEndpoint("b", "key-b")
		e.addCombo("pair", "priority", target("a/m"), target("b/m"))
		e.up.SetFault("*", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503})
		e.chat("pair", false, nil)
		resp, body := e.chat("pair", false, nil)
		excluded := gjson.GetBytes(body, "error.diagnostics.excluded")
		if resp.StatusCode != 503 || errorCode(body) != "all_targets_cooling_down" || resp.Header.Get("Retry-After") != "15" ||
			len(excluded.Array()) != 2 || excluded.Get("0.reason").String() != "circuit_open" || excluded.Get("0.remainingMs").Int() != 15000 {
			t.Fatalf("%d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	})
	// A lock a broken upstream (5xx) wrote is not a rate limit: 503 with
	// Retry-After, 429 being kept for rate-limit locks (guide; issue 33 item 12).
	t.Run("all_targets_cooling_down from 5xx lockouts", func(t *testing.T) {
		e := newEnv(t)
		e.patchResilience(map[string]any{"modelLockout": map[string]any{"enabled": true}, "comboCooldownWait": map[string]any{"enabled": false}})
		e.addEndpoint("a", "key-a")
		e.addCombo("one", "priority", target("a/m"))
		e.up.SetFault("*", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503})
		e.chat("one", false, nil)
		resp, body := e.chat("one", false, nil)
		if resp.StatusCode != 503 || errorCode(body) != "all_targets_cooling_down" || resp.Header.Get("Retry-After") != "120" {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	})
	t.Run("rate_limit_error from rate-limit lockouts", func(t *testing.T) {
		e := newEnv(t)
		e.patchResilience(map[string]any{"modelLockout": map[string]any{"enabled": true}, "comboCooldownWait": map[string]any{"enabled": false}})
		e.addEndpoint("a", "key-a")
		e.addCombo("one", "priority", target("a/m"))
		e.up.SetFault("*", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429})
		e.chat("one", false, nil)
		resp, body := e.chat("one", false, nil)
		if resp.StatusCode != 429 || errorCode(body) != "rate_limit_error" || gjson.GetBytes(body, "error.type").String() != "rate_limit_error" ||
			gjson.GetBytes(body, "error.retry_after").Int() == 0 || !gjson.GetBytes(body, "error.reset_at").Exists() ||
			resp.Header.Get("Retry-After") == "" {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	})
	t.Run("ALL_TARGETS_SKIPPED for not-found", func(t *testing.T) {
		e := newEnv(t)
		e.patchResilience(map[string]any{"modelLockout": map[string]any{"enabled": true}})
		e.addEndpoint("a", "key-a")
		e.addCombo("nf", "priority", target("a/m"))
		e.up.SetFault("*", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 404})
		e.chat("nf", false, nil)
		resp, body := e.chat("nf", false, nil)
		if resp.StatusCode != 503 || errorCode(body) != "ALL_TARGETS_SKIPPED" || resp.Header.Get("Retry-After") != "" {
			t.Fatalf("%d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	})
}

// TestExhaustedConnectionNotRetriedByALaterLeg: a connection whose account
// hit its limit on the first target is not tried again for a later target of
// the same request (the skipped leg names why); a model-scoped 429 leaves the
// connection's other models to serve.
func TestExhaustedConnectionNotRetriedByALaterLeg(t *testing.T) {
	t.Run("account-wide 429 skips the connection", func(t *testing.T) {
		e := newEnv(t)
		e.addEndpoint("a", "key-a")
		other := e.addEndpoint("b", "key-b")
		e.addCombo("legs", "priority", target("a/m1"), target("a/m2"), target("b/m1"))
		e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: map[string]string{"X-RateLimit-Scope": "account"}})
		resp, _ := e.chat("legs", false, nil)
		if resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != other || e.up.Hits("key-a") != 1 {
			t.Fatalf("status %d served %s key-a hits %d", resp.StatusCode, resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), e.up.Hits("key-a"))
		}
	})
	t.Run("model 429 keeps the connection's other models", func(t *testing.T) {
		e := newEnv(t)
		a := e.addEndpoint("a", "key-a")
		e.addEndpoint("b", "key-b")
		e.addCombo("legs", "priority", target("a/m1"), target("a/m2"), target("b/m1"))
		// A 429 without any hint: the model cools on the ladder. (The fake's
		// default 429 body says "try again in 120ms", a body hint within the
		// queue budget, which paces the connection's queue instead.)
		e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Models: []string{"m1"},
			Body: `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`})
		for i := 0; i < 3; i++ {
			resp, _ := e.chat("legs", false, nil)
			if resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != a || resp.Header.Get("X-OmniRoute-Model") != "m2" {
				t.Fatalf("request %d: status %d served %s/%s, want a/m2", i, resp.StatusCode,
					resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), resp.Header.Get("X-OmniRoute-Model"))
			}
		}
		// The first request hit m1 once (no hint: no in-place retry) then m2; the
		// next ones skip the cooled m1 and go straight to m2.
		if got := e.up.Hits("key-a"); got != 4 {
			t.Fatalf("key-a hits %d, want 4 (m1 once, m2 three times)", got)
		}
	})
}

func TestExplainNamesEveryCandidateAndWhy(t *testing.T) {
	e := newEnv(t)
	e.addEndpoint("a", "key-a")
	e.addEndpoint("b", "key-b")
	e.addCombo("why", "priority", target("a/m"), target("b/m"))
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: map[string]string{"Retry-After": "42"}, Times: 1})
	e.chat("why", false, nil)
	code, m := e.mgmt("GET", "/api/routing/explain?model=why", nil)
	if code != 200 {
		t.Fatalf("explain %d", code)
	}
	c := m["candidates"].([]any)
	first, second := c[0].(map[string]any), c[1].(map[string]any)
	if m["combo"].(map[string]any)["strategy"] != "priority" || first["status"] != "eligible" || !strings.Contains(first["provider"].(string), ":b") ||
		second["status"] != "excluded" || second["reason"] != "model_cooldown" || second["remainingMs"].(float64) != 42000 {
		t.Fatalf("explain %v", m)
	}
	// The models list names the combo both ways.
	resp, body := e.do("GET", "/v1/models", nil, map[string]string{"Authorization": "Bearer " + e.key})
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"combo/why"`) {
		t.Fatalf("models %s", body)
	}
}

// TestExplainReadsTheHealthModel (issue 42 item 2): a combo target on a
// connection nothing has answered (a closed port, the add-time check saw it)
// is not "eligible" in /api/routing/explain: it is excluded with reason
// health_state and the health model's state and sentence, and the serving
// target is first in order.
func TestExplainReadsTheHealthModel(t *testing.T) {
	e := newEnv(t)
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "openai-compatible", "name": "Nowhere",
		"apiKey": "key-n", "baseUrl": closedURL(t), "prefix": "nowhere", "models": []string{"gpt-4o-mini"}})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	dead := m["connection"].(map[string]any)["id"].(string)
	if st := e.connHealth(e.health(), dead)["state"]; st != "unreachable" {
		t.Fatalf("a closed port after the add-time check: %v, want unreachable", st)
	}
	e.addEndpoint("b", "key-b")
	e.addCombo("why", "priority", target("nowhere/gpt-4o-mini"), target("b/gpt-4o-mini"))
	code, m = e.mgmt("GET", "/api/routing/explain?model=why", nil)
	if code != 200 {
		t.Fatalf("explain %d %v", code, m)
	}
	byID := map[string]map[string]any{}
	var eligible []map[string]any
	for _, c := range m["candidates"].([]any) {
		c := c.(map[string]any)
		byID[c["connectionId"].(string)] = c
		if c["status"] == "eligible" {
			eligible = append(eligible, c)
		}
	}
	got := byID[dead]
	if got["status"] != "excluded" || got["reason"] != "health_state" || got["detail"] != "unreachable" || got["order"] != nil ||
		!strings.Contains(got["healthReason"].(string), "could not be reached") || got["transient"] != false {
		t.Fatalf("the unreachable target: %v", got)
	}
	if len(eligible) != 1 || eligible[0]["order"].(float64) != 1 || !strings.Contains(eligible[0]["provider"].(string), ":b") {
		t.Fatalf("eligible %v, want only b, first", eligible)
	}
}

func TestComboValidation(t *testing.T) {
	e := newEnv(t)
	bad := []map[string]any{
		{"name": "x", "strategy": "fastest", "targets": []any{target("a/b")}},
		{"name": "x", "targets": []any{}},
		{"name": "bad name!", "targets": []any{target("a/b")}},
		{"name": "x", "targets": []any{map[string]any{"model": "a/b", "weight": -1}}},
	}
	for _, b := range bad {
		if code, m := e.mgmt("POST", "/api/combos", b); code != 400 {
			t.Errorf("%v: %d %v", b, code, m)
		}
	}
	e.addConn("c", "key-a", 1)
	code, m := e.mgmt("POST", "/api/combos", map[string]any{"name": "gpt-4o-mini", "targets": []any{target("openai-compatible/gpt-4o-mini")}})
	if code != 201 || !strings.Contains(strings.Join(toStrings(m["warnings"]), " "), "shadows") {
		t.Fatalf("shadow warning: %d %v", code, m)
	}
	if code, _ := e.mgmt("POST", "/api/combos", map[string]any{"name": "gpt-4o-mini", "targets": []any{target("a/b")}}); code != 409 {
		t.Fatalf("duplicate name: %d", code)
	}
}

func toStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, s := range list {
		out = append(out, s.(string))
	}
	return out
}

// TestComboCooldownWait: a combo request whose only target fell into a short
// rate-limit lockout waits for its expiry and is resent; a lockout a broken
// upstream wrote (two 503s) is never waited on (issue 40: guide §4 waits on
// a 429 window only): it is answered at once, 503 all_targets_cooling_down
// with the lock's end as Retry-After, wait enabled or not. With the wait
// disabled the 429 ends at once too. (The pre-dispatch 429 is in
// TestComboTerminalErrors.)
func TestComboCooldownWait(t *testing.T) {
	tests := []struct {
		name    string
		enabled bool
		fault   fakeupstream.Fault
		status  int
		code    string
		hits    int
		waits   bool
	}{
		{"429, wait on", true, fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Times: 1}, 200, "", 2, true},
		{"429, wait off", false, fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Times: 1}, 429, "rate_limit_error", 1, false},
		// The 503 locks the exact model for 1 s: its in-place retry is refused.
		{"503, wait on", true, fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503, Times: 2}, 503, "all_targets_cooling_down", 1, false},
		{"503, wait off", false, fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503, Times: 2}, 503, "all_targets_cooling_down", 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnvClock(t, true)
			e.patchResilience(map[string]any{"modelLockout": map[string]any{"enabled": true, "baseCooldownMs": 1000},
				"comboCooldownWait": map[string]any{"enabled": tt.enabled, "maxWaitMs": 3000, "maxAttempts": 2, "budgetMs": 10000}})
			e.addEndpoint("a", "key-a")
			e.addCombo("waity", "priority", target("a/m"))
			e.up.SetFault("key-a", tt.fault)
			start := time.Now()
			resp, body := e.chat("waity", false, nil)
			took := time.Since(start)
			if resp.StatusCode != tt.status || errorCode(body) != tt.code || e.up.Hits("key-a") != tt.hits {
				t.Fatalf("%d %q after %v, hits %d (want %d %q, %d hits): %s", resp.StatusCode, errorCode(body), took,
					e.up.Hits("key-a"), tt.status, tt.code, tt.hits, body)
			}
			if tt.waits != (took >= 900*time.Millisecond) {
				t.Fatalf("took %v, waits %v", took, tt.waits)
			}
			if tt.status == 503 && (resp.Header.Get("Retry-After") != "1" || resp.Header.Get("X-Should-Retry") != "" ||
				gjson.GetBytes(body, "error.diagnostics.excluded.0.reason").String() != "model_lockout") {
				t.Fatalf("503 without the lock's end (Retry-After %q, x-should-retry %q): %s", resp.Header.Get("Retry-After"),
					resp.Header.Get("X-Should-Retry"), body)
			}
		})
	}
}

// TestOneRequestNeverCoolsItsConnection (issue 33, item 14; guide §2,
// docs/FAILOVER.md §1 and §5): a combo leg whose model answers 503 to each of
// its in-place retries (maxRetriesPerTarget 2: three 503s) counts once
// towards failover.failureStreak (3), so the request's next leg on the same
// connection answers at once — no connection cooldown, no cooldown wait —
// and only the third such request cools the connection.
func TestOneRequestNeverCoolsItsConnection(t *testing.T) {
	e := newEnv(t)
	a := e.addEndpoint("a", "key-a")
	code, m := e.mgmt("POST", "/api/combos", map[string]any{"name": "legs", "strategy": "priority", "maxRetriesPerTarget": 2,
		"targets": []any{target("a/m1"), target("a/m2")}})
	if code != http.StatusCreated {
		t.Fatalf("create combo: %d %v", code, m)
	}
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503, Models: []string{"m1"}})
	cooling := func() bool {
		_, cd := e.mgmt("GET", "/api/resilience/cooldowns", nil)
		for _, c := range cd["connections"].([]any) {
			if c := c.(map[string]any); c["id"] == a {
				return c["status"] == "cooling_down"
			}
		}
		return false
	}
	for i := 1; i <= 2; i++ {
		resp, body := e.chat("legs", false, nil)
		if resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Model") != "m2" || resp.Header.Get("X-OmniRoute-Attempts") != "4" {
			t.Fatalf("request %d: %d via %s, attempts %s: %s", i, resp.StatusCode, resp.Header.Get("X-OmniRoute-Model"),
				resp.Header.Get("X-OmniRoute-Attempts"), body)
		}
		if got := e.up.ModelHits("key-a", "m1"); got != 3*i {
			t.Fatalf("request %d: m1 hits %d, want %d", i, got, 3*i)
		}
		if cooling() {
			t.Fatalf("request %d cooled its own connection", i)
		}
	}
	// m2's successes restart the connection's count, but m1's own streak
	// goes on: the third request's first 503 cools the model (its in-place
	// retry is refused), and the fourth goes straight to m2.
	for i, want := range []struct {
		attempts string
		m1       int
	}{{"2", 7}, {"1", 7}} {
		resp, body := e.chat("legs", false, nil)
		if resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Attempts") != want.attempts || e.up.ModelHits("key-a", "m1") != want.m1 {
			t.Fatalf("request %d: %d, attempts %s, m1 hits %d; want attempts %s, m1 hits %d: %s", i+3, resp.StatusCode,
				resp.Header.Get("X-OmniRoute-Attempts"), e.up.ModelHits("key-a", "m1"), want.attempts, want.m1, body)
		}
	}
	if cooling() {
		t.Fatal("a connection serving another model was cooled")
	}
}
