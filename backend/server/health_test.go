package server_test

import (
	"net/http"
	"testing"
	"time"

	"omniroute/tests/fakeupstream"
)

// TestHealthModelThroughTheAPI: GET /api/monitoring/health carries the one
// health model: setup with no connection, then the OPEN-breaker endpoint named
// with its reason and back-at while the other connection serves (degraded, not
// unhealthy), and the anonymous view says only the status.
func TestHealthModelThroughTheAPI(t *testing.T) {
	e := newEnv(t)
	if h := e.health(); h["status"] != "setup" || h["summary"].(map[string]any)["total"].(float64) != 0 {
		t.Fatalf("no connections: %v", h["summary"])
	}
	resp, body := e.do("GET", "/api/monitoring/health", nil, nil)
	if resp.StatusCode != 200 || string(body) != `{"setupComplete":false,"status":"setup"}`+"\n" {
		t.Fatalf("anonymous: %d %s", resp.StatusCode, body)
	}

	good := e.addConn("good", "key-b", 2)
	lab := e.addEndpoint("lab", "key-a")
	e.patchResilience(map[string]any{"failover": map[string]any{"failureStreak": 100}}) // no streak cooldown: the 503s reach the breaker
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503})
	for i := 0; i < 12; i++ {
		e.chat("lab/gpt-4o-mini", false, nil)
	}
	h := e.health()
	if h["status"] != "degraded" {
		t.Fatalf("one of two serving: %v %v", h["status"], h["summary"])
	}
	var labH, goodH map[string]any
	for _, c := range h["connections"].([]any) {
		m := c.(map[string]any)
		switch m["id"] {
		case lab:
			labH = m
		case good:
			goodH = m
		}
	}
	if labH["state"] != "breaker_open" || labH["serving"] != false || labH["until"] == nil || labH["providerName"] != "lab" {
		t.Fatalf("lab connection %v", labH)
	}
	until, err := time.Parse(time.RFC3339Nano, labH["until"].(string))
	if err != nil || !until.Equal(e.clk.Now().Add(15*time.Second)) { // the next probe (issue 40)
		t.Fatalf("lab back at %v (%v), want now+15s", labH["until"], err)
	}
	if goodH["state"] != "serving" || goodH["serving"] != true {
		t.Fatalf("good connection %v", goodH)
	}
	s := h["summary"].(map[string]any)
	if s["serving"].(float64) != 1 || s["total"].(float64) != 2 || s["nextId"] != lab {
		t.Fatalf("summary %v", s)
	}
	var provider map[string]any
	for _, p := range h["providers"].([]any) {
		if m := p.(map[string]any); m["id"] == "openai-compatible:lab" {
			provider = m
		}
	}
	if provider["state"] != "breaker_open" || provider["name"] != "lab" {
		t.Fatalf("provider %v", provider)
	}
	if code, _ := e.mgmt(http.MethodDelete, "/api/monitoring/health", nil); code != 200 {
		t.Fatal("reset")
	}
	if h := e.health(); h["status"] != "healthy" {
		t.Fatalf("after reset %v", h["summary"])
	}
}

// TestHealthPausedIsAState: while the gateway is paused the health API says
// "paused" (not degraded or healthy), for management and anonymous callers
// alike, and says healthy again once resumed.
func TestHealthPausedIsAState(t *testing.T) {
	e := newEnv(t)
	e.addConn("good", "key-b", 1)
	if h := e.health(); h["status"] != "healthy" {
		t.Fatalf("before pause %v", h["status"])
	}
	if code, m := e.mgmt(http.MethodPatch, "/api/gateway", map[string]any{"paused": true}); code != 200 || m["paused"] != true {
		t.Fatalf("pause: %d %v", code, m)
	}
	h := e.health()
	if h["status"] != "paused" || h["summary"].(map[string]any)["status"] != "paused" || h["paused"] != true {
		t.Fatalf("paused: status %v summary %v", h["status"], h["summary"])
	}
	if _, body := e.do("GET", "/api/monitoring/health", nil, nil); string(body) != `{"setupComplete":true,"status":"paused"}`+"\n" {
		t.Fatalf("anonymous while paused: %s", body)
	}
	e.mgmt(http.MethodPatch, "/api/gateway", map[string]any{"paused": false})
	if h := e.health(); h["status"] != "healthy" {
		t.Fatalf("resumed: %v", h["status"])
	}
}
