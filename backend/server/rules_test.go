package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"omniroute/tests/fakeupstream"
)

func (e *env) addProviderConn(provider, name, upstreamKey string, priority int, models []string) string {
	e.t.Helper()
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": provider, "name": name,
		"apiKey": upstreamKey, "baseUrl": e.upURL, "priority": priority, "models": models, "verify": false})
	if code != http.StatusCreated {
		e.t.Fatalf("create connection: %d %v", code, m)
	}
	return m["connection"].(map[string]any)["id"].(string)
}

func (e *env) coolingStatus(id string) string {
	e.t.Helper()
	_, m := e.mgmt("GET", "/api/resilience/cooldowns", nil)
	for _, it := range m["connections"].([]any) {
		c := it.(map[string]any)
		if c["id"] == id {
			return c["status"].(string)
		}
	}
	e.t.Fatalf("connection %s not listed", id)
	return ""
}

// TestStreamErrorGoesThroughRules: an error the upstream sends inside a 200
// stream (before any model output) is judged by the same restatement and
// rules as an HTTP error: agentrouter's in-stream "额度不足" cools that
// account (connection scope) and the next one serves; an in-stream
// "无权访问模型" locks only the model.
func TestStreamErrorGoesThroughRules(t *testing.T) {
	e := newEnv(t)
	a := e.addProviderConn("agentrouter", "ar-a", "key-a", 1, []string{"m1", "m2"})
	b := e.addProviderConn("agentrouter", "ar-b", "key-b", 2, []string{"m1", "m2"})
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeErrorEvent, Times: 1,
		Body: `{"error":{"message":"用户额度不足, 剩余额度: ＄0.00","type":"new_api_error"}}`})

	resp, body := e.chat("agentrouter/m1", true, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != b {
		t.Fatalf("status %d from %q, want 200 from the second account: %s", resp.StatusCode, resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), body)
	}
	if st := e.coolingStatus(a); st != "cooling_down" {
		t.Fatalf("first account %q, want cooling_down (in-stream quota, connection scope)", st)
	}

	e.up.SetFault("key-b", fakeupstream.Fault{Mode: fakeupstream.ModeErrorEvent, Models: []string{"m1"},
		Body: `{"error":{"message":"无权访问模型 m1","type":"new_api_error"}}`})
	resp, _ = e.chat("agentrouter/m1", true, nil)
	if resp.StatusCode == http.StatusOK {
		t.Fatalf("denied model answered 200")
	}
	if st := e.coolingStatus(b); st == "cooling_down" || st == "terminal" {
		t.Fatalf("second account %q: an in-stream model denial must not cool the account", st)
	}
	_, m := e.mgmt("GET", "/api/resilience/model-cooldowns", nil)
	items, _ := m["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["model"] != "m1" || items[0].(map[string]any)["connectionId"] != b {
		t.Fatalf("model cooldowns %v, want m1 on the second account", m)
	}
	resp, body = e.chat("agentrouter/m2", true, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != b {
		t.Fatalf("sibling model: %d from %q: %s", resp.StatusCode, resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), body)
	}
}

// TestToolCountLimitLearnt: an upstream that refuses "too many tools" has its
// limit remembered per connection and model: the request fails over at once,
// later requests with as many tools skip it, and requests within the limit
// still use it.
func TestToolCountLimitLearnt(t *testing.T) {
	e := newEnv(t)
	a := e.addConn("small", "key-a", 1)
	b := e.addConn("large", "key-b", 2)
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 400, Times: 1,
		Body: `{"error":{"message":"Invalid 'tools': array too long. Expected an array with maximum length 2, but got an array with length 3 instead.","type":"invalid_request_error","param":"tools","code":"array_above_max_length"}}`})
	tool := func(name string) map[string]any {
		return map[string]any{"type": "function", "function": map[string]any{"name": name, "parameters": map[string]any{"type": "object"}}}
	}
	chat := func(n int) *http.Response {
		var tools []any
		for i := range n {
			tools = append(tools, tool(fmt.Sprint("t", i)))
		}
		resp, body := e.do("POST", "/v1/chat/completions", map[string]any{"model": "openai-compatible/gpt-4o-mini", "tools": tools,
			"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, map[string]string{"Authorization": "Bearer " + e.key})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%d tools: %d %s", n, resp.StatusCode, body)
		}
		return resp
	}
	if got := chat(3).Header.Get("X-OmniRoute-Selected-Connection-Id"); got != b {
		t.Fatalf("3 tools served by %s, want the larger %s", got, b)
	}
	hits := e.up.Hits("key-a")
	if got := chat(3).Header.Get("X-OmniRoute-Selected-Connection-Id"); got != b || e.up.Hits("key-a") != hits {
		t.Fatalf("3 tools again: served by %s, small hit %d times more", got, e.up.Hits("key-a")-hits)
	}
	if got := chat(2).Header.Get("X-OmniRoute-Selected-Connection-Id"); got != a {
		t.Fatalf("2 tools served by %s, want the small one %s (within its limit)", got, a)
	}
	if st := e.coolingStatus(a); st == "cooling_down" || st == "terminal" {
		t.Fatalf("a tool-count refusal cooled the connection: %s", st)
	}
	// With the large target gone, a request with too many tools is told so (400), not "unavailable".
	if code, m := e.mgmt("DELETE", "/api/providers/"+b, nil); code != http.StatusOK {
		t.Fatalf("delete: %d %v", code, m)
	}
	resp, body := e.do("POST", "/v1/chat/completions", map[string]any{"model": "openai-compatible/gpt-4o-mini",
		"tools": []any{tool("x"), tool("y"), tool("z")}, "messages": []any{map[string]any{"role": "user", "content": "hi"}}},
		map[string]string{"Authorization": "Bearer " + e.key})
	if resp.StatusCode != http.StatusBadRequest || errorCode(body) != "UPSTREAM_TOOL_COUNT_LIMIT" {
		t.Fatalf("only a too-small target left: %d %s", resp.StatusCode, body)
	}
}

