package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"omniroute/tests/fakeupstream"
)

// TestCopilotLoginFlows: the management API's device logins on the
// gateway's clock — GitHub is asked at most once per interval; a refused
// login, a login without a Copilot seat and an expired code each end with
// their code; at most 8 run at once, and an expired one is forgotten.
func TestCopilotLoginFlows(t *testing.T) {
	e := newEnv(t)
	cp := e.copilotFake(t)
	start := func() string {
		t.Helper()
		code, m := e.mgmt("POST", "/api/providers/login/copilot", nil)
		if code != http.StatusCreated {
			t.Fatalf("start: %d %v", code, m)
		}
		return "/api/providers/login/copilot/" + m["flowId"].(string)
	}
	poll := func(flow string) map[string]any {
		t.Helper()
		code, m := e.mgmt("GET", flow, nil)
		if code != 200 {
			t.Fatalf("poll: %d %v", code, m)
		}
		return m
	}
	errCode := func(m map[string]any) string {
		e, _ := m["error"].(map[string]any)
		c, _ := e["code"].(string)
		return c
	}

	// Refused on GitHub: asked once the interval (1 s) has passed, not before.
	flow := start()
	e.clk.Advance(999 * time.Millisecond)
	if m := poll(flow); m["status"] != "pending" || cp.Polls() != 0 {
		t.Fatalf("before the interval: %v, %d polls", m, cp.Polls())
	}
	e.clk.Advance(time.Millisecond)
	if m := poll(flow); m["status"] != "pending" || cp.Polls() != 1 {
		t.Fatalf("at the interval: %v, %d polls", m, cp.Polls())
	}
	cp.Deny()
	e.clk.Advance(time.Second)
	if m := poll(flow); m["status"] != "denied" || errCode(m) != "DEVICE_LOGIN_DENIED" {
		t.Fatalf("denied: %v", m)
	}
	if m := poll(flow); m["status"] != "denied" || cp.Polls() != 2 {
		t.Fatalf("a settled login asks GitHub again: %v, %d polls", m, cp.Polls())
	}

	// Approved, but the account has no Copilot seat.
	cp = e.copilotFake(t)
	cp.SetEntitled(false)
	cp.Approve()
	flow = start()
	e.clk.Advance(time.Second)
	if m := poll(flow); m["status"] != "failed" || errCode(m) != "COPILOT_NOT_ENTITLED" {
		t.Fatalf("no seat: %v", m)
	}
	if _, m := e.mgmt("GET", "/api/providers", nil); len(m["connections"].([]any)) != 0 {
		t.Fatalf("a connection without a seat was created: %v", m)
	}

	// At most 8 at once; an expired code frees its place and is forgotten.
	cp.SetEntitled(true)
	var flows []string
	for range 8 {
		flows = append(flows, start())
	}
	code, m := e.mgmt("POST", "/api/providers/login/copilot", nil)
	if code != http.StatusTooManyRequests || m["error"].(map[string]any)["code"] != "TOO_MANY_LOGINS" {
		t.Fatalf("ninth login: %d %v", code, m)
	}
	e.clk.Advance(900 * time.Second)
	start()
	if code, m := e.mgmt("GET", flows[0], nil); code != 404 || m["error"].(map[string]any)["code"] != "LOGIN_NOT_FOUND" {
		t.Fatalf("an expired login: %d %v", code, m)
	}
}

// TestLoginRouteIsGeneric: the device sign-in routes take any catalogue id
// or alias whose module has a login flow (the old /login/copilot path is the
// same route), list those providers for the dashboard, refuse a provider
// without one, and a flow is polled only under its own provider.
func TestLoginRouteIsGeneric(t *testing.T) {
	e := newEnv(t)
	cp := e.copilotFake(t)
	code, m := e.mgmt("GET", "/api/providers/login", nil)
	list, _ := m["providers"].([]any)
	if code != 200 || len(list) != 1 {
		t.Fatalf("list: %d %v", code, m)
	}
	if p := list[0].(map[string]any); p["id"] != "github-copilot" || p["name"] != "GitHub Copilot" || p["kind"] != "device" ||
		p["command"] != "copilot" || p["site"] != "GitHub" || p["hint"] == "" {
		t.Fatalf("listed: %v", p)
	}
	for _, bad := range []string{"openai", "nope"} {
		if code, m := e.mgmt("POST", "/api/providers/login/"+bad, nil); code != 404 || m["error"].(map[string]any)["code"] != "UNKNOWN_PROVIDER" {
			t.Fatalf("%s: %d %v", bad, code, m)
		}
	}
	code, m = e.mgmt("POST", "/api/providers/login/github-copilot", nil)
	if code != http.StatusCreated || m["userCode"] != fakeupstream.CopilotUserCode {
		t.Fatalf("start by id: %d %v", code, m)
	}
	id := m["flowId"].(string)
	if code, m := e.mgmt("GET", "/api/providers/login/openai/"+id, nil); code != 404 || m["error"].(map[string]any)["code"] != "UNKNOWN_PROVIDER" {
		t.Fatalf("poll under a provider without a login: %d %v", code, m)
	}
	cp.Approve()
	e.clk.Advance(time.Second)
	code, m = e.mgmt("GET", "/api/providers/login/gh-copilot/"+id, nil)
	conn, _ := m["connection"].(map[string]any)
	if code != 200 || m["status"] != "complete" || m["created"] != true || conn["provider"] != "github-copilot" {
		t.Fatalf("poll by alias: %d %v", code, m)
	}
}

// TestCopilotReasoningOpaqueToolRoundTrip: a GitHub Copilot connection
// (device login against the fake) whose Claude model reasons with tools
// answers its reasoning_text and reasoning_opaque (the fake's
// ModeReasoningOpaque); a Messages client gets a thinking block with the
// text and an opaque signature, streamed or not, and its next turn reaches
// Copilot with the reasoning_opaque and reasoning_text it gave (the fake
// refuses the turn otherwise).
func TestCopilotReasoningOpaqueToolRoundTrip(t *testing.T) {
	e := newEnv(t)
	cp := e.copilotFake(t)
	code, m := e.mgmt("POST", "/api/providers/login/github-copilot", nil)
	if code != http.StatusCreated {
		t.Fatalf("login: %d %v", code, m)
	}
	cp.Approve()
	e.clk.Advance(time.Second)
	if code, m := e.mgmt("GET", "/api/providers/login/github-copilot/"+m["flowId"].(string), nil); code != 200 || m["status"] != "complete" {
		t.Fatalf("poll: %d %v", code, m)
	}
	key := fakeupstream.CopilotTokenN(1)
	e.up.SetFault(key, fakeupstream.Fault{Mode: fakeupstream.ModeReasoningOpaque})
	toolRoundTrip(t, e, key, "github-copilot/claude-sonnet-4.5", []map[string]string{
		{"type": "thinking", "thinking": fakeupstream.ReasoningText, "signature": "*"},
		{"type": "tool_use", "id": fakeupstream.ToolCallIDOpenAI, "name": "get_weather"},
	}, fakeupstream.OpaqueReplayed)
}

// copilotFake starts a fake GitHub Copilot (device login, token exchange and
// chat) beside e's upstream and restarts the gateway pointed at it.
func (e *env) copilotFake(t *testing.T) *fakeupstream.Copilot {
	t.Helper()
	cp := fakeupstream.NewCopilot(e.up, "Iv1.server", "gho_server_token")
	t.Cleanup(cp.Close)
	for _, kv := range cp.Env() {
		k, v, _ := strings.Cut(kv, "=")
		e.envs[k] = v
	}
	e.restart()
	return cp
}
