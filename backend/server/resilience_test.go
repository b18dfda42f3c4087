package server_test

import (
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"omniroute/tests/fakeupstream"
)

// addEndpoint creates a user-defined endpoint with its own prefix: its own
// provider for the breaker.
func (e *env) addEndpoint(prefix, upstreamKey string) string {
	e.t.Helper()
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"verify": false, "provider": "openai-compatible", "name": prefix,
		"apiKey": upstreamKey, "baseUrl": e.upURL, "prefix": prefix, "models": []string{"gpt-4o-mini"}})
	if code != http.StatusCreated {
		e.t.Fatalf("create endpoint: %d %v", code, m)
	}
	return m["connection"].(map[string]any)["id"].(string)
}

func (e *env) health() map[string]any {
	e.t.Helper()
	code, m := e.mgmt("GET", "/api/monitoring/health", nil)
	if code != 200 {
		e.t.Fatalf("health %d", code)
	}
	return m
}

func breakerState(h map[string]any, provider string) string {
	ph, _ := h["providerHealth"].(map[string]any)
	p, _ := ph[provider].(map[string]any)
	s, _ := p["state"].(string)
	if s == "" {
		return "CLOSED"
	}
	return s
}

// TestRetryAfterSevenSkipsConnectionForSevenSeconds: the reference product
// ignored `Retry-After: 7`; here the model leaves routing on that connection
// for exactly 7 s (a model cooldown: the connection's other models keep
// serving) while the other connection serves.
func TestRetryAfterSevenSkipsConnectionForSevenSeconds(t *testing.T) {
	e := newEnv(t)
	first := e.addConn("primary", "key-a", 1)
	second := e.addConn("secondary", "key-b", 2)
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: map[string]string{"Retry-After": "7"}, Times: 1})

	resp, _ := e.chat("openai-compatible/gpt-4o-mini", false, nil)
	if resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != second {
		t.Fatal("the 429 did not fail over")
	}
	code, cd := e.mgmt("GET", "/api/resilience/cooldowns", nil)
	if code != 200 {
		t.Fatalf("cooldowns %d", code)
	}
	conns := cd["connections"].([]any)
	a := conns[0].(map[string]any)
	lk, _ := a["lockouts"].([]any)
	if a["id"] != first || a["status"] != "model_locked" || len(lk) != 1 {
		t.Fatalf("cooldown entry = %v", a)
	}
	if l := lk[0].(map[string]any); l["layer"] != "model_cooldown" || l["remainingMs"].(float64) != 7000 || l["model"] != "gpt-4o-mini" {
		t.Fatalf("model cooldown = %v", l)
	}

	e.clk.Advance(7*time.Second - time.Millisecond)
	resp, _ = e.chat("openai-compatible/gpt-4o-mini", false, nil)
	if resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != second || e.up.Hits("key-a") != 1 {
		t.Fatalf("7 s − 1 ms: served by %s, key-a hits %d", resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), e.up.Hits("key-a"))
	}
	e.clk.Advance(2 * time.Millisecond)
	resp, _ = e.chat("openai-compatible/gpt-4o-mini", false, nil)
	if resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != first {
		t.Fatalf("7 s + 1 ms: the primary is still skipped")
	}
	// A success clears every error field.
	_, cd = e.mgmt("GET", "/api/resilience/cooldowns", nil)
	a = cd["connections"].([]any)[0].(map[string]any)
	if a["status"] != "healthy" || a["backoffLevel"].(float64) != 0 || a["errorCode"] != "" {
		t.Fatalf("after success: %v", a)
	}
}

