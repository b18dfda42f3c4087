package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"omniroute/tests/fakeupstream"
)

// connHealth is one connection's entry of the health model.
func (e *env) connHealth(h map[string]any, id string) map[string]any {
	e.t.Helper()
	for _, c := range h["connections"].([]any) {
		if m := c.(map[string]any); m["id"] == id {
			return m
		}
	}
	e.t.Fatalf("connection %s not in health %v", id, h["connections"])
	return nil
}

func hasFix(c map[string]any, fix string) bool {
	for _, f := range c["fixes"].([]any) {
		if f == fix {
			return true
		}
	}
	return false
}

// steps maps a Test / check answer's steps by name.
func steps(v any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, s := range v.([]any) {
		m := s.(map[string]any)
		out[m["step"].(string)] = m
	}
	return out
}

// TestWrongKeyIsKeyRejected: a key the upstream rejects (401) is checked when
// entered: the create answer warns, the connection is key_rejected (not
// serving, "the provider rejected this key", fix replace_key, never
// "expired") on the health model and the Cooldown Manager, survives a
// restart, and Test reports each step with the upstream's status; a new key
// that passes the check makes it serve again.
func TestWrongKeyIsKeyRejected(t *testing.T) {
	e := newEnv(t)
	e.up.SetFault("bad-key", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 401})

	// Listed models and verify: the one-token completion answers 401.
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "openai-compatible", "name": "wrong",
		"apiKey": "bad-key", "baseUrl": e.upURL, "models": []string{"gpt-4o-mini"}, "verify": true})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	id := m["connection"].(map[string]any)["id"].(string)
	if w, _ := m["warning"].(string); !strings.Contains(w, "the provider rejected this key (401") {
		t.Fatalf("create answer warns of the rejected key: %v", m)
	}
	check := m["check"].(map[string]any)
	if check["rejected"] != true || check["ok"] != false || steps(check["steps"])["completion"]["status"].(float64) != 401 {
		t.Fatalf("check %v", check)
	}
	if m["connection"].(map[string]any)["testStatus"] != "key_rejected" {
		t.Fatalf("connection row %v", m["connection"])
	}

	assertRejected := func(when string) {
		t.Helper()
		h := e.health()
		c := e.connHealth(h, id)
		if c["state"] != "key_rejected" || c["serving"] != false || !hasFix(c, "replace_key") ||
			!strings.Contains(c["reason"].(string), "the provider rejected this key") || strings.Contains(c["reason"].(string), "expired") {
			t.Fatalf("%s: health %v", when, c)
		}
		if h["status"] != "unhealthy" {
			t.Fatalf("%s: the only connection rejected: status %v", when, h["status"])
		}
		_, cd := e.mgmt("GET", "/api/resilience/cooldowns", nil)
		for _, x := range cd["connections"].([]any) {
			if x := x.(map[string]any); x["id"] == id && x["status"] != "key_rejected" {
				t.Fatalf("%s: cooldown manager %v", when, x["status"])
			}
		}
	}
	assertRejected("after create")
	e.restart()
	assertRejected("after a restart")

	// Test reports per step with the upstream's status.
	code, m = e.mgmt("POST", "/api/providers/"+id+"/test", nil)
	if code != 200 || m["ok"] != false || m["rejected"] != true {
		t.Fatalf("test: %d %v", code, m)
	}
	st := steps(m["steps"])
	if st["reach"]["ok"] != true || st["auth"]["ok"] != false || st["auth"]["status"].(float64) != 401 ||
		st["models"]["status"].(float64) != 401 || st["completion"]["status"].(float64) != 401 || st["completion"]["model"] != "gpt-4o-mini" {
		t.Fatalf("steps %v", st)
	}

	// A new key that passes the check serves again.
	code, m = e.mgmt("PUT", "/api/providers/"+id, map[string]any{"apiKey": "good-key", "verify": true})
	if code != 200 || m["warning"] != nil || m["check"].(map[string]any)["ok"] != true {
		t.Fatalf("new key: %d %v", code, m)
	}
	if c := e.connHealth(e.health(), id); c["state"] != "serving" {
		t.Fatalf("after a good key: %v", c)
	}
	if n := e.up.ModelHits("good-key", "gpt-4o-mini"); n != 1 {
		t.Fatalf("the check sent %d completions, want 1", n)
	}
}

