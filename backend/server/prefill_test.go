package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
)

// modelPrefill is a connection's modelPrefill entry for model, from GET
// /api/providers/{id}.
func (e *env) modelPrefill(id, model string) map[string]any {
	e.t.Helper()
	code, m := e.mgmt("GET", "/api/providers/"+id, nil)
	if code != http.StatusOK {
		e.t.Fatalf("get %s: %d %v", id, code, m)
	}
	mp, _ := m["connection"].(map[string]any)["modelPrefill"].(map[string]any)
	entry, _ := mp[model].(map[string]any)
	return entry
}

// TestTestProbesThePrefill (issue 40): the connection Test sends one
// request ending with an assistant message holding the marker (with the
// continuation flags, one output token) on the model it checked, says what
// it found, and records it per (connection, model) so it is shown on the
// connection and survives a restart. Creating a connection sends no probe;
// a declared assistantPrefill overrides what was found and is not probed.
func TestTestProbesThePrefill(t *testing.T) {
	e := newEnv(t)
	const model = "gpt-4o-mini"
	honours, refuses := e.addConn("honours", "key-h", 1), e.addConn("refuses", "key-r", 2)
	if n := e.up.Hits("key-h") + e.up.Hits("key-r"); n != 0 {
		t.Fatalf("creating the connections sent %d upstream requests", n)
	}
	if got := e.modelPrefill(honours, model); got["prefill"] != "unknown" || got["prefillSource"] != nil {
		t.Fatalf("before any Test: %v", got)
	}
	e.up.AddFault("key-h", fakeupstream.Fault{Mode: fakeupstream.ModeHonourPrefill})
	e.up.AddFault("key-r", fakeupstream.Fault{Mode: fakeupstream.ModeRejectPrefill})

	for _, tc := range []struct {
		id, key, want, words string
		status               float64
	}{
		{honours, "key-h", "honoured", "honoured", 200},
		{refuses, "key-r", "refused", "refused", 400},
	} {
		before := e.up.ModelHits(tc.key, model)
		code, m := e.mgmt("POST", "/api/providers/"+tc.id+"/test", nil)
		p, _ := m["prefill"].(map[string]any)
		msg, _ := p["message"].(string)
		if code != http.StatusOK || m["ok"] != true || p["model"] != model || p["prefill"] != tc.want ||
			p["prefillSource"] != "probe" || p["status"] != tc.status || !strings.HasPrefix(msg, tc.words) {
			t.Fatalf("%s: test %d %v", tc.key, code, m)
		}
		// The model list, the completion and one probe.
		if n := e.up.ModelHits(tc.key, model) - before; n != 2 {
			t.Fatalf("%s: %d completions, want the check's and one probe", tc.key, n)
		}
		_, body := e.up.LastRequest(tc.key)
		last := gjson.GetBytes(body, "messages.1")
		if last.Get("role").String() != "assistant" || !strings.Contains(last.Get("content").String(), "OMNIROUTEPREFILLPROBE") ||
			gjson.GetBytes(body, "max_tokens").Int() != 1 || !gjson.GetBytes(body, "continue_final_message").Bool() {
			t.Fatalf("%s: the probe sent %s", tc.key, body)
		}
	}

	e.restart()
	for id, want := range map[string]string{honours: "honoured", refuses: "refused"} {
		if got := e.modelPrefill(id, model); got["prefill"] != want || got["prefillSource"] != "probe" {
			t.Fatalf("after a restart %s shows %v, want %s from the probe", id, got, want)
		}
	}

	// The Messages wire takes the probe as it is (no flags).
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "anthropic-compatible", "name": "claude-like",
		"apiKey": "key-ant", "baseUrl": e.upURL, "models": []string{"claude-fake"}})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	ant := m["connection"].(map[string]any)["id"].(string)
	e.up.AddFault("key-ant", fakeupstream.Fault{Mode: fakeupstream.ModeHonourPrefill})
	_, m = e.mgmt("POST", "/api/providers/"+ant+"/test", nil)
	_, body := e.up.LastRequest("key-ant")
	if p, _ := m["prefill"].(map[string]any); p["prefill"] != "honoured" || p["prefillSource"] != "probe" ||
		gjson.GetBytes(body, "messages.1.role").String() != "assistant" || gjson.GetBytes(body, "continue_final_message").Exists() {
		t.Fatalf("Messages probe: %v, sent %s", m, body)
	}

	// A declaration wins, and the Test then sends no probe.
	if code, m := e.mgmt("PATCH", "/api/providers/"+refuses, map[string]any{"providerSpecificData": map[string]any{"assistantPrefill": "trailing"}}); code != http.StatusOK {
		t.Fatalf("declare: %d %v", code, m)
	}
	if got := e.modelPrefill(refuses, model); got["prefill"] != "honoured" || got["prefillSource"] != "declared" {
		t.Fatalf("declared: %v", got)
	}
	before := e.up.ModelHits("key-r", model)
	_, m = e.mgmt("POST", "/api/providers/"+refuses+"/test", nil)
	if p, _ := m["prefill"].(map[string]any); p["skipped"] != true || p["prefillSource"] != "declared" || e.up.ModelHits("key-r", model)-before != 1 {
		t.Fatalf("test of a declared connection: %v (%d completions)", m, e.up.ModelHits("key-r", model)-before)
	}
}