// TestBreakerOpensAtExactlyItsThreshold: an API-key provider answering 503
// degrades at 7 and opens at the 12th failure, whose request is answered 503
// with Retry-After at once; an open provider is skipped and a direct request
// gets 503 with Retry-After; reset closes it.
func TestBreakerOpensAtExactlyItsThreshold(t *testing.T) {
	e := newEnv(t)
	e.isolateBreaker()
	e.addEndpoint("wall", "key-a")
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503})
	const provider = "openai-compatible:wall"

	for i := 1; i <= 12; i++ {
		resp, body := e.chat("wall/gpt-4o-mini", false, nil)
		if refused := resp.StatusCode == 503 && errorCode(body) == "all_targets_cooling_down"; refused != (i == 12) {
			// The 12th failure opens the breaker: its answer says so at
			// once, with the next probe as Retry-After (issue 40).
			t.Fatalf("request %d: %d %s", i, resp.StatusCode, body)
		}
		state := breakerState(e.health(), provider)
		want := "CLOSED"
		switch {
		case i >= 12:
			want = "OPEN"
		case i >= 7:
			want = "DEGRADED"
		}
		if state != want {
			t.Fatalf("after %d failures: %s, want %s", i, state, want)
		}
	}
	h := e.health()
	if h["status"] != "unhealthy" || h["circuitBreakers"].(map[string]any)["open"].(float64) != 1 {
		t.Fatalf("health = %v", h)
	}
	resp, body := e.chat("wall/gpt-4o-mini", false, nil)
	if resp.StatusCode != 503 || errorCode(body) != "all_targets_cooling_down" {
		t.Fatalf("open provider: %d %s", resp.StatusCode, body)
	}
	// The next probe: the probe interval (15 s) caps the 30 s reset timeout.
	if ra, _ := strconv.Atoi(resp.Header.Get("Retry-After")); ra != 15 {
		t.Fatalf("Retry-After = %q, want 15", resp.Header.Get("Retry-After"))
	}
	if e.up.Hits("key-a") != 12 {
		t.Fatalf("upstream hits %d, want 12", e.up.Hits("key-a"))
	}

	// Restart keeps the breaker open.
	e.restart()
	if s := breakerState(e.health(), provider); s != "OPEN" {
		t.Fatalf("after restart: %s", s)
	}

	code, m := e.mgmt("POST", "/api/resilience/reset", nil)
	if code != 200 || m["resetCount"].(float64) != 1 {
		t.Fatalf("reset: %d %v", code, m)
	}
	e.up.ClearFaults()
	resp, _ = e.chat("wall/gpt-4o-mini", false, nil)
	if resp.StatusCode != 200 || breakerState(e.health(), provider) != "CLOSED" {
		t.Fatalf("after reset: %d %s", resp.StatusCode, breakerState(e.health(), provider))
	}
}

// TestAccountLevelErrorsNeverOpenTheBreaker: 401/403/429 belong to the
// connection, not the provider.
func TestAccountLevelErrorsNeverOpenTheBreaker(t *testing.T) {
	for _, status := range []int{401, 403, 429} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			e := newEnv(t)
			e.addEndpoint("acct", "key-a")
			e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: status})
			for i := 0; i < 20; i++ {
				e.chat("acct/gpt-4o-mini", false, nil)
				e.clk.Advance(10 * time.Minute) // past any cooldown, so every request reaches upstream
			}
			if s := breakerState(e.health(), "openai-compatible:acct"); s != "CLOSED" {
				t.Fatalf("breaker %s after 20 × %d", s, status)
			}
		})
	}
}

func TestHalfOpenAdmitsExactlyOneProbe(t *testing.T) {
	e := newEnv(t)
	if code, m := e.mgmt("PATCH", "/api/resilience", map[string]any{"providerBreaker": map[string]any{"apikey": map[string]any{"failureThreshold": 2, "degradationThreshold": 1}}}); code != 200 {
		t.Fatalf("patch: %d %v", code, m)
	}
	e.addEndpoint("probe", "key-a")
	// One request counts once (its retry adds nothing): the second
	// request's first attempt opens it, and its retry is refused.
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 500, Times: 3})
	e.chat("probe/gpt-4o-mini", false, nil)
	e.chat("probe/gpt-4o-mini", false, nil)
	if s := breakerState(e.health(), "openai-compatible:probe"); s != "OPEN" {
		t.Fatalf("state %s", s)
	}
	e.clk.Advance(30*time.Second + time.Millisecond)
	// The probe is held 3 s at the upstream: every other request must arrive
	// while it is in flight (at 500 ms, on 2 cores at load 30, some came
	// after the probe had closed the breaker and were rightly sent on).
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeLatency, LatencyMs: 3000})

	var wg sync.WaitGroup
	codes := make(chan int, 100)
	start := make(chan struct{})
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			resp, _ := e.chat("probe/gpt-4o-mini", false, nil)
			codes <- resp.StatusCode
		}()
	}
	close(start)
	wg.Wait()
	close(codes)
	ok := 0
	for c := range codes {
		if c == 200 {
			ok++
		}
	}
	if hits := e.up.Hits("key-a"); hits != 4 {
		t.Fatalf("upstream saw %d probe requests, want exactly 1 (4 hits in all)", hits-3)
	}
	if ok != 1 {
		t.Fatalf("%d successes, want 1", ok)
	}
	if s := breakerState(e.health(), "openai-compatible:probe"); s != "CLOSED" {
		t.Fatalf("after a successful probe: %s", s)
	}
}