// TestRestatedQuotaTakesTheShortLadder (guide §7, issue 33 items 1 and 2):
// agentrouter's "用户额度不足" (a 403, or an error inside a 200 stream; its
// text \u-escaped or split across the stream's frames) is a short window:
// the client is told Retry-After 60 s, the account cools on the ordinary
// API-key ladder (3 s, then 6 s), and a client arriving while it cools is
// told the real remaining time — never the 1 h quota cooldown.
func TestRestatedQuotaTakesTheShortLadder(t *testing.T) {
	const quota = `{"error":{"message":"用户额度不足, 剩余额度: ＄0.00","type":"new_api_error"}}`
	const escaped = `{"error":{"message":"\u7528\u6237\u989d\u5ea6\u4e0d\u8db3","type":"new_api_error"}}`
	cases := []struct {
		name   string
		stream bool
		fault  *fakeupstream.Fault
	}{
		{"403", false, &fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 403, Body: quota}},
		{"403 \\u-escaped", false, &fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 403, Body: escaped}},
		{"in a 200 stream", true, &fakeupstream.Fault{Mode: fakeupstream.ModeErrorEvent, Body: quota}},
		{"in a 200 stream, \\u-escaped", true, &fakeupstream.Fault{Mode: fakeupstream.ModeErrorEvent, Body: escaped}},
		{"in a 200 stream, split across frames", true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			base, hits := e.upURL, func() int { return e.up.Hits("key-a") }
			if c.fault == nil {
				// The event reaches the gateway in two writes that split
				// "额" in the middle of its UTF-8 bytes.
				var n atomic.Int32
				up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					n.Add(1)
					w.Header().Set("Content-Type", "text/event-stream")
					ev := []byte("data: " + quota + "\n\n")
					cut := bytes.Index(ev, []byte("额")) + 1
					_, _ = w.Write(ev[:cut])
					w.(http.Flusher).Flush()
					_, _ = w.Write(ev[cut:])
				}))
				t.Cleanup(up.Close)
				base, hits = up.URL+"/v1", func() int { return int(n.Load()) }
			} else {
				e.up.SetFault("key-a", *c.fault)
			}
			code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "agentrouter", "name": "ar",
				"apiKey": "key-a", "baseUrl": base, "models": []string{"m1"}, "verify": false})
			if code != http.StatusCreated {
				t.Fatalf("create connection: %d %v", code, m)
			}
			a := m["connection"].(map[string]any)["id"].(string)
			ask := func(step string, wantRA string, wantHits int) {
				t.Helper()
				resp, body := e.chat("agentrouter/m1", c.stream, nil)
				if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != wantRA || hits() != wantHits {
					t.Fatalf("%s: %d Retry-After %q, upstream hits %d; want 429 Retry-After %s, hits %d: %s", step, resp.StatusCode,
						resp.Header.Get("Retry-After"), hits(), wantRA, wantHits, body)
				}
			}
			remaining := func() float64 {
				_, cd := e.mgmt("GET", "/api/resilience/cooldowns", nil)
				for _, it := range cd["connections"].([]any) {
					if c := it.(map[string]any); c["id"] == a {
						ms, _ := c["cooldownRemainingMs"].(float64)
						return ms
					}
				}
				return -1
			}
			ask("first", "60", 1)
			if r := remaining(); r != 3000 {
				t.Fatalf("after the first restated quota the account cools %v ms, want 3000 (the API-key ladder)", r)
			}
			ask("second, while it cools", "3", 1)
			e.clk.Advance(3 * time.Second)
			ask("third, after the cooldown", "60", 2)
			if r := remaining(); r != 6000 {
				t.Fatalf("after the second restated quota the account cools %v ms, want 6000", r)
			}
			ask("fourth, while it cools", "6", 2)
		})
	}
}

