package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"omniroute/tests/fakeupstream"
)

// closedURL is a loopback base URL nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	u, err := fakeupstream.ClosedURL()
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestDiagnosable: a transport failure's attempt row carries the transport's
// own words; a connection whose upstream never answered since it was added
// reads unreachable (not serving, no back-in time) in the health model and in
// the cooldown list, also once its cooldown ran out; one reached before reads
// unreachable only after 3 attempts in a row got no answer, and an answer
// ends it.
func TestDiagnosable(t *testing.T) {
	e := newEnv(t)
	e.patchResilience(map[string]any{"failover": map[string]any{"failureStreak": 100, "retriesPerTarget": 0}})

	// Never reached: created against a closed port (discovery could not reach it).
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "openai-compatible", "name": "Nowhere",
		"apiKey": "key-n", "baseUrl": closedURL(t), "prefix": "nowhere", "models": []string{"gpt-4o-mini"}, "verify": true})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	nowhere := m["connection"].(map[string]any)["id"].(string)
	c := e.connHealth(e.health(), nowhere)
	if c["state"] != "unreachable" || c["serving"] != false || c["until"] != nil || !hasFix(c, "edit_connection") {
		t.Fatalf("never reached: %v", c)
	}
	if !strings.Contains(c["reason"].(string), "could not be reached") {
		t.Fatalf("reason %v", c["reason"])
	}
	// Setup is warned (the CLI refuses without --force) when every connection
	// serving the model is unreachable; a model another connection serves is not.
	if code, am := e.mgmt("GET", "/api/agents/claude-code/models?model=nowhere/gpt-4o-mini", nil); code != 200 ||
		!strings.Contains(am["models"].(map[string]any)["warning"].(string), "Nowhere: the upstream could not be reached") {
		t.Fatalf("setup on an unreachable model: %d %v", code, am)
	}
	// The dashboard's Configure refuses it unless forced (HOME is the test's own).
	e.t.Setenv("HOME", e.t.TempDir())
	e.t.Setenv("CODEX_HOME", "")
	if code, r := e.mgmt("POST", "/api/agents/codex/setup", map[string]any{"model": "nowhere/gpt-4o-mini"}); code != http.StatusConflict ||
		r["error"].(map[string]any)["code"] != "AGENT_MODEL_UNSERVABLE" {
		t.Fatalf("configure an unreachable model: %d %v", code, r)
	}
	if code, r := e.mgmt("POST", "/api/agents/codex/setup", map[string]any{"model": "nowhere/gpt-4o-mini", "force": true}); code != http.StatusOK ||
		r["models"].(map[string]any)["warning"] == nil {
		t.Fatalf("configure anyway: %d %v", code, r)
	}
	e.addConn("good", "key-g", 2)
	if code, am := e.mgmt("GET", "/api/agents/claude-code/models?model=gpt-4o-mini", nil); code != 200 || am["models"].(map[string]any)["warning"] != nil {
		t.Fatalf("setup on a served model: %d %v", code, am)
	}
	e.clk.Advance(24 * 60 * 60 * 1e9) // any cooldown has run out
	if c := e.connHealth(e.health(), nowhere); c["state"] != "unreachable" {
		t.Fatalf("after the cooldown: %v", c)
	}
	_, cd := e.mgmt("GET", "/api/resilience/cooldowns", nil)
	for _, x := range cd["connections"].([]any) {
		if x := x.(map[string]any); x["id"] == nowhere && x["status"] != "unreachable" {
			t.Fatalf("cooldown list says %v", x["status"])
		}
	}

	// Reached before: three resets in a row make it unreachable; the attempt
	// rows carry the transport's words.
	lab := e.addEndpoint("lab", "key-a")
	if resp, _ := e.chat("lab/gpt-4o-mini", false, nil); resp.StatusCode != 200 {
		t.Fatalf("first: %d", resp.StatusCode)
	}
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeResetBeforeHeaders})
	for i := 1; i <= 3; i++ {
		e.chat("lab/gpt-4o-mini", false, nil)
		e.clk.Advance(24 * 60 * 60 * 1e9) // past any cooldown, so the next request tries it again
		state := e.connHealth(e.health(), lab)["state"]
		if want := map[bool]string{true: "unreachable", false: "serving"}[i == 3]; state != want {
			t.Fatalf("after %d resets: %v, want %s", i, state, want)
		}
	}
	e.restart() // flushes the request log (the reach is in memory: a restart starts afresh)
	_, lm := e.mgmt("GET", "/api/logs?limit=10&connectionId="+lab, nil)
	logs := lm["logs"].([]any)
	att := logs[0].(map[string]any)["attempts"].([]any)[0].(map[string]any)
	if att["verdict"] != "transport" || att["detail"] == nil || att["detail"] == "" {
		t.Fatalf("transport attempt without its words: %v", att)
	}
	e.up.ClearFault("key-a")
	if resp, _ := e.chat("lab/gpt-4o-mini", false, nil); resp.StatusCode != 200 {
		t.Fatalf("answered: %d", resp.StatusCode)
	}
	if c := e.connHealth(e.health(), lab); c["state"] != "serving" {
		t.Fatalf("an answer ends unreachable: %v", c)
	}
}