func TestResilienceSettingsPrecedenceAndValidation(t *testing.T) {
	e := newEnv(t)
	e.envs["OMNIROUTE_CIRCUIT_BREAKER_API_KEY_FAILURE_THRESHOLD"] = "4"
	e.restart()
	code, m := e.mgmt("GET", "/api/resilience", nil)
	pb := m["providerBreaker"].(map[string]any)["apikey"].(map[string]any)
	if code != 200 || pb["failureThreshold"].(float64) != 4 {
		t.Fatalf("env default not applied: %v", pb)
	}
	bad := []map[string]any{
		{"providerBreaker": map[string]any{"apikey": map[string]any{"failureThreshold": -1}}},
		{"providerBreaker": map[string]any{"apikey": map[string]any{"failureThreshold": "x"}}},
		{"unknownSection": map[string]any{}},
		{"modelLockout": map[string]any{"baseCooldownMs": 600000, "maxCooldownMs": 1000}},
		{"providerBreaker": map[string]any{"apikey": map[string]any{"degradationThreshold": 9}}},
	}
	for _, p := range bad {
		if code, m := e.mgmt("PATCH", "/api/resilience", p); code != 400 {
			t.Errorf("patch %v: %d %v", p, code, m)
		}
	}
	if code, _ := e.mgmt("PATCH", "/api/resilience", map[string]any{"providerBreaker": map[string]any{"apikey": map[string]any{"failureThreshold": 5}},
		"connectionCooldown": map[string]any{"apikey": map[string]any{"baseCooldownMs": 99999999}}}); code != 200 {
		t.Fatalf("valid patch refused: %d", code)
	}
	e.restart()
	_, m = e.mgmt("GET", "/api/resilience", nil)
	if got := m["providerBreaker"].(map[string]any)["apikey"].(map[string]any)["failureThreshold"].(float64); got != 5 {
		t.Fatalf("persisted value %v, want 5 (persisted wins over env)", got)
	}
	if got := m["connectionCooldown"].(map[string]any)["apikey"].(map[string]any)["baseCooldownMs"].(float64); got != 600000 {
		t.Fatalf("baseCooldownMs %v, want clamped to 600000", got)
	}

	// The new threshold governs the breaker.
	e.isolateBreaker()
	e.addEndpoint("five", "key-a")
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 502})
	for i := 1; i <= 5; i++ {
		e.chat("five/gpt-4o-mini", false, nil)
		want := "CLOSED"
		if i == 5 {
			want = "OPEN"
		} else if i >= 3 {
			want = "DEGRADED"
		}
		if s := breakerState(e.health(), "openai-compatible:five"); s != want {
			t.Fatalf("after %d: %s, want %s", i, s, want)
		}
	}
}

