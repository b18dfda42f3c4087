package server_test

import (
	"net/http"
	"testing"
	"time"

	"omniroute/tests/fakeupstream"
)

func (e *env) enableLockout() {
	e.t.Helper()
	if code, m := e.mgmt("PATCH", "/api/resilience", map[string]any{"modelLockout": map[string]any{"enabled": true}}); code != 200 {
		e.t.Fatalf("enable lockout: %d %v", code, m)
	}
}

func (e *env) addOpenAIConn(name, upstreamKey string, models []string) string {
	e.t.Helper()
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"verify": false, "provider": "openai", "name": name, "apiKey": upstreamKey,
		"baseUrl": e.upURL, "models": models})
	if code != http.StatusCreated {
		e.t.Fatalf("create: %d %v", code, m)
	}
	return m["connection"].(map[string]any)["id"].(string)
}

func (e *env) lockouts() []map[string]any {
	e.t.Helper()
	_, m := e.mgmt("GET", "/api/resilience/model-cooldowns", nil)
	var out []map[string]any
	for _, it := range m["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

// TestNotFoundLocksOnlyThatModel: one model of a connection answering 404 is
// locked; the connection's other models keep serving; reactivation clears it.
func TestNotFoundLocksOnlyThatModel(t *testing.T) {
	e := newEnv(t)
	e.enableLockout()
	conn := e.addOpenAIConn("oa", "key-a", []string{"gpt-4o", "gpt-4o-mini"})
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 404, Models: []string{"gpt-4o"}})

	if resp, _ := e.chat("openai/gpt-4o", false, nil); resp.StatusCode != 404 {
		t.Fatalf("first gpt-4o: %d", resp.StatusCode)
	}
	locks := e.lockouts()
	if len(locks) != 1 || locks[0]["model"] != "gpt-4o" || locks[0]["scope"] != "model" || locks[0]["connectionId"] != conn ||
		locks[0]["remainingMs"].(float64) != 120000 {
		t.Fatalf("lockouts %v", locks)
	}
	resp, body := e.chat("openai/gpt-4o", false, nil)
	// A not-found lock does not pass by itself soon: 503 ALL_TARGETS_SKIPPED, no hint.
	if resp.StatusCode != 503 || errorCode(body) != "ALL_TARGETS_SKIPPED" || resp.Header.Get("Retry-After") != "" || e.up.Hits("key-a") != 1 {
		t.Fatalf("locked model reached upstream: %d %s", resp.StatusCode, body)
	}
	if resp, _ := e.chat("openai/gpt-4o-mini", false, nil); resp.StatusCode != 200 {
		t.Fatalf("another model of the connection: %d", resp.StatusCode)
	}
	_, cd := e.mgmt("GET", "/api/resilience/cooldowns", nil)
	c := cd["connections"].([]any)[0].(map[string]any)
	if c["status"] != "model_locked" || len(c["lockouts"].([]any)) != 1 {
		t.Fatalf("cooldown manager entry %v", c)
	}
	if code, m := e.mgmt("DELETE", "/api/resilience/model-cooldowns", map[string]any{"provider": "openai", "connectionId": conn, "model": "gpt-4o"}); code != 200 || m["removed"].(float64) != 1 {
		t.Fatalf("reactivate: %d %v", code, m)
	}
	e.up.ClearFaults()
	if resp, _ := e.chat("openai/gpt-4o", false, nil); resp.StatusCode != 200 {
		t.Fatalf("after reactivation: %d", resp.StatusCode)
	}
}

