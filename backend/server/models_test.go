package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"omniroute/tests/fakeupstream"
)

func strs(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func (e *env) createConn(body map[string]any) map[string]any {
	e.t.Helper()
	code, m := e.mgmt("POST", "/api/providers", body)
	if code != http.StatusCreated {
		e.t.Fatalf("create connection: %d %v", code, m)
	}
	return m["connection"].(map[string]any)
}

func (e *env) modelIDs() []string {
	e.t.Helper()
	resp, body := e.do("GET", "/v1/models", nil, map[string]string{"Authorization": "Bearer " + e.key})
	if resp.StatusCode != 200 {
		e.t.Fatalf("models: %d %s", resp.StatusCode, body)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	_ = json.Unmarshal(body, &list)
	var ids []string
	for _, d := range list.Data {
		ids = append(ids, d.ID)
	}
	return ids
}

// TestModelDiscoveryThroughTheAPI: a connection created without models asks
// its upstream (OpenAI and Anthropic shapes), the names route bare and show
// in /v1/models; a failing upstream leaves the catalogue's defaults; refresh,
// Test and PATCH keep the lists right.
func TestModelDiscoveryThroughTheAPI(t *testing.T) {
	e := newEnv(t)
	e.up.SetModels([]string{"m-alpha", "m-beta"})

	c := e.createConn(map[string]any{"provider": "openai-compatible", "name": "oa", "apiKey": "disc-oa", "baseUrl": e.upURL, "prefix": "wall"})
	if got := strs(c["discoveredModels"]); !slices.Equal(got, []string{"m-alpha", "m-beta"}) || c["modelsSource"] != "upstream" {
		t.Fatalf("discovered %v source %v", got, c["modelsSource"])
	}
	// GET /models, then the credential check's one-token completion on the
	// first discovered model.
	if h, body := e.up.LastRequest("disc-oa"); e.up.Hits("disc-oa") != 2 || e.up.LastPath("disc-oa") != "/v1/chat/completions" ||
		h.Get("Authorization") != "Bearer disc-oa" || e.up.LastModel("disc-oa") != "m-alpha" || !strings.Contains(string(body), `"max_tokens":1`) {
		t.Fatalf("discovery and check requests: %d, last %s %v %s", e.up.Hits("disc-oa"), e.up.LastPath("disc-oa"), h, body)
	}
	ids := e.modelIDs()
	for _, want := range []string{"m-alpha", "openai-compatible/m-alpha", "wall/m-alpha", "m-beta"} {
		if !slices.Contains(ids, want) {
			t.Errorf("/v1/models lacks %s: %v", want, ids)
		}
	}
	if resp, body := e.chat("m-beta", false, nil); resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != c["id"] {
		t.Fatalf("bare discovered name: %d %s", resp.StatusCode, body)
	}

	// Anthropic shape, paged.
	e.up.SetModelsPageSize(1)
	a := e.createConn(map[string]any{"provider": "anthropic-compatible", "name": "an", "apiKey": "disc-an", "baseUrl": e.upURL})
	if got := strs(a["discoveredModels"]); !slices.Equal(got, []string{"m-alpha", "m-beta"}) || e.up.Hits("disc-an") != 3 || e.up.LastPath("disc-an") != "/v1/messages" {
		t.Fatalf("anthropic discovered %v in %d requests (two pages and the check's completion), last %s", got, e.up.Hits("disc-an"), e.up.LastPath("disc-an"))
	}
	if h, _ := e.up.LastRequest("disc-an"); h.Get("X-Api-Key") != "disc-an" || h.Get("Anthropic-Version") == "" {
		t.Fatalf("anthropic discovery headers %v", h)
	}
	e.up.SetModelsPageSize(0)

	// Discovery fails: a known provider falls back to its catalogue list.
	e.up.SetFault("disc-glm", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 500})
	g := e.createConn(map[string]any{"provider": "glm", "name": "glm", "apiKey": "disc-glm", "baseUrl": e.upURL})
	if got := strs(g["discoveredModels"]); !slices.Contains(got, "glm-4.6") || g["modelsSource"] != "catalog" || !strings.Contains(g["modelsError"].(string), "500") {
		t.Fatalf("catalogue fallback: %v %v %v", got, g["modelsSource"], g["modelsError"])
	}
	if !slices.Contains(e.modelIDs(), "glm/glm-4.6") {
		t.Fatal("/v1/models lacks the catalogue default glm/glm-4.6")
	}
	_, cat := e.mgmt("GET", "/api/providers/catalog", nil)
	for _, p := range cat["providers"].([]any) {
		if p := p.(map[string]any); p["id"] == "glm" && !slices.Contains(strs(p["defaultModels"]), "glm-4.6") {
			t.Fatalf("catalogue entry %v", p)
		}
	}

	// A listed model list is checked on create (GET /models and one
	// completion, issue 42) but stays the user's: the upstream's list is not stored.
	listed := e.createConn(map[string]any{"provider": "openai-compatible", "name": "listed", "apiKey": "disc-listed", "baseUrl": e.upURL, "models": []string{"x"}})
	if e.up.Hits("disc-listed") != 2 {
		t.Fatalf("create with models asked the upstream %d times, want the check's 2", e.up.Hits("disc-listed"))
	}
	if got := strs(listed["servedModels"]); !slices.Equal(got, []string{"x"}) {
		t.Fatalf("create with models serves %v, want only the listed x", got)
	}

	// Refresh: a new upstream list replaces the old; a failure keeps it.
	e.up.SetModels([]string{"m-gamma"})
	code, r := e.mgmt("POST", "/api/providers/"+c["id"].(string)+"/models/refresh", nil)
	conn, _ := r["connection"].(map[string]any)
	if code != 200 || r["ok"] != true || !slices.Equal(strs(conn["discoveredModels"]), []string{"m-gamma"}) {
		t.Fatalf("refresh: %d %v", code, r)
	}
	e.up.SetFault("disc-oa", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 401, Times: 1})
	code, r = e.mgmt("POST", "/api/providers/"+c["id"].(string)+"/models/refresh", nil)
	conn, _ = r["connection"].(map[string]any)
	errObj, _ := r["error"].(map[string]any)
	if code != 200 || r["ok"] != false || errObj["code"] != "UPSTREAM_STATUS" || !slices.Equal(strs(conn["discoveredModels"]), []string{"m-gamma"}) {
		t.Fatalf("failed refresh: %d %v", code, r)
	}
	if strings.Contains(string(mustJSON(r)), "disc-oa") {
		t.Fatal("refresh answer contains the key")
	}
	// Test also stores the list.
	e.up.SetModels([]string{"m-delta"})
	code, r = e.mgmt("POST", "/api/providers/"+c["id"].(string)+"/test", nil)
	if code != 200 || r["ok"] != true || !slices.Contains(strs(r["models"]), "m-delta") {
		t.Fatalf("test: %d %v", code, r)
	}
	// PATCH edits the user's list; both lists are served.
	code, r = e.mgmt("PATCH", "/api/providers/"+c["id"].(string), map[string]any{"models": []string{"mine-1"}})
	conn, _ = r["connection"].(map[string]any)
	if code != 200 || !slices.Equal(strs(conn["servedModels"]), []string{"mine-1", "m-delta"}) {
		t.Fatalf("patch models: %d %v", code, r)
	}
	code, r = e.mgmt("PATCH", "/api/providers/"+c["id"].(string), map[string]any{"discoveredModels": []string{"bad name"}})
	if code != 400 {
		t.Fatalf("invalid discoveredModels: %d %v", code, r)
	}
	if resp, body := e.chat("mine-1", false, nil); resp.StatusCode != 200 {
		t.Fatalf("bare listed name: %d %s", resp.StatusCode, body)
	}
	if code, _ := e.mgmt("POST", "/api/providers/nope/models/refresh", nil); code != 404 {
		t.Fatalf("refresh of an unknown connection: %d", code)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// TestAgentModelMap: Claude Code's default model name (with its [1m] suffix)
// routes through the map instead of 404; the map is validated; explain says so.
func TestAgentModelMap(t *testing.T) {
	e := newEnv(t)
	big := e.createConn(map[string]any{"provider": "openai-compatible", "name": "big", "apiKey": "key-big", "baseUrl": e.upURL, "models": []string{"glm-4.6"}, "priority": 1})
	cheap := e.createConn(map[string]any{"provider": "openai-compatible", "name": "cheap", "apiKey": "key-cheap", "baseUrl": e.upURL, "models": []string{"glm-4.5-flash"}, "priority": 2})

	messages := func(model string) (*http.Response, []byte) {
		return e.do("POST", "/v1/messages", map[string]any{"model": model, "max_tokens": 64,
			"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, map[string]string{"x-api-key": e.key, "anthropic-version": "2023-06-01"})
	}
	// Automatic default: the first served model.
	resp, body := messages("claude-opus-4-8[1m]")
	if resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != big["id"] || e.up.LastModel("key-big") != "glm-4.6" {
		t.Fatalf("claude default model: %d %s", resp.StatusCode, body)
	}
	code, ex := e.mgmt("GET", "/api/routing/explain?model=claude-opus-4-8%5B1m%5D", nil)
	am, _ := ex["agentModelMap"].(map[string]any)
	if code != 200 || am["source"] != "default" || am["family"] != "opus" || am["target"] != "glm-4.6" || !strings.Contains(am["reason"].(string), "agent model map") {
		t.Fatalf("explain: %d %v", code, ex)
	}

	// Validation: a target nobody serves is refused with the field named.
	code, m := e.mgmt("PATCH", "/api/settings", map[string]any{"agentModelMap": map[string]any{"haiku": "nope-model"}})
	if errObj, _ := m["error"].(map[string]any); code != 400 || errObj["param"] != "agentModelMap.haiku" {
		t.Fatalf("unserved target: %d %v", code, m)
	}
	code, m = e.mgmt("PATCH", "/api/settings", map[string]any{"agentModelMap": map[string]any{"haiku": "has space"}})
	if code != 400 {
		t.Fatalf("bad name: %d %v", code, m)
	}
	// Background (haiku) requests to the cheap model.
	e.patchSettings(map[string]any{"agentModelMap": map[string]any{"haiku": "glm-4.5-flash"}})
	resp, body = messages("claude-3-5-haiku-20241022")
	if resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != cheap["id"] {
		t.Fatalf("haiku via map: %d %s", resp.StatusCode, body)
	}
	code, ex = e.mgmt("GET", "/api/routing/explain?model=claude-haiku-4-5", nil)
	if am, _ := ex["agentModelMap"].(map[string]any); code != 200 || am["source"] != "setting" || am["target"] != "glm-4.5-flash" {
		t.Fatalf("explain setting: %v", ex)
	}
	code, g := e.mgmt("GET", "/api/settings", nil)
	if gm, _ := g["agentModelMap"].(map[string]any); code != 200 || gm["haiku"] != "glm-4.5-flash" || gm["enabled"] != true {
		t.Fatalf("settings: %v", g)
	}
	// Off: the agent's name is a 404 again, and a served name never maps.
	e.patchSettings(map[string]any{"agentModelMap": map[string]any{"enabled": false}})
	if resp, body := messages("claude-opus-4-8"); resp.StatusCode != 404 {
		t.Fatalf("map off: %d %s", resp.StatusCode, body)
	}
	code, ex = e.mgmt("GET", "/api/routing/explain?model=glm-4.6", nil)
	if _, mapped := ex["agentModelMap"]; code != 200 || mapped {
		t.Fatalf("served name mapped: %v", ex)
	}
}

// TestAgentSetupChoosesRoutableModels: setup refuses when nothing serves the
// model, and writes names that route.
func TestAgentSetupChoosesRoutableModels(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("CODEX_HOME", "")
	e := newEnv(t)
	code, m := e.mgmt("POST", "/api/agents/claude-code/setup", map[string]any{})
	if errObj, _ := m["error"].(map[string]any); code != 409 || errObj["code"] != "NO_MODEL_SERVED" {
		t.Fatalf("setup without connections: %d %v", code, m)
	}
	if _, err := os.Stat(filepath.Join(home, ".claude", "settings.json")); !os.IsNotExist(err) {
		t.Fatal("a refused setup wrote the file")
	}
	e.createConn(map[string]any{"provider": "openai-compatible", "name": "a", "apiKey": "key-a", "baseUrl": e.upURL, "models": []string{"glm-4.6", "glm-4.5-flash"}})
	code, m = e.mgmt("POST", "/api/agents/codex/setup", map[string]any{"model": "gpt-5-codex"})
	if errObj, _ := m["error"].(map[string]any); code != 400 || errObj["code"] != "AGENT_MODEL_NOT_SERVED" || errObj["param"] != "model" {
		t.Fatalf("setup with an unserved model: %d %v", code, m)
	}
	e.patchSettings(map[string]any{"agentModelMap": map[string]any{"haiku": "glm-4.5-flash"}})
	code, m = e.mgmt("POST", "/api/agents/claude-code/setup", map[string]any{"model": "glm-4.6"})
	if code != 200 {
		t.Fatalf("setup: %d %v", code, m)
	}
	b, err := os.ReadFile(filepath.Join(home, ".claude", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"ANTHROPIC_MODEL": "glm-4.6"`, `"ANTHROPIC_DEFAULT_OPUS_MODEL": "glm-4.6"`, `"ANTHROPIC_DEFAULT_HAIKU_MODEL": "glm-4.5-flash"`, `"ANTHROPIC_SMALL_FAST_MODEL": "glm-4.5-flash"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("settings.json lacks %s:\n%s", want, b)
		}
	}
	// The CLI asks the same question over HTTP.
	code, m = e.mgmt("GET", "/api/agents/codex/models", nil)
	models, _ := m["models"].(map[string]any)
	if code != 200 || models["model"] != "glm-4.6" || models["source"] != "default" {
		t.Fatalf("codex models: %d %v", code, m)
	}
	if code, _ := e.mgmt("GET", "/api/agents/nope/models", nil); code != 404 {
		t.Fatalf("unknown agent: %d", code)
	}
}

// TestContinueSetupPicksRoleModels: setup for Continue writes a served code
// model as the autocomplete model and a served embedding model as the embed
// model, whatever the main model is; with neither served, autocomplete uses
// the main model and no embed entry is written.
func TestContinueSetupPicksRoleModels(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CONTINUE_GLOBAL_DIR", "")
	e := newEnv(t)
	e.createConn(map[string]any{"provider": "openai-compatible", "name": "a", "apiKey": "key-a", "baseUrl": e.upURL, "models": []string{"glm-4.6"}})
	code, m := e.mgmt("GET", "/api/agents/continue/models", nil)
	models, _ := m["models"].(map[string]any)
	if code != 200 || models["model"] != "glm-4.6" || models["autocomplete"] != "glm-4.6" || models["embed"] != nil {
		t.Fatalf("continue models with a chat model only: %d %v", code, m)
	}
	e.createConn(map[string]any{"provider": "openai-compatible", "name": "b", "apiKey": "key-b", "baseUrl": e.upURL,
		"models": []string{"text-embedding-3-small", "qwen2.5-coder-7b"}})
	code, m = e.mgmt("POST", "/api/agents/continue/setup", map[string]any{"model": "glm-4.6"})
	if code != 200 {
		t.Fatalf("setup: %d %v", code, m)
	}
	b, err := os.ReadFile(filepath.Join(home, ".continue", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"model: glm-4.6\n", "model: qwen2.5-coder-7b\n", "roles: [autocomplete]", "model: text-embedding-3-small\n", "roles: [embed]"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("config.yaml lacks %q:\n%s", want, b)
		}
	}
}

// TestClaudeCodeSetupDefaultsToTheClaudeConnection: without --model, setup
// for Claude Code writes the Claude connection's own model of each family,
// not the first served model of an unrelated endpoint that comes first.
func TestClaudeCodeSetupDefaultsToTheClaudeConnection(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	e := newEnv(t)
	e.createConn(map[string]any{"provider": "openai-compatible", "name": "a", "apiKey": "key-a", "baseUrl": e.upURL, "priority": 1, "models": []string{"glm-4.6"}})
	e.createConn(map[string]any{"provider": "anthropic", "name": "claude", "apiKey": "key-c", "baseUrl": e.upURL, "priority": 2,
		"models": []string{"claude-opus-5-5", "claude-sonnet-5-0", "claude-haiku-4-5"}})
	code, m := e.mgmt("GET", "/api/agents/claude-code/models", nil)
	models, _ := m["models"].(map[string]any)
	if code != 200 || models["model"] != "claude-sonnet-5-0" || models["opus"] != "claude-opus-5-5" ||
		models["sonnet"] != "claude-sonnet-5-0" || models["haiku"] != "claude-haiku-4-5" {
		t.Fatalf("claude-code models: %d %v", code, m)
	}
	// An explicit model still wins for every family but haiku's map target.
	code, m = e.mgmt("GET", "/api/agents/claude-code/models?model=glm-4.6", nil)
	models, _ = m["models"].(map[string]any)
	if code != 200 || models["model"] != "glm-4.6" || models["opus"] != "glm-4.6" || models["haiku"] != "glm-4.6" ||
		models["contextWindow"] != float64(200000) {
		t.Fatalf("claude-code models with --model: %d %v", code, m)
	}
	// A combo's window is the smallest of its targets' (declared, else known).
	e.addCombo("mix", "priority", map[string]any{"model": "glm-4.6"}, map[string]any{"model": "claude-sonnet-5-0", "contextWindow": 150000})
	code, m = e.mgmt("GET", "/api/agents/claude-code/models?model=mix", nil)
	models, _ = m["models"].(map[string]any)
	if code != 200 || models["contextWindow"] != float64(150000) {
		t.Fatalf("claude-code models for a combo: %d %v", code, m)
	}
}