func TestCooldownManagerClearsTransientButNotTerminal(t *testing.T) {
	e := newEnv(t)
	cooled := e.addConn("cooled", "key-a", 1)
	banned := e.addConn("banned", "key-b", 2)
	e.addConn("fine", "key-c", 3)
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Times: 1, Headers: map[string]string{"X-RateLimit-Scope": "account"}})
	e.up.SetFault("key-b", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 403, Times: 1,
		Body: `{"error":{"message":"Your account has been suspended for violating our policies","type":"permission_error"}}`})
	resp, _ := e.chat("openai-compatible/gpt-4o-mini", false, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	_, m := e.mgmt("GET", "/api/resilience/cooldowns", nil)
	status := map[string]string{}
	for _, c := range m["connections"].([]any) {
		c := c.(map[string]any)
		status[c["id"].(string)] = c["status"].(string)
	}
	if status[cooled] != "cooling_down" || status[banned] != "terminal" {
		t.Fatalf("statuses %v", status)
	}
	h := e.health()
	if h["status"] != "degraded" {
		t.Fatalf("health %v", h["status"])
	}
	code, res := e.mgmt("POST", "/api/resilience/cooldowns", map[string]any{"all": true})
	if code != 200 || res["cleared"].(float64) != 1 || res["skippedTerminal"].(float64) != 1 {
		t.Fatalf("clear: %d %v", code, res)
	}
	e.restart()
	_, m = e.mgmt("GET", "/api/resilience/cooldowns", nil)
	for _, c := range m["connections"].([]any) {
		c := c.(map[string]any)
		if c["id"] == banned && (c["status"] != "terminal" || c["testStatus"] != "banned") {
			t.Fatalf("terminal state lost: %v", c)
		}
		if c["id"] == cooled && c["status"] != "healthy" {
			t.Fatalf("cleared cooldown came back: %v", c)
		}
	}
	// New credentials are the way out of a terminal state.
	if code, m := e.mgmt("PUT", "/api/providers/"+banned, map[string]any{"verify": false, "apiKey": "key-b2"}); code != 200 {
		t.Fatalf("put: %d %v", code, m)
	}
	_, c := e.mgmt("GET", "/api/providers/"+banned, nil)
	if c["connection"].(map[string]any)["testStatus"] != "active" {
		t.Fatalf("new credentials did not clear the terminal state: %v", c)
	}
}

func TestCooldownSurvivesRestart(t *testing.T) {
	e := newEnv(t)
	e.addConn("primary", "key-a", 1)
	second := e.addConn("secondary", "key-b", 2)
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: map[string]string{"Retry-After": "60", "X-RateLimit-Scope": "account"}, Times: 1})
	e.chat("openai-compatible/gpt-4o-mini", false, nil)
	e.restart()
	e.clk.Advance(59 * time.Second)
	resp, _ := e.chat("openai-compatible/gpt-4o-mini", false, nil)
	if resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != second || e.up.Hits("key-a") != 1 {
		t.Fatalf("cooldown lost on restart: served by %s", resp.Header.Get("X-OmniRoute-Selected-Connection-Id"))
	}
}

// TestConcurrencyLimit429CoolsOneSecondWithoutBackoff: "busy, not broken" —
// GLM's 并发数过高 fails over at once, cools for 1 s, keeps backoffLevel.
func TestConcurrencyLimit429CoolsOneSecondWithoutBackoff(t *testing.T) {
	e := newEnv(t)
	first := e.addConn("glm-a", "key-a", 1)
	second := e.addConn("glm-b", "key-b", 2)
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Times: 1,
		Body: `{"error":{"code":"1302","message":"您的账户已达到速率限制，并发数过高，请控制请求频率"}}`})
	resp, _ := e.chat("openai-compatible/gpt-4o-mini", false, nil)
	if resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != second {
		t.Fatal("no immediate failover")
	}
	_, m := e.mgmt("GET", "/api/resilience/cooldowns", nil)
	a := m["connections"].([]any)[0].(map[string]any)
	if a["id"] != first || a["cooldownRemainingMs"].(float64) != 1000 || a["backoffLevel"].(float64) != 0 || a["lastErrorType"] != "concurrency_limit" {
		t.Fatalf("entry %v", a)
	}
	if s := breakerState(e.health(), "openai-compatible:"+first); s != "CLOSED" {
		t.Fatalf("breaker %s", s)
	}
	e.clk.Advance(time.Second)
	resp, _ = e.chat("openai-compatible/gpt-4o-mini", false, nil)
	if resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != first {
		t.Fatal("still cooling after 1 s")
	}
}

