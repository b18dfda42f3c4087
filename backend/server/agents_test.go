package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentSetupThroughTheAPI: the Agents page writes Claude Code's own config
// to use the gateway, and undo takes it back.
func TestAgentSetupThroughTheAPI(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	e := newEnv(t)
	code, m := e.mgmt("GET", "/api/agents", nil)
	if code != 200 || !strings.Contains(strings.Join(agentIDs(m), ","), "claude-code") {
		t.Fatalf("agents: %d %v", code, m)
	}
	e.addConn("a", "key-a", 1)
	code, res := e.mgmt("POST", "/api/agents/claude-code/setup", map[string]any{})
	if code != 200 {
		t.Fatalf("setup: %d %v", code, res)
	}
	b, err := os.ReadFile(filepath.Join(home, ".claude", "settings.json"))
	if err != nil || !strings.Contains(string(b), "ANTHROPIC_BASE_URL") || !strings.Contains(string(b), e.key) {
		t.Fatalf("settings.json: %v %s", err, b)
	}
	if code, res := e.mgmt("POST", "/api/agents/claude-code/undo", nil); code != 200 {
		t.Fatalf("undo: %d %v", code, res)
	}
	if _, err := os.Stat(filepath.Join(home, ".claude", "settings.json")); !os.IsNotExist(err) {
		t.Fatal("undo left the file OmniRoute created")
	}
	if code, res := e.mgmt("POST", "/api/agents/claude-code/undo", nil); code != 409 || res["error"].(map[string]any)["code"] != "NOTHING_TO_UNDO" {
		t.Fatalf("second undo: %d %v", code, res)
	}
	if code, _ := e.mgmt("POST", "/api/agents/nope/setup", map[string]any{}); code != 404 {
		t.Fatalf("unknown agent: %d", code)
	}
}

func agentIDs(m map[string]any) []string {
	var out []string
	list, _ := m["agents"].([]any)
	for _, a := range list {
		out = append(out, a.(map[string]any)["id"].(string))
	}
	return out
}
