package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"omniroute/tests/fakeupstream"
)

// userEnv is the environment of a user with a fresh HOME who runs the CLI
// against the gateway g: no agent variable, no exported key.
func userEnv(g *gatewayProc, home string, extra ...string) []string {
	env := gatewayEnv(g.dir, g.port, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"CLAUDE_CONFIG_DIR=", "CODEX_HOME=", "ANTHROPIC_API_KEY=", "OMNIROUTE_API_KEY=")
	return append(env, extra...)
}

// TestModelsDiscoveredAndAgentsSetUp walks a new user's first steps with the
// real binary: a connection added without models learns them from its
// upstream, bare names route, Claude Code's own default model routes through
// the agent model map, and setup writes configs that name routable models.
func TestModelsDiscoveredAndAgentsSetUp(t *testing.T) {
	t.Parallel()
	up := fakeupstream.New()
	upURL := up.Start()
	t.Cleanup(up.Close)
	up.SetModels([]string{"up-large", "up-small"})
	g := startGateway(t, t.TempDir(), 0)

	m := g.mustMgmt(http.StatusCreated, http.MethodPost, "/api/providers", map[string]any{
		"provider": "openai-compatible", "name": "discovered", "apiKey": "key-disc", "baseUrl": upURL + "/v1"})
	conn, _ := m["connection"].(map[string]any)
	if got := toStrings(conn["discoveredModels"]); !slices.Equal(got, []string{"up-large", "up-small"}) {
		t.Fatalf("discovered %v: %v", got, conn)
	}

	// /v1/models lists the discovered names, bare and qualified; a bare name routes.
	resp, body := g.do(http.MethodGet, "/v1/models", nil, map[string]string{"Authorization": "Bearer " + g.key})
	for _, want := range []string{`"up-large"`, `"openai-compatible/up-small"`} {
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Fatalf("/v1/models lacks %s: %d %s", want, resp.StatusCode, body)
		}
	}
	if resp, body := g.chat(g.key, "up-small", false); resp.StatusCode != 200 || up.LastModel("key-disc") != "up-small" {
		t.Fatalf("bare discovered name: %d %s", resp.StatusCode, body)
	}

	// Claude Code's default model name routes through the map instead of 404.
	resp, body = g.do(http.MethodPost, "/v1/messages", map[string]any{"model": "claude-opus-4-8[1m]", "max_tokens": 32,
		"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, map[string]string{"x-api-key": g.key, "anthropic-version": "2023-06-01"})
	if resp.StatusCode != 200 || up.LastModel("key-disc") != "up-large" {
		t.Fatalf("claude-opus-4-8[1m]: %d %s (upstream model %q)", resp.StatusCode, body, up.LastModel("key-disc"))
	}
	// Background (haiku) requests to the small model.
	g.mustMgmt(http.StatusOK, http.MethodPatch, "/api/settings", map[string]any{"agentModelMap": map[string]any{"haiku": "up-small"}})
	_, ex := g.mgmt(http.MethodGet, "/api/routing/explain?model=claude-3-5-haiku-20241022", nil)
	if am, _ := ex["agentModelMap"].(map[string]any); am["target"] != "up-small" || am["source"] != "setting" {
		t.Fatalf("explain: %v", ex)
	}

	home := t.TempDir()
	env := userEnv(g, home)

	// setup claude-code --model X writes every variable Claude Code reads.
	out, errOut, code := runCLI(t, env, "setup", "claude-code", "--model", "up-large")
	if code != 0 {
		t.Fatalf("setup claude-code: %d\n%s%s", code, out, errOut)
	}
	var settings struct {
		Env map[string]string `json:"env"`
	}
	raw, err := os.ReadFile(filepath.Join(home, ".claude", "settings.json"))
	if err != nil || json.Unmarshal(raw, &settings) != nil {
		t.Fatalf("settings.json: %v %s", err, raw)
	}
	want := map[string]string{"ANTHROPIC_BASE_URL": g.base, "ANTHROPIC_AUTH_TOKEN": g.key, "ANTHROPIC_MODEL": "up-large",
		"ANTHROPIC_DEFAULT_OPUS_MODEL": "up-large", "ANTHROPIC_DEFAULT_SONNET_MODEL": "up-large",
		"ANTHROPIC_DEFAULT_HAIKU_MODEL": "up-small", "ANTHROPIC_SMALL_FAST_MODEL": "up-small"}
	for k, v := range want {
		if settings.Env[k] != v {
			t.Errorf("settings.json env %s = %q, want %q", k, settings.Env[k], v)
		}
	}
	// Every model it names routes.
	for _, k := range []string{"ANTHROPIC_MODEL", "ANTHROPIC_SMALL_FAST_MODEL"} {
		if resp, body := g.chat(g.key, settings.Env[k], false); resp.StatusCode != 200 {
			t.Errorf("%s=%s does not route: %d %s", k, settings.Env[k], resp.StatusCode, body)
		}
	}

	// setup codex writes the model, the provider and a credential Codex reads
	// from the file (nothing to export).
	out, errOut, code = runCLI(t, env, "setup", "codex")
	if code != 0 {
		t.Fatalf("setup codex: %d\n%s%s", code, out, errOut)
	}
	toml, err := os.ReadFile(filepath.Join(home, ".codex", "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`model_provider = "omniroute"`, `model = "up-large"`, `base_url = "` + g.base + `/v1"`,
		`wire_api = "responses"`, `experimental_bearer_token = "` + g.key + `"`} {
		if !strings.Contains(string(toml), want) {
			t.Errorf("config.toml lacks %s:\n%s", want, toml)
		}
	}
	if strings.Contains(string(toml), "env_key") || strings.Contains(out, "export ") {
		t.Errorf("codex setup still needs an exported variable:\n%s\n%s", toml, out)
	}

	// A model nobody serves: refused with the reason, nothing written.
	out, errOut, code = runCLI(t, env, "setup", "codex", "--model", "gpt-5-codex")
	if code == 0 || !strings.Contains(errOut, "gpt-5-codex") || !strings.Contains(errOut, "refused") {
		t.Fatalf("setup with an unserved model: %d\n%s%s", code, out, errOut)
	}
	if again, _ := os.ReadFile(filepath.Join(home, ".codex", "config.toml")); string(again) != string(toml) {
		t.Fatal("a refused setup changed config.toml")
	}

	// Undo still works.
	if out, errOut, code := runCLI(t, env, "setup", "claude-code", "--undo"); code != 0 {
		t.Fatalf("undo: %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(home, ".claude", "settings.json")); !os.IsNotExist(err) {
		t.Fatal("undo left the settings.json setup created")
	}
}

// TestRunPassesArgumentsToTheAgent: `omniroute run codex exec --help` starts
// codex with OmniRoute's settings and then exactly the user's arguments.
func TestRunPassesArgumentsToTheAgent(t *testing.T) {
	t.Parallel()
	up := fakeupstream.New()
	upURL := up.Start()
	t.Cleanup(up.Close)
	g := startGateway(t, t.TempDir(), 0)
	g.addConn("a", upURL, "key-a", 1)

	// A stand-in codex that prints its arguments and key variable.
	bin := t.TempDir()
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\necho \"KEY=$OMNIROUTE_API_KEY\"\n"
	if err := os.WriteFile(filepath.Join(bin, "codex"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	env := userEnv(g, t.TempDir(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, errOut, code := runCLI(t, env, "run", "codex", "exec", "--help", "--model", "x")
	if code != 0 {
		t.Fatalf("run codex: %d\n%s%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 5 || !slices.Equal(lines[len(lines)-5:len(lines)-1], []string{"exec", "--help", "--model", "x"}) {
		t.Fatalf("codex got arguments:\n%s", out)
	}
	for _, want := range []string{`model_provider="omniroute"`, `model_providers.omniroute.base_url="` + g.base + `/v1"`, `model="gpt-4o-mini"`, "KEY=" + g.key} {
		if !strings.Contains(out, want) {
			t.Errorf("codex output lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Usage:") {
		t.Errorf("omniroute printed its own usage:\n%s", out)
	}
	// The agent's exit code is omniroute's.
	if err := os.WriteFile(filepath.Join(bin, "codex"), []byte("#!/bin/sh\nexit 7\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, code := runCLI(t, env, "run", "codex", "exec"); code != 7 {
		t.Fatalf("exit code %d, want the agent's 7", code)
	}
}

// TestSetupRefusesWithoutARunningGatewayOrModels: setup says why it cannot
// finish and exits non-zero.
func TestSetupRefusesWithoutARunningGatewayOrModels(t *testing.T) {
	t.Parallel()
	g := startGateway(t, t.TempDir(), 0)
	home := t.TempDir()
	out, errOut, code := runCLI(t, userEnv(g, home), "setup", "claude-code")
	if code == 0 || !strings.Contains(errOut, "no connection serves any model") {
		t.Fatalf("setup without connections: %d\n%s%s", code, out, errOut)
	}
	dir, port := g.dir, g.port
	g.stop()
	env := gatewayEnv(dir, port, "HOME="+home, "CLAUDE_CONFIG_DIR=", "CODEX_HOME=")
	out, errOut, code = runCLI(t, env, "setup", "codex")
	if code == 0 || !strings.Contains(errOut, "not running at http://127.0.0.1:"+strconv.Itoa(port)) {
		t.Fatalf("setup with the gateway stopped: %d\n%s%s", code, out, errOut)
	}
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Fatalf("a refused setup wrote %v", entries)
	}
}

func toStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