// TestPermanentDenialPassesThrough (guide §7, issue 33 item 3): agentrouter's
// "无权访问模型" is permanent: the client gets the upstream's 403 in its own
// format (not 502 ALL_ATTEMPTS_FAILED, which agents retry), and the account
// itself keeps serving its other models.
func TestPermanentDenialPassesThrough(t *testing.T) {
	const denied = `{"error":{"message":"无权访问模型 m1 (request id: 20251103)","type":"new_api_error"}}`
	msgs := []any{map[string]any{"role": "user", "content": "hi"}}
	formats := []struct {
		name, path string
		body       map[string]any
		errType    string // the error's type in the client's format
	}{
		{"chat completions", "/v1/chat/completions", map[string]any{"model": "agentrouter/m1", "messages": msgs}, "permission_error"},
		{"messages", "/v1/messages", map[string]any{"model": "agentrouter/m1", "max_tokens": 10, "messages": msgs}, "permission_error"},
		{"responses", "/v1/responses", map[string]any{"model": "agentrouter/m1", "input": "hi"}, "permission_error"},
	}
	for _, f := range formats {
		for _, stream := range []bool{false, true} {
			t.Run(f.name+map[bool]string{true: "/stream"}[stream], func(t *testing.T) {
				e := newEnv(t)
				a := e.addProviderConn("agentrouter", "ar", "key-a", 1, []string{"m1", "m2"})
				e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 403, Models: []string{"m1"}, Body: denied})
				body := map[string]any{"stream": stream}
				for k, v := range f.body {
					body[k] = v
				}
				resp, out := e.post(f.path, body, map[string]string{"Authorization": "Bearer " + e.key})
				if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Retry-After") != "" {
					t.Fatalf("status %d (Retry-After %q), want the upstream's 403: %s", resp.StatusCode, resp.Header.Get("Retry-After"), out)
				}
				var m struct {
					Error struct{ Type, Message string } `json:"error"`
				}
				if err := json.Unmarshal(out, &m); err != nil || m.Error.Type != f.errType || !strings.Contains(m.Error.Message, "无权访问模型") {
					t.Fatalf("error %+v (%v), want %s naming the upstream's denial: %s", m.Error, err, f.errType, out)
				}
				// The next request finds the model locked for the denial: the same 403.
				if resp, out := e.post(f.path, body, map[string]string{"Authorization": "Bearer " + e.key}); resp.StatusCode != http.StatusForbidden ||
					e.up.ModelHits("key-a", "m1") != 1 {
					t.Fatalf("again: %d, m1 hits %d; want 403 without a new upstream call: %s", resp.StatusCode, e.up.ModelHits("key-a", "m1"), out)
				}
				if st := e.coolingStatus(a); st == "cooling_down" || st == "terminal" {
					t.Fatalf("a model denial cooled the account: %s", st)
				}
				if resp, out := e.chat("agentrouter/m2", false, nil); resp.StatusCode != http.StatusOK {
					t.Fatalf("the account's other model: %d %s", resp.StatusCode, out)
				}
			})
		}
	}
}

// TestDisableCoolingOnTheRulePath (guide §7, issue 33 item 10): a connection
// opted out with rateLimitOverrides.disableCooling is never cooled by a rule's
// connection scope (agentrouter's restated quota): the model that failed cools
// instead, and the connection's other models keep serving.
func TestDisableCoolingOnTheRulePath(t *testing.T) {
	e := newEnv(t)
	a := e.addProviderConn("agentrouter", "ar", "key-a", 1, []string{"m1", "m2"})
	if code, m := e.mgmt("PATCH", "/api/providers/"+a, map[string]any{"rateLimitOverrides": map[string]any{"disableCooling": true}}); code != 200 {
		t.Fatalf("patch: %d %v", code, m)
	}
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 403, Models: []string{"m1"},
		Body: `{"error":{"message":"用户额度不足","type":"new_api_error"}}`})
	if resp, body := e.chat("agentrouter/m1", false, nil); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("restated quota: %d %s", resp.StatusCode, body)
	}
	if st := e.coolingStatus(a); st == "cooling_down" {
		t.Fatal("a connection with disableCooling was cooled by the rule's connection scope")
	}
	_, m := e.mgmt("GET", "/api/resilience/model-cooldowns", nil)
	items, _ := m["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["model"] != "m1" || items[0].(map[string]any)["connectionId"] != a {
		t.Fatalf("model cooldowns %v, want m1 on the connection", m)
	}
	if resp, body := e.chat("agentrouter/m2", false, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("the connection's other model: %d %s", resp.StatusCode, body)
	}
	resp, body := e.chat("agentrouter/m1", false, nil)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || e.up.ModelHits("key-a", "m1") != 1 {
		t.Fatalf("m1 while it cools: %d Retry-After %q, m1 hits %d: %s", resp.StatusCode, resp.Header.Get("Retry-After"), e.up.ModelHits("key-a", "m1"), body)
	}
}
