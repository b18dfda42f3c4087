package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
)

const (
	owner1 = "vlo_" + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA1"
	owner2 = "vlo_" + "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB2"
	owner3 = "vlo_" + "CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC3"
)

// leaseKey creates a client key with the lease scope over the given connections.
func (e *env) leaseKey(conns ...string) string {
	e.t.Helper()
	code, m := e.mgmt("POST", "/api/keys", map[string]any{"name": "managed", "scopes": []string{"inference", "lease:exclusive"}, "allowedConnections": conns})
	if code != 201 {
		e.t.Fatalf("key: %d %v", code, m)
	}
	return m["key"].(string)
}

func (e *env) lease(key, owner string, body map[string]any) (*http.Response, []byte) {
	e.t.Helper()
	return e.do("POST", "/api/v1/session-leases", body, map[string]string{"Authorization": "Bearer " + key, "X-OmniRoute-Lease-Owner": owner})
}

func TestExclusiveLeasesEndToEnd(t *testing.T) {
	e := newEnv(t)
	c1 := e.addConn("one", "key-a", 1)
	c2 := e.addConn("two", "key-b", 2)
	key := e.leaseKey(c1, c2)
	model := "openai-compatible/gpt-4o-mini"

	resp, body := e.lease(key, owner1, map[string]any{"action": "acquire", "model": model})
	if resp.StatusCode != 200 || gjson.GetBytes(body, "state").String() != "ACTIVE" || gjson.GetBytes(body, "connectionId").String() != c1 {
		t.Fatalf("acquire 1: %d %s", resp.StatusCode, body)
	}
	gen := gjson.GetBytes(body, "generation").String()
	resp, body = e.lease(key, owner2, map[string]any{"action": "acquire", "model": model})
	if resp.StatusCode != 200 || gjson.GetBytes(body, "connectionId").String() != c2 {
		t.Fatalf("acquire 2: %d %s", resp.StatusCode, body)
	}
	resp, body = e.lease(key, owner3, map[string]any{"action": "acquire", "model": model})
	if resp.StatusCode != 429 || gjson.GetBytes(body, "state").String() != "WAITING_FOR_CAPACITY" ||
		gjson.GetBytes(body, "error.code").String() != "LEASE_CAPACITY_UNAVAILABLE" || resp.Header.Get("Retry-After") != "120" {
		t.Fatalf("acquire 3: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}

	// A fenced inference request goes to the lease's connection; the lease
	// headers never reach the upstream.
	leased := map[string]string{"Authorization": "Bearer " + key, "X-OmniRoute-Lease-Owner": owner1, "X-OmniRoute-Lease-Generation": gen}
	body1 := map[string]any{"model": model, "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
	resp, out := e.do("POST", "/v1/chat/completions", body1, leased)
	if resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != c1 {
		t.Fatalf("leased request: %d %s", resp.StatusCode, out)
	}
	h, _ := e.up.LastRequest("key-a")
	for name := range h {
		if strings.Contains(strings.ToLower(name), "lease") {
			t.Fatalf("lease header %s forwarded upstream", name)
		}
	}
	// Stale generation and wrong owner are fenced.
	stale := map[string]string{"Authorization": "Bearer " + key, "X-OmniRoute-Lease-Owner": owner1, "X-OmniRoute-Lease-Generation": "99"}
	if resp, out := e.do("POST", "/v1/chat/completions", body1, stale); resp.StatusCode != 409 || errorCode(out) != "LEASE_FENCE_STALE" {
		t.Fatalf("stale generation: %d %s", resp.StatusCode, out)
	}
	// An unmanaged request with the same key finds every free connection leased.
	resp, out = e.do("POST", "/v1/chat/completions", body1, map[string]string{"Authorization": "Bearer " + key})
	if resp.StatusCode != 429 || errorCode(out) != "LEASE_CAPACITY_UNAVAILABLE" || gjson.GetBytes(out, "state").String() != "WAITING_FOR_CAPACITY" {
		t.Fatalf("unmanaged request: %d %s", resp.StatusCode, out)
	}

	// Inspection shows the hash prefix only; the operator can release.
	code, m := e.mgmt("GET", "/api/resilience/leases", nil)
	ls := m["leases"].([]any)
	if code != 200 || len(ls) != 2 {
		t.Fatalf("inspect: %d %v", code, m)
	}
	_, listBody := e.do("GET", "/api/resilience/leases", nil, map[string]string{"Authorization": "Bearer " + e.token})
	if strings.Contains(string(listBody), owner1) || len(ls[0].(map[string]any)["ownerHashPrefix"].(string)) != 12 {
		t.Fatalf("lease listing leaks the owner: %s", listBody)
	}
	if h := e.health(); h["leases"].(map[string]any)["active"].(float64) != 2 {
		t.Fatalf("health leases %v", h["leases"])
	}
	id := ls[1].(map[string]any)["id"].(string)
	if code, _ := e.mgmt("DELETE", "/api/resilience/leases/"+id, nil); code != 200 {
		t.Fatalf("operator release: %d", code)
	}
	resp, body = e.lease(key, owner1, map[string]any{"action": "release", "generation": gjson.GetBytes([]byte(`{"g":`+gen+`}`), "g").Int(), "reason": "OWNER_EXIT"})
	if resp.StatusCode != 200 || gjson.GetBytes(body, "state").String() != "RELEASED" {
		t.Fatalf("release: %d %s", resp.StatusCode, body)
	}
}

// TestLeaseMovesWhenItsConnectionCools: normal cooldown rules still apply; the
// same generation moves to another free eligible connection.
func TestLeaseMovesWhenItsConnectionCools(t *testing.T) {
	e := newEnv(t)
	c1 := e.addConn("one", "key-a", 1)
	c2 := e.addConn("two", "key-b", 2)
	key := e.leaseKey(c1, c2)
	model := "openai-compatible/gpt-4o-mini"
	_, body := e.lease(key, owner1, map[string]any{"action": "acquire", "model": model})
	gen := gjson.GetBytes(body, "generation").String()
	leased := map[string]string{"Authorization": "Bearer " + key, "X-OmniRoute-Lease-Owner": owner1, "X-OmniRoute-Lease-Generation": gen}
	req := map[string]any{"model": model, "messages": []any{map[string]any{"role": "user", "content": "hi"}}}

	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: map[string]string{"Retry-After": "60"}, Times: 1})
	e.do("POST", "/v1/chat/completions", req, leased) // fails on c1 and cools it
	resp, out := e.do("POST", "/v1/chat/completions", req, leased)
	if resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != c2 {
		t.Fatalf("lease did not move: %d %s", resp.StatusCode, out)
	}
	_, st := e.lease(key, owner1, map[string]any{"action": "status", "generation": gjson.GetBytes([]byte(`{"g":`+gen+`}`), "g").Int()})
	if gjson.GetBytes(st, "connectionId").String() != c2 || gjson.GetBytes(st, "generation").String() != gen {
		t.Fatalf("status after move: %s", st)
	}
}

// TestSessionAffinityKeepsAndMovesPins: a session stays on its connection
// across requests, moves when that connection cools, and survives a restart.
func TestSessionAffinityKeepsAndMovesPins(t *testing.T) {
	e := newEnv(t)
	a := e.addConn("a", "key-a", 1)
	b := e.addConn("b", "key-b", 2)
	session := map[string]string{"X-Session-Id": "agent-7"}
	// Two 500s: the attempt and its in-place retry; then b serves.
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 500, Times: 2})
	resp, _ := e.chat("openai-compatible/gpt-4o-mini", false, session)
	if resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != b {
		t.Fatal("first request not served by b")
	}
	for i := 0; i < 3; i++ {
		if resp, _ := e.chat("openai-compatible/gpt-4o-mini", false, session); resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != b {
			t.Fatalf("request %d left the pinned connection", i)
		}
	}
	if resp, _ := e.chat("openai-compatible/gpt-4o-mini", false, nil); resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != a {
		t.Fatal("a request without a session should follow priority")
	}
	e.restart()
	if resp, _ := e.chat("openai-compatible/gpt-4o-mini", false, session); resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != b {
		t.Fatal("pin lost on restart")
	}
	e.up.SetFault("key-b", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: map[string]string{"Retry-After": "60", "X-RateLimit-Scope": "account"}, Times: 1})
	e.chat("openai-compatible/gpt-4o-mini", false, session) // b cools, the session moves to a
	e.clk.Advance(time.Second)
	if resp, _ := e.chat("openai-compatible/gpt-4o-mini", false, session); resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != a {
		t.Fatal("session did not move off the cooled connection")
	}
	e.clk.Advance(60 * time.Second)
	if resp, _ := e.chat("openai-compatible/gpt-4o-mini", false, session); resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != a {
		t.Fatal("session did not keep its new pin")
	}
}
