//go:build clients

package clients

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
)

// TestClaudeCodeRightAfterSetup: `omniroute setup claude-code --model M`
// writes ~/.claude/settings.json, then `claude -p` in that HOME (with only
// Claude Code's quiet switches) finishes a tool round trip on M through the
// gateway, and Claude Code does not warn that it does not know M's context
// window: setup wrote the window the gateway knows for it. The round trip
// goes through a 429 and a cut answer (addFaultyNeighbours).
func TestClaudeCodeRightAfterSetup(t *testing.T) {
	s := newStack(t)
	s.addConn("openai-compatible", "key-oa", 2, "glm-4.6")
	s.addFaultyNeighbours("openai-compatible", "key-oa", "glm-4.6")
	s.up.SetToolCalls(map[string]string{"Bash": `{"command":"echo ` + toolMarker + `","description":"Print a marker"}`})

	cfg := setupAgent(t, s, "claude-code", "glm-4.6", ".claude", "settings.json")
	env := append(cleanEnv(), "HOME="+s.home, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_MAX_RETRIES=0")
	stdout, stderr, code := run(t, t.TempDir(), env, claudeBin, "-p", "Run the marker command.",
		"--output-format", "json", "--allowedTools", "Bash")
	out := stdout
	if i := strings.LastIndex(out, "\n{"); i >= 0 {
		out = out[i+1:]
	}
	var res claudeResult
	_ = json.Unmarshal([]byte(strings.TrimSpace(out)), &res)
	if code != 0 || res.IsError || res.Result != fakeupstream.ToolResultText(toolMarker) {
		t.Fatalf("claude exit %d, result %+v\nsettings.json:\n%s\nstdout:\n%s\nstderr:\n%s", code, res, cfg, stdout, stderr)
	}
	// Claude Code reports the window it worked with; 1000000 is its guess
	// for a model it does not know (and its warning says so).
	if w := gjson.Get(out, `modelUsage.glm-4\.6.contextWindow`).Int(); w != 200000 || strings.Contains(stdout+stderr, "doesn't recognize the model") {
		t.Errorf("Claude Code's context window for glm-4.6 is %d, want the 200000 setup wrote\nsettings.json:\n%s\nstdout:\n%s\nstderr:\n%s", w, cfg, stdout, stderr)
	}
	checkToolRoundTrip(t, s, "key-oa", "glm-4.6")
	checkFaultsInvisible(t, s)
}