// TestCreateDiscoveryChecksTheKey: a create that discovers models (no list
// given) checks the key by default: a 401 on GET /models with nothing to
// complete makes the connection key_rejected with a warning; a good key is
// added with every step passing and one completion sent.
func TestCreateDiscoveryChecksTheKey(t *testing.T) {
	e := newEnv(t)
	e.up.SetFault("bad-key", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 401})
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "openai-compatible", "name": "wrong",
		"apiKey": "bad-key", "baseUrl": e.upURL})
	if code != http.StatusCreated || m["warning"] == nil {
		t.Fatalf("create with a wrong key: %d %v", code, m)
	}
	bad := m["connection"].(map[string]any)["id"].(string)
	if c := e.connHealth(e.health(), bad); c["state"] != "key_rejected" {
		t.Fatalf("wrong key: %v", c)
	}
	code, m = e.mgmt("POST", "/api/providers", map[string]any{"provider": "openai-compatible", "name": "right",
		"apiKey": "good-key", "baseUrl": e.upURL})
	if code != http.StatusCreated || m["warning"] != nil || m["check"].(map[string]any)["ok"] != true {
		t.Fatalf("create with a good key: %d %v", code, m)
	}
	good := m["connection"].(map[string]any)["id"].(string)
	if c := e.connHealth(e.health(), good); c["state"] != "serving" {
		t.Fatalf("good key: %v", c)
	}
	if e.up.Hits("good-key") != 2 { // GET /models and one completion
		t.Fatalf("good key: %d upstream requests, want 2", e.up.Hits("good-key"))
	}
}

// TestTestCatchesAWrongBaseURL: an anthropic-compatible base URL without /v1
// answers 404 to every request; Test says so on the completion step instead
// of "ok", and the key is not called rejected.
func TestTestCatchesAWrongBaseURL(t *testing.T) {
	e := newEnv(t)
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "anthropic-compatible", "name": "nov1",
		"apiKey": "key-a", "baseUrl": strings.TrimSuffix(e.upURL, "/v1"), "models": []string{"claude-sonnet-4-5"}})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	id := m["connection"].(map[string]any)["id"].(string)
	code, m = e.mgmt("POST", "/api/providers/"+id+"/test", nil)
	st := steps(m["steps"])
	if code != 200 || m["ok"] != false || m["rejected"] != false || st["completion"]["status"].(float64) != 404 || st["auth"]["ok"] != true {
		t.Fatalf("test: %d %v", code, m)
	}
	if c := e.connHealth(e.health(), id); c["state"] != "endpoint_not_found" || !hasFix(c, "edit_connection") {
		t.Fatalf("a 404 is not a rejected key but a wrong base URL (issue 42): %v", c)
	}
}

// TestHealthLeasedForOtherKeys: a connection held by a key's exclusive lease
// is leased, not serving, on the dashboard's picture and for other keys,
// with its holder, until when and the release_lease fix; it serves its
// holder (?keyId=); the Cooldown Manager says leased; releasing it by the
// fix's lease id serves again.
func TestHealthLeasedForOtherKeys(t *testing.T) {
	e := newEnv(t)
	c1 := e.addConn("one", "key-a", 1)
	code, km := e.mgmt("POST", "/api/keys", map[string]any{"name": "holder", "scopes": []string{"inference", "lease:exclusive"}, "allowedConnections": []string{c1}})
	if code != 201 {
		t.Fatalf("key: %d %v", code, km)
	}
	key, keyID := km["key"].(string), km["id"].(string)
	if resp, body := e.lease(key, owner1, map[string]any{"action": "acquire", "model": "openai-compatible/gpt-4o-mini"}); resp.StatusCode != 200 {
		t.Fatalf("acquire: %d %s", resp.StatusCode, body)
	}

	h := e.health()
	c := e.connHealth(h, c1)
	if c["state"] != "leased" || c["serving"] != false || c["leasedBy"] != "holder" || c["until"] == nil ||
		c["leaseId"] == nil || c["leasedModel"] != "openai-compatible/gpt-4o-mini" || !hasFix(c, "release_lease") {
		t.Fatalf("leased for the dashboard: %v", c)
	}
	if h["status"] != "degraded" || h["summary"].(map[string]any)["serving"].(float64) != 0 {
		t.Fatalf("status %v summary %v", h["status"], h["summary"])
	}
	_, other := e.mgmt("GET", "/api/monitoring/health?keyId=someone-else", nil)
	if c := e.connHealth(other, c1); c["serving"] != false {
		t.Fatalf("leased for another key: %v", c)
	}
	_, mine := e.mgmt("GET", "/api/monitoring/health?keyId="+keyID, nil)
	if c := e.connHealth(mine, c1); c["serving"] != true || c["state"] != "leased" || mine["status"] != "healthy" {
		t.Fatalf("leased for its holder: %v (%v)", c, mine["status"])
	}
	_, cd := e.mgmt("GET", "/api/resilience/cooldowns", nil)
	for _, x := range cd["connections"].([]any) {
		if x := x.(map[string]any); x["id"] == c1 && x["status"] != "leased" {
			t.Fatalf("cooldown manager: %v", x["status"])
		}
	}
	if code, m := e.mgmt("DELETE", "/api/resilience/leases/"+c["leaseId"].(string), nil); code != 200 {
		t.Fatalf("release: %d %v", code, m)
	}
	if c := e.connHealth(e.health(), c1); c["state"] != "serving" || c["serving"] != true {
		t.Fatalf("after release: %v", c)
	}
}

