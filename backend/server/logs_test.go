package server_test

import (
	"fmt"
	"testing"

	"omniroute/tests/fakeupstream"
)

// TestRequestLogTimelineAndFilters: a refused request's log row names no
// connection (none was tried) but its reason (the error code) and lists every
// exclusion with its reason (not "refused before routing"); attempts carry
// their start offset; GET /api/logs filters by status, connection, model and key.
func TestRequestLogTimelineAndFilters(t *testing.T) {
	e := newEnv(t)
	good := e.addConn("good", "key-b", 2)
	lab := e.addEndpoint("lab", "key-a")
	e.patchResilience(map[string]any{"failover": map[string]any{"failureStreak": 100, "retriesPerTarget": 0}}) // one attempt each, no streak cooldown: the 503s reach the breaker
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503})
	for i := 0; i < 12; i++ {
		e.chat("lab/gpt-4o-mini", false, nil)
	}
	if resp, _ := e.chat("lab/gpt-4o-mini", false, nil); resp.StatusCode != 503 {
		t.Fatalf("open breaker: %d", resp.StatusCode)
	}
	if resp, _ := e.chat("openai-compatible/gpt-4o-mini", false, nil); resp.StatusCode != 200 {
		t.Fatalf("good: %d", resp.StatusCode)
	}
	e.restart() // flushes the request log

	code, m := e.mgmt("GET", "/api/logs?limit=1000", nil)
	if code != 200 {
		t.Fatalf("logs %d %v", code, m)
	}
	logs := m["logs"].([]any)
	if len(logs) != 14 {
		t.Fatalf("%d logs, want 14", len(logs))
	}
	refused := logs[1].(map[string]any) // newest first: good, then the refused one
	if refused["status"].(float64) != 503 || refused["connectionId"] != "" || refused["provider"] != "" || refused["errorCode"] == "" {
		t.Fatalf("a refusal names no connection, and a reason: %v", refused)
	}
	atts := refused["attempts"].([]any)
	if len(atts) != 1 || refused["attemptCount"].(float64) != 0 {
		t.Fatalf("refused row %v", refused)
	}
	x := atts[0].(map[string]any)
	if x["verdict"] != "excluded" || x["code"] != "circuit_open" || x["connectionId"] != lab || x["remainingMs"].(float64) <= 0 {
		t.Fatalf("exclusion %v", x)
	}
	// Usage by connection charges the excluded connection only with the
	// requests that reached it; the refusal is its own series.
	if code, u := e.mgmt("GET", "/api/usage?range=hour&by=connection", nil); code == 200 {
		got := map[string]float64{}
		for _, sr := range u["series"].([]any) {
			m := sr.(map[string]any)
			got[m["key"].(string)] = m["total"].(map[string]any)["requests"].(float64)
		}
		if got[lab] != 12 || got[good] != 1 || got[""] != 1 {
			t.Fatalf("usage by connection %v, want lab 12, good 1, refused 1", got)
		}
	} else {
		t.Fatalf("usage %d %v", code, u)
	}
	first := logs[13].(map[string]any)["attempts"].([]any)[0].(map[string]any)
	if first["verdict"] == "" || first["verdict"] == "excluded" {
		t.Fatalf("attempt %v", first)
	}
	if _, ok := first["startMs"]; !ok {
		t.Fatalf("attempt without startMs: %v", first)
	}

	count := func(q string) int {
		t.Helper()
		code, m := e.mgmt("GET", "/api/logs?limit=1000&"+q, nil)
		if code != 200 {
			t.Fatalf("%s: %d %v", q, code, m)
		}
		return len(m["logs"].([]any))
	}
	keyID := logs[0].(map[string]any)["apiKeyId"].(string)
	for q, want := range map[string]int{
		"status=error": 13, "status=ok": 1, "status=200": 1, "status=502": 11, "status=503": 2, // the 12th failure opens the breaker: 503 with its next probe (issue 40)
		"connectionId=" + good: 1, "connectionId=" + lab: 12, "model=lab/gpt-4o-mini": 13,
		"keyId=" + keyID: 14, "keyId=nobody": 0, "status=error&connectionId=" + good: 0,
	} {
		if got := count(q); got != want {
			t.Errorf("%s: %d rows, want %d", q, got, want)
		}
	}
	for _, bad := range []string{"status=teapot", "status=42"} {
		if code, m := e.mgmt("GET", "/api/logs?"+bad, nil); code != 400 || fmt.Sprint(m["error"]) == "" {
			t.Errorf("%s: %d %v", bad, code, m)
		}
	}
}