// TestStreamStallRecordsErrorWithoutCooldown: a stall belongs to the request
// (often a long reasoning turn), so the connection keeps serving unless
// streamStallCooldown is enabled.
func TestStreamStallRecordsErrorWithoutCooldown(t *testing.T) {
	for _, enabled := range []bool{false, true} {
		t.Run(strconv.FormatBool(enabled), func(t *testing.T) {
			e := newEnv(t)
			e.patchSettings(map[string]any{"streamIdleTimeoutMs": 1000})
			if code, _ := e.mgmt("PATCH", "/api/resilience", map[string]any{"streamStallCooldown": map[string]any{"enabled": enabled}}); code != 200 {
				t.Fatal("patch")
			}
			e.addConn("only", "key-a", 1)
			e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStallMidStream, AfterChunks: 1, Times: 1})
			e.chat("openai-compatible/gpt-4o-mini", true, nil)
			_, m := e.mgmt("GET", "/api/resilience/cooldowns", nil)
			a := m["connections"].([]any)[0].(map[string]any)
			if a["lastErrorType"] != "stall" {
				t.Fatalf("stall not recorded: %v", a)
			}
			wantStatus := "healthy"
			if enabled {
				wantStatus = "cooling_down"
			}
			if a["status"] != wantStatus {
				t.Fatalf("status %v, want %s", a["status"], wantStatus)
			}
		})
	}
}

// TestFailureStreakCoolsAnAlways5xxConnection (guide §2): a connection that
// answers 503 to every request is cooled after failover.failureStreak (3)
// consecutive failures, while its healthy sibling keeps serving; a request's
// in-place retry adds nothing to the count (one request alone never cools
// it), so the third request's first 503 cools it. It stays out for exactly
// the 3 s ladder rung and is tried again at its end.
func TestFailureStreakCoolsAnAlways5xxConnection(t *testing.T) {
	e := newEnv(t)
	bad := e.addConn("bad", "key-a", 1)
	good := e.addConn("good", "key-b", 2)
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503})
	want := []struct {
		attempts string
		hitsA    int
	}{{"3", 2}, {"3", 4}, {"2", 5}, {"1", 5}}
	for i, w := range want {
		resp, body := e.chat("openai-compatible/gpt-4o-mini", false, nil)
		if resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != good ||
			resp.Header.Get("X-OmniRoute-Attempts") != w.attempts || e.up.Hits("key-a") != w.hitsA {
			t.Fatalf("request %d: %d via %s, attempts %s, key-a hits %d; want attempts %s, hits %d: %s", i+1, resp.StatusCode,
				resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), resp.Header.Get("X-OmniRoute-Attempts"), e.up.Hits("key-a"),
				w.attempts, w.hitsA, body)
		}
	}
	_, cd := e.mgmt("GET", "/api/resilience/cooldowns", nil)
	a := cd["connections"].([]any)[0].(map[string]any)
	if a["id"] != bad || a["status"] != "cooling_down" || a["cooldownRemainingMs"].(float64) != 3000 || a["backoffLevel"].(float64) != 1 {
		t.Fatalf("the always-5xx connection: %v, want cooling 3000 ms at level 1", a)
	}
	e.clk.Advance(3*time.Second - time.Millisecond)
	e.chat("openai-compatible/gpt-4o-mini", false, nil)
	if e.up.Hits("key-a") != 5 {
		t.Fatalf("tried 1 ms before its cooldown ends: hits %d", e.up.Hits("key-a"))
	}
	e.clk.Advance(time.Millisecond)
	e.chat("openai-compatible/gpt-4o-mini", false, nil)
	if e.up.Hits("key-a") == 5 {
		t.Fatal("not tried again when its cooldown ended")
	}
}