// TestRestartKeepsTheHealthPicture: model locks and an OPEN provider breaker
// survive a restart like cooldowns do, so the health model (and the
// Overview) read the same after it.
func TestRestartKeepsTheHealthPicture(t *testing.T) {
	e := newEnv(t)
	lab := e.addEndpoint("lab", "key-l")
	e.patchResilience(map[string]any{"failover": map[string]any{"failureStreak": 100}})
	e.up.SetFault("key-l", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503})
	for i := 0; i < 12; i++ {
		e.chat("lab/gpt-4o-mini", false, nil)
	}
	e.enableLockout()
	oa := e.addOpenAIConn("oa", "key-a", []string{"gpt-4o", "gpt-4o-mini"})
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 404, Models: []string{"gpt-4o"}})
	if resp, _ := e.chat("openai/gpt-4o", false, nil); resp.StatusCode != 404 {
		t.Fatalf("gpt-4o: %d", resp.StatusCode)
	}
	picture := func() (string, string, int) {
		h := e.health()
		o, l := e.connHealth(h, oa), e.connHealth(h, lab)
		return o["state"].(string), l["state"].(string), len(o["locks"].([]any))
	}
	oState, lState, locks := picture()
	if oState != "models_locked" || lState != "breaker_open" || locks != 1 {
		t.Fatalf("before restart: %s %s %d locks", oState, lState, locks)
	}
	e.restart()
	if o, l, n := picture(); o != oState || l != lState || n != locks {
		t.Fatalf("after restart: %s %s %d locks, want %s %s %d", o, l, n, oState, lState, locks)
	}
	if len(e.lockouts()) != 1 {
		t.Fatalf("model cooldowns after restart %v", e.lockouts())
	}
	// A cleared lock stays cleared across a restart.
	if code, m := e.mgmt("DELETE", "/api/resilience/model-cooldowns", map[string]any{"provider": "openai", "connectionId": oa, "model": "gpt-4o"}); code != 200 {
		t.Fatalf("reactivate: %d %v", code, m)
	}
	e.restart()
	if n := len(e.lockouts()); n != 0 {
		t.Fatalf("a cleared lock came back after a restart: %d", n)
	}
}

// TestCheckRedactsTheKey: an upstream that echoes the key in its 401 message
// has it redacted in the check's steps, the warning and the stored reason.
func TestCheckRedactsTheKey(t *testing.T) {
	e := newEnv(t)
	const secret = "sk-echoed-secret-123456"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":{"message":"Incorrect API key provided: `+secret+`","type":"invalid_request_error"}}`)
	}))
	defer up.Close()
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "openai-compatible", "name": "echo",
		"apiKey": secret, "baseUrl": up.URL + "/v1", "models": []string{"gpt-4o-mini"}, "verify": true})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	id := m["connection"].(map[string]any)["id"].(string)
	if w, _ := m["warning"].(string); !strings.Contains(w, "Incorrect API key provided: [redacted]") {
		t.Fatalf("warning %q", w)
	}
	_, test := e.mgmt("POST", "/api/providers/"+id+"/test", nil)
	h := e.health()
	for what, v := range map[string]any{"create": m, "test": test, "health": h} {
		if b, _ := json.Marshal(v); strings.Contains(string(b), secret) {
			t.Fatalf("%s answer carries the key: %s", what, b)
		}
	}
	if c := e.connHealth(h, id); !strings.Contains(c["reason"].(string), "401: Incorrect API key provided") {
		t.Fatalf("reason %v", c["reason"])
	}
}

// TestCheckPassesWithoutAModelList: an upstream with no GET /models (404)
// whose completion answers passes the check (the model list step says why it
// failed), and the key is not rejected.
func TestCheckPassesWithoutAModelList(t *testing.T) {
	e := newEnv(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/v1/chat/completions" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":{"message":"not found"}}`)
			return
		}
		_, _ = io.WriteString(w, `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"p"},"finish_reason":"length"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	defer up.Close()
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "openai-compatible", "name": "nolist",
		"apiKey": "key-n", "baseUrl": up.URL + "/v1", "models": []string{"m"}})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	id := m["connection"].(map[string]any)["id"].(string)
	code, m = e.mgmt("POST", "/api/providers/"+id+"/test", nil)
	st := steps(m["steps"])
	if code != 200 || m["ok"] != true || m["error"] != nil || st["models"]["ok"] != false || st["models"]["status"].(float64) != 404 || st["completion"]["ok"] != true {
		t.Fatalf("test: %d %v", code, m)
	}
	if c := e.connHealth(e.health(), id); c["state"] != "serving" {
		t.Fatalf("health %v", c)
	}
}
