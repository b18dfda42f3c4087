//go:build clients

package clients

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
)

// codexConfig is a Codex config.toml for the gateway at base: the provider
// table `omniroute setup codex` writes plus a model, no update check or
// analytics (offline), and no client retries (a retry that succeeded would
// hide a failure).
func codexConfig(base, model string) string {
	return `model = "` + model + `"
model_provider = "omniroute"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.omniroute]
name = "OmniRoute"
base_url = "` + base + `/v1"
env_key = "OMNIROUTE_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`
}

// runCodex runs `codex exec` with config in a fresh HOME and CODEX_HOME and
// returns its last message, its exit code and its output for failures.
func runCodex(t *testing.T, s *stack, config string, prompt string, extraEnv ...string) (string, int, string) {
	t.Helper()
	home := t.TempDir()
	codexHome := filepath.Join(home, ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	if config != "" {
		if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	last := filepath.Join(home, "last-message.txt")
	env := append(cleanEnv(), "HOME="+home, "CODEX_HOME="+codexHome)
	env = append(env, extraEnv...)
	stdout, stderr, code := run(t, home, env, codexBin, "exec", "--skip-git-repo-check",
		"--dangerously-bypass-approvals-and-sandbox", "--output-last-message", last, prompt)
	msg, _ := os.ReadFile(last)
	return strings.TrimSpace(string(msg)), code, "stdout:\n" + stdout + "\nstderr:\n" + stderr
}

// TestCodexExec: Codex CLI with a non-OpenAI model id runs a real shell tool
// through the gateway and prints the answer, whichever wire format the
// upstream speaks (Responses ⇄ Chat, Responses ⇄ Chat ⇄ Messages).
func TestCodexExec(t *testing.T) {
	for _, u := range []struct{ provider, key, model, toolID, toolPath string }{
		{"openai-compatible", "key-oa", "glm-4.6", fakeupstream.ToolCallIDOpenAI, `messages.#(role=="tool")`},
		{"anthropic-compatible", "key-an", "kimi-k2", fakeupstream.ToolCallIDAnthropic, `messages.#(role=="user")#.content.#(type=="tool_result")|0`},
	} {
		t.Run(u.provider, func(t *testing.T) {
			s := newStack(t)
			s.addConn(u.provider, u.key, 1, u.model)
			s.up.SetToolCalls(map[string]string{"exec_command": `{"cmd":"echo ` + toolMarker + `"}`})

			msg, code, out := runCodex(t, s, codexConfig(s.base, u.model), "Run the marker command.", "OMNIROUTE_API_KEY="+s.key)
			// Codex wraps the command's output in its own report; the fake echoes it.
			if code != 0 || !strings.HasPrefix(msg, fakeupstream.ToolResultText("")) || !strings.HasSuffix(msg, toolMarker) {
				t.Fatalf("codex exit %d, last message %q, want %q…%s\n%s", code, msg, fakeupstream.ToolResultText(""), toolMarker, out)
			}
			if u.provider == "openai-compatible" {
				s.rec.capture(t, "/v1/responses", "codex")
			}
			if posts := s.rec.posts("/v1/responses"); len(posts) < 2 {
				t.Fatalf("Codex sent %d /v1/responses requests, want a tool round trip (2+)", len(posts))
			}
			_, sent := s.up.LastRequest(u.key)
			tool := gjson.GetBytes(sent, u.toolPath)
			id := tool.Get("tool_call_id").String() + tool.Get("tool_use_id").String()
			if id != u.toolID || !strings.Contains(tool.Raw, toolMarker) {
				t.Errorf("tool result upstream = %.300s, want id %s with the command's output", tool.Raw, u.toolID)
			}
		})
	}
}
