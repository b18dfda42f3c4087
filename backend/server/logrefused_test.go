package server_test

import (
	"net/http"
	"net/url"
	"testing"

	"omniroute/tests/fakeupstream"
)

// TestLogsFindRefusedAndPausedRequests: a request refused before dispatch is
// found by the Logs search (by "refused", by the words of its code, by the
// connection its refusal excluded), and a request refused while the gateway
// is paused is logged under its key and model, and found by "paused".
func TestLogsFindRefusedAndPausedRequests(t *testing.T) {
	e := newEnv(t)
	e.patchResilience(map[string]any{"failover": map[string]any{"failureStreak": 100, "retriesPerTarget": 0}})
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"verify": false, "provider": "openai-compatible", "name": "Lab box",
		"apiKey": "key-a", "baseUrl": e.upURL, "prefix": "lab", "models": []string{"gpt-4o-mini"}})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	e.chat("lab/gpt-4o-mini", false, nil) // served
	// A long 429 cools Lab box: the next request is refused, Lab box excluded.
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: map[string]string{"Retry-After": "3600"}})
	e.chat("lab/gpt-4o-mini", false, nil)
	if resp, body := e.chat("lab/gpt-4o-mini", false, nil); resp.StatusCode < 400 {
		t.Fatalf("a cooling connection served: %d %s", resp.StatusCode, body)
	}
	if code, m := e.mgmt(http.MethodPatch, "/api/gateway", map[string]any{"paused": true}); code != 200 {
		t.Fatalf("pause: %d %v", code, m)
	}
	resp, body := e.chat("paused-model", false, nil)
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("paused: %d %s", resp.StatusCode, body)
	}
	// A wrong key while paused: still GATEWAY_PAUSED, and not logged.
	e.do("POST", "/v1/chat/completions", map[string]any{"model": "stranger-model", "messages": []any{map[string]any{"role": "user", "content": "hi"}}},
		map[string]string{"Authorization": "Bearer sk-omni-wrong"})
	e.mgmt(http.MethodPatch, "/api/gateway", map[string]any{"paused": false})
	e.restart() // flushes the request log

	search := func(q string) []map[string]any {
		t.Helper()
		code, m := e.mgmt("GET", "/api/logs?limit=1000&q="+url.QueryEscape(q), nil)
		if code != 200 {
			t.Fatalf("%s: %d %v", q, code, m)
		}
		var out []map[string]any
		for _, l := range m["logs"].([]any) {
			out = append(out, l.(map[string]any))
		}
		return out
	}
	paused := search("paused")
	if len(paused) != 1 || paused[0]["errorCode"] != "GATEWAY_PAUSED" || paused[0]["model"] != "paused-model" ||
		paused[0]["status"] != float64(503) || paused[0]["apiKeyId"] == "" || paused[0]["connectionId"] != "" {
		t.Fatalf("paused rows: %v", paused)
	}
	if rows := search("stranger-model"); len(rows) != 0 {
		t.Fatalf("a wrong key's paused request was logged: %v", rows)
	}
	refused := search("refused")
	if len(refused) != 2 { // the cooled-down refusal and the paused one
		t.Fatalf("refused rows: %d %v", len(refused), refused)
	}
	for _, r := range refused {
		if r["connectionId"] != "" || r["status"].(float64) < 400 {
			t.Fatalf("a row that was sent is found as refused: %v", r)
		}
	}
	lab := search("Lab box") // by the connection's name: served, failed and the refusal that excluded it
	if len(lab) != 3 {
		t.Fatalf("Lab box rows: %d %v", len(lab), lab)
	}
	// The words the page shows for a code find it (GATEWAY_PAUSED: "The gateway is paused…").
	if rows := search("until you resume"); len(rows) != 1 || rows[0]["errorCode"] != "GATEWAY_PAUSED" {
		t.Fatalf("by the code's words: %v", rows)
	}
	if rows := search("gateway paused"); len(rows) != 1 { // the code with spaces
		t.Fatalf("by the code with spaces: %v", rows)
	}
	if rows := search("Default"); len(rows) != 4 { // the key's name: every request, the paused one too
		t.Fatalf("by key name: %d %v", len(rows), rows)
	}
}