// TestPlainWordsAndOneName: GET /api/words serves the catalogue of plain
// sentences (codes, states, fixes); a user-defined endpoint is named by the
// name the user typed ("Lab box") as connection and as provider, never by its
// prefix, in the health model every page reads.
func TestPlainWordsAndOneName(t *testing.T) {
	e := newEnv(t)
	code, w := e.mgmt("GET", "/api/words", nil)
	// A provider module's own codes (its sign-in's) are in the one catalogue too.
	if code != 200 || w["codes"].(map[string]any)["UPSTREAM_RATE_LIMITED"] == "" || w["codes"].(map[string]any)["GITHUB_UNREACHABLE"] == nil ||
		w["states"].(map[string]any)["unreachable"].(map[string]any)["label"] != "Unreachable" ||
		w["fixes"].(map[string]any)["replace_key"] != "Replace key" {
		t.Fatalf("words %d %v", code, w)
	}
	if resp, _ := e.do("GET", "/api/words", nil, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("words without the token: %d", resp.StatusCode)
	}
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"verify": false, "provider": "openai-compatible", "name": "Lab box",
		"apiKey": "key-a", "baseUrl": e.upURL, "prefix": "lab", "models": []string{"gpt-4o-mini"}})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	h := e.health()
	c := e.connHealth(h, m["connection"].(map[string]any)["id"].(string))
	if c["name"] != "Lab box" || c["providerName"] != "Lab box" {
		t.Fatalf("connection names %v / %v", c["name"], c["providerName"])
	}
	for _, p := range h["providers"].([]any) {
		if p := p.(map[string]any); p["id"] == "openai-compatible:lab" && p["name"] != "Lab box" {
			t.Fatalf("provider name %v", p["name"])
		}
	}
}

// TestUnknownModelIsNotRemapped: with the agent model map on, a name no
// agent sends by itself (gpt-5-ultra) is a 404 MODEL_NOT_FOUND, not silently
// mapped to a combo; a typo of a served name names it as the suggestion; an
// agent's real default (claude-sonnet-4-5) is still mapped.
func TestUnknownModelIsNotRemapped(t *testing.T) {
	e := newEnv(t)
	e.addConn("good", "key-b", 1)
	e.patchSettings(map[string]any{"agentModelMap": map[string]any{"enabled": true}})
	resp, body := e.chat("gpt-5-ultra", false, nil)
	if resp.StatusCode != 404 || errorCode(body) != "MODEL_NOT_FOUND" {
		t.Fatalf("gpt-5-ultra: %d %s", resp.StatusCode, body)
	}
	resp, body = e.chat("gpt-4o-mni", false, nil)
	var env struct {
		Error struct {
			Message    string `json:"message"`
			Suggestion string `json:"suggestion"`
		} `json:"error"`
	}
	if resp.StatusCode != 404 || json.Unmarshal(body, &env) != nil || env.Error.Suggestion != "gpt-4o-mini" ||
		!strings.Contains(env.Error.Message, `did you mean "gpt-4o-mini"`) {
		t.Fatalf("typo: %d %s", resp.StatusCode, body)
	}
	if resp, body := e.chat("claude-sonnet-4-5", false, nil); resp.StatusCode != 200 {
		t.Fatalf("an agent default is mapped: %d %s", resp.StatusCode, body)
	}
}

// TestAgentChoices: Configure's list offers the served combos and models, the
// combo used most in the last week first (not the alphabetically first),
// serving before not serving; setup without a model takes that combo; the
// agent model map's target the user set wins.
func TestAgentChoices(t *testing.T) {
	e := newEnv(t)
	e.addConn("good", "key-b", 1)
	for _, name := range []string{"cheap", "main"} {
		if code, m := e.mgmt("POST", "/api/combos", map[string]any{"name": name, "strategy": "priority",
			"targets": []any{map[string]any{"model": "gpt-4o-mini"}}}); code != http.StatusCreated {
			t.Fatalf("combo %s: %d %v", name, code, m)
		}
	}
	for i := 0; i < 3; i++ {
		e.chat("main", false, nil)
	}
	e.chat("cheap", false, nil)
	e.restart() // flushes the request log and its usage rollup
	choices := func() []map[string]any {
		t.Helper()
		code, m := e.mgmt("GET", "/api/agents/claude-code/choices", nil)
		if code != 200 {
			t.Fatalf("choices %d %v", code, m)
		}
		var out []map[string]any
		for _, c := range m["choices"].([]any) {
			out = append(out, c.(map[string]any))
		}
		return out
	}
	cs := choices()
	if len(cs) != 3 || cs[0]["name"] != "main" || cs[0]["recommended"] != true || cs[0]["requests"].(float64) != 3 ||
		cs[1]["name"] != "cheap" || cs[2]["name"] != "gpt-4o-mini" || cs[2]["kind"] != "model" {
		t.Fatalf("choices %v", cs)
	}
	if _, am := e.mgmt("GET", "/api/agents/claude-code/models", nil); am["models"].(map[string]any)["model"] != "main" {
		t.Fatalf("setup's default %v", am)
	}
	e.patchSettings(map[string]any{"agentModelMap": map[string]any{"enabled": true, "sonnet": "cheap"}})
	if cs := choices(); cs[0]["name"] != "cheap" || cs[0]["recommended"] != true {
		t.Fatalf("the user's choice first: %v", cs)
	}
	if code, _ := e.mgmt("GET", "/api/agents/nope/choices", nil); code != 404 {
		t.Fatalf("unknown agent: %d", code)
	}
}