// TestProbedRefusalIsNeverAskedToContinue: a model the Test's probe found
// refusing a prefill is not sent a continuation when a stream cut on
// another target, though with nothing known an OpenAI-compatible target
// would be asked: it is asked once, without a prefill, for a restarted
// answer that is spliced after the delivered text.
func TestProbedRefusalIsNeverAskedToContinue(t *testing.T) {
	e := newEnv(t)
	e.addModelConn("anthropic-compatible", "first", "key-a", 1, "m1")
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "openai-compatible", "name": "second",
		"apiKey": "key-b", "baseUrl": e.upURL, "priority": 2, "models": []string{"m1"}})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	second := m["connection"].(map[string]any)["id"].(string)
	e.up.SetFault("key-b", fakeupstream.Fault{Mode: fakeupstream.ModeRejectPrefill})
	if _, m := e.mgmt("POST", "/api/providers/"+second+"/test", nil); m["prefill"].(map[string]any)["prefill"] != "refused" {
		t.Fatalf("test: %v", m)
	}
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 2})
	before := e.up.Hits("key-b")
	_, body := e.chat("m1", true, nil)
	if n := e.up.Hits("key-b") - before; n != 1 || strings.Contains(string(body), "omniroute continued") ||
		!strings.Contains(string(body), "omniroute restarted the answer") {
		t.Fatalf("the refusing target was asked %d time(s), want once for a restart:\n%s", n, body)
	}
	if _, last := e.up.LastRequest("key-b"); gjson.GetBytes(last, "messages.#(role==\"assistant\")").Exists() {
		t.Fatalf("the refusing target was sent a prefill: %s", last)
	}
}

// TestTeamSharesWhatWasProbed: on a team server, what one instance's Test
// found of a model's prefill reaches the other instance through the
// database's change feed, without a restart.
func TestTeamSharesWhatWasProbed(t *testing.T) {
	a, b := newTeam(t)
	id := a.addConn("refuses", "key-r", 1)
	eventually(t, "the connection reaches B", func() bool {
		code, _ := b.mgmt("GET", "/api/providers/"+id, nil)
		return code == http.StatusOK
	})
	a.up.SetFault("key-r", fakeupstream.Fault{Mode: fakeupstream.ModeRejectPrefill})
	if _, m := a.mgmt("POST", "/api/providers/"+id+"/test", nil); m["prefill"].(map[string]any)["prefill"] != "refused" {
		t.Fatalf("test on A: %v", m)
	}
	eventually(t, "B shows the probe's refusal", func() bool {
		got := b.modelPrefill(id, "gpt-4o-mini")
		return got["prefill"] == "refused" && got["prefillSource"] == "probe"
	})
}