// TestRateLimitLocksTheQuotaFamily: a 429 on gpt-5.1 locks every gpt-5* of that
// connection but not gpt-4o, and the connection itself is not cooled.
func TestRateLimitLocksTheQuotaFamily(t *testing.T) {
	e := newEnv(t)
	e.enableLockout()
	e.addOpenAIConn("oa", "key-a", []string{"gpt-5.1", "gpt-5-mini", "gpt-4o"})
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Times: 1, Models: []string{"gpt-5.1"}})
	e.chat("openai/gpt-5.1", false, nil)
	locks := e.lockouts()
	if len(locks) != 1 || locks[0]["scope"] != "quota_family" {
		t.Fatalf("lockouts %v", locks)
	}
	// A short transient lockout on every target: 429 rate_limit_error with retry_after / reset_at.
	resp, body := e.chat("openai/gpt-5-mini", false, nil)
	if resp.StatusCode != 429 || errorCode(body) != "rate_limit_error" || resp.Header.Get("Retry-After") != "120" {
		t.Fatalf("gpt-5-mini in the locked family: %d %s", resp.StatusCode, body)
	}
	if resp, _ := e.chat("openai/gpt-4o", false, nil); resp.StatusCode != 200 {
		t.Fatalf("gpt-4o outside the family: %d", resp.StatusCode)
	}
	// Bulk clear in the cooldown manager also clears lockouts.
	code, res := e.mgmt("POST", "/api/resilience/cooldowns", map[string]any{"all": true})
	if code != 200 || res["lockoutsCleared"].(float64) != 1 || len(e.lockouts()) != 0 {
		t.Fatalf("bulk clear: %d %v", code, res)
	}
}

func TestLockoutDisabledByDefault(t *testing.T) {
	e := newEnv(t)
	e.addOpenAIConn("oa", "key-a", []string{"gpt-4o"})
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 404})
	e.chat("openai/gpt-4o", false, nil)
	e.chat("openai/gpt-4o", false, nil)
	if len(e.lockouts()) != 0 || e.up.Hits("key-a") != 2 {
		t.Fatalf("lockout applied while disabled: %v", e.lockouts())
	}
}

// TestLongRetryInfoBecomesModelLockout: Gemini's daily quota ("86399s") locks the
// exact model for at most 24 h instead of pausing the connection.
func TestLongRetryInfoBecomesModelLockout(t *testing.T) {
	e := newEnv(t)
	e.addOpenAIConn("gm", "key-a", []string{"gemini-2.5-pro", "gemini-2.5-flash"})
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Times: 1, Models: []string{"gemini-2.5-pro"},
		Body: `{"error":{"code":429,"message":"You exceeded your current quota","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"86399s"}]}}`})
	e.chat("openai/gemini-2.5-pro", false, nil)
	locks := e.lockouts()
	if len(locks) != 1 || locks[0]["scope"] != "exact" || locks[0]["remainingMs"].(float64) != 86399000 {
		t.Fatalf("lockouts %v", locks)
	}
	if resp, _ := e.chat("openai/gemini-2.5-flash", false, nil); resp.StatusCode != 200 {
		t.Fatalf("the connection was paused: %d", resp.StatusCode)
	}
	e.clk.Advance(86399*time.Second - time.Millisecond)
	if resp, _ := e.chat("openai/gemini-2.5-pro", false, nil); resp.StatusCode != 503 && resp.StatusCode != 429 {
		t.Fatalf("lock expired early: %d", resp.StatusCode)
	}
	e.clk.Advance(time.Millisecond)
	if resp, _ := e.chat("openai/gemini-2.5-pro", false, nil); resp.StatusCode != 200 {
		t.Fatalf("lock did not expire: %d", resp.StatusCode)
	}
}

// TestDisablingLockoutReleasesLocks: a model locked by the lockout serves
// again as soon as the operator turns the lockout off; turning it off again
// (no change) or changing another setting leaves nothing behind.
func TestDisablingLockoutReleasesLocks(t *testing.T) {
	e := newEnv(t)
	e.enableLockout()
	e.addOpenAIConn("oa", "key-a", []string{"gpt-4o"})
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 404, Times: 1})
	if resp, _ := e.chat("openai/gpt-4o", false, nil); resp.StatusCode != 404 {
		t.Fatalf("first: %d", resp.StatusCode)
	}
	if resp, _ := e.chat("openai/gpt-4o", false, nil); resp.StatusCode != 503 {
		t.Fatalf("locked model: %d, want 503", resp.StatusCode)
	}
	if len(e.lockouts()) != 1 {
		t.Fatalf("lockouts %v, want one", e.lockouts())
	}
	e.patchResilience(map[string]any{"modelLockout": map[string]any{"enabled": false}})
	if locks := e.lockouts(); len(locks) != 0 {
		t.Fatalf("lockouts after disabling: %v", locks)
	}
	if resp, body := e.chat("openai/gpt-4o", false, nil); resp.StatusCode != 200 {
		t.Fatalf("after disabling the lockout: %d %s", resp.StatusCode, body)
	}
}