// TestShortCooldownAnswersCarryRetryAfter (issue 33 items 4 and 12): a
// generic API-key 403 cools the connection for 3 s, and meanwhile the client
// is told when to come back (503 ALL_TARGETS_SKIPPED with Retry-After 3);
// a model cooled by a broken upstream (a streak of resets) is answered 503
// all_targets_cooling_down with Retry-After, never 429 rate_limit_error,
// which the guide keeps for rate-limit locks.
func TestShortCooldownAnswersCarryRetryAfter(t *testing.T) {
	t.Run("generic 403", func(t *testing.T) {
		e := newEnv(t)
		e.addConn("only", "key-a", 1)
		e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 403,
			Body: `{"error":{"message":"Your request was blocked.","type":"forbidden"}}`})
		e.chat("openai-compatible/gpt-4o-mini", false, nil)
		resp, body := e.chat("openai-compatible/gpt-4o-mini", false, nil)
		if resp.StatusCode != http.StatusServiceUnavailable || errorCode(body) != "ALL_TARGETS_SKIPPED" || resp.Header.Get("Retry-After") != "3" {
			t.Fatalf("while the connection cools: %d %s Retry-After %q, want 503 ALL_TARGETS_SKIPPED Retry-After 3: %s",
				resp.StatusCode, errorCode(body), resp.Header.Get("Retry-After"), body)
		}
	})
	t.Run("model cooled by resets", func(t *testing.T) {
		e := newEnv(t)
		e.addEndpoint("a", "key-a")
		e.addCombo("legs", "priority", target("a/m1"), target("a/m2"))
		e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeResetBeforeHeaders, Models: []string{"m1"}})
		for i := 0; i < 3; i++ { // m2 serves; m1's streak reaches 3 and cools the model
			if resp, body := e.chat("legs", false, nil); resp.StatusCode != 200 {
				t.Fatalf("request %d: %d %s", i+1, resp.StatusCode, body)
			}
		}
		resp, body := e.chat("a/m1", false, nil)
		if resp.StatusCode != http.StatusServiceUnavailable || errorCode(body) != "all_targets_cooling_down" || resp.Header.Get("Retry-After") != "3" {
			t.Fatalf("a model cooled by resets: %d %s Retry-After %q, want 503 all_targets_cooling_down Retry-After 3: %s",
				resp.StatusCode, errorCode(body), resp.Header.Get("Retry-After"), body)
		}
	})
	t.Run("model cooled by a 429 stays 429", func(t *testing.T) {
		e := newEnv(t)
		e.addEndpoint("a", "key-a")
		e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: map[string]string{"Retry-After": "30"}})
		e.chat("a/m1", false, nil)
		resp, body := e.chat("a/m1", false, nil)
		if resp.StatusCode != http.StatusTooManyRequests || errorCode(body) != "rate_limit_error" || resp.Header.Get("Retry-After") != "30" {
			t.Fatalf("a rate-limited model: %d %s Retry-After %q, want 429 rate_limit_error Retry-After 30: %s",
				resp.StatusCode, errorCode(body), resp.Header.Get("Retry-After"), body)
		}
	})
}

// TestResetClearsTheProviderWindowGate (guide §1, issue 33 item 6): the
// opt-in provider window gate's cooldown is cleared by POST
// /api/resilience/reset and by the cooldown manager (POST
// /api/resilience/cooldowns), not only by a restart.
func TestResetClearsTheProviderWindowGate(t *testing.T) {
	for _, how := range []string{"reset", "cooldown manager"} {
		t.Run(how, func(t *testing.T) {
			e := newEnv(t)
			e.patchResilience(map[string]any{
				"providerCooldown": map[string]any{"enabled": true, "apikey": map[string]any{"failureThreshold": 1, "failureWindowMs": 60000, "cooldownMs": 600000}},
				"providerBreaker":  map[string]any{"apikey": map[string]any{"failureThreshold": 100}},
				"failover":         map[string]any{"failureStreak": 0, "retriesPerTarget": 0}})
			id := e.addConn("only", "key-a", 1)
			e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503, Times: 1})
			e.chat("openai-compatible/gpt-4o-mini", false, nil)
			resp, body := e.chat("openai-compatible/gpt-4o-mini", false, nil)
			if resp.StatusCode == 200 || e.up.Hits("key-a") != 1 {
				t.Fatalf("the provider window gate did not cool the provider: %d, hits %d: %s", resp.StatusCode, e.up.Hits("key-a"), body)
			}
			var code int
			var m map[string]any
			if how == "reset" {
				code, m = e.mgmt("POST", "/api/resilience/reset", nil)
				if code != 200 || m["resetCount"].(float64) < 1 || m["providerCooldownsCleared"].(float64) != 1 {
					t.Fatalf("reset: %d %v, want the window cooldown cleared", code, m)
				}
			} else {
				code, m = e.mgmt("POST", "/api/resilience/cooldowns", map[string]any{"connectionIds": []string{id}})
				if code != 200 || m["providerCooldownsCleared"].(float64) != 1 {
					t.Fatalf("cooldown manager: %d %v, want the window cooldown cleared", code, m)
				}
			}
			if resp, body := e.chat("openai-compatible/gpt-4o-mini", false, nil); resp.StatusCode != 200 || e.up.Hits("key-a") != 2 {
				t.Fatalf("after the %s: %d, hits %d: %s", how, resp.StatusCode, e.up.Hits("key-a"), body)
			}
		})
	}
}
