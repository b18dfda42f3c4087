//go:build clients

package clients

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
)

// toolMarker is what the scripted tool call prints; the fake answers
// "Tool said: <tool output>" once the client sends the tool's result back.
const toolMarker = "omniroute-tool-ok"

// claudeEnv runs Claude Code against the gateway in a fresh HOME, quiet:
// no update checks, telemetry or error reports, and no client retries (a
// retry that succeeded would hide a failure).
func claudeEnv(s *stack, home string) []string {
	return append(cleanEnv(), "HOME="+home, "ANTHROPIC_BASE_URL="+s.base, "ANTHROPIC_AUTH_TOKEN="+s.key,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_MAX_RETRIES=0")
}

// claudeResult is the end of `claude -p --output-format json`.
type claudeResult struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	IsError bool   `json:"is_error"`
	Result  string `json:"result"`
}

// runClaude runs `claude -p prompt --model model` (with env added to its
// environment) and decodes its result.
func runClaude(t *testing.T, s *stack, model, prompt string, env ...string) (claudeResult, int, string) {
	t.Helper()
	home := t.TempDir()
	stdout, stderr, code := run(t, home, append(claudeEnv(s, home), env...), claudeBin, "-p", prompt, "--model", model,
		"--output-format", "json", "--allowedTools", "Bash")
	var res claudeResult
	if i := strings.LastIndex(stdout, "\n{"); i >= 0 {
		stdout = stdout[i+1:]
	}
	_ = json.Unmarshal([]byte(strings.TrimSpace(stdout)), &res)
	return res, code, "stdout:\n" + stdout + "\nstderr:\n" + stderr
}

// checkClaudeSentSystemMessages asserts Claude Code really sent what this
// suite is about: a role "system" message inside messages.
func checkClaudeSentSystemMessages(t *testing.T, s *stack) []recorded {
	t.Helper()
	posts := s.rec.posts("/v1/messages")
	if len(posts) < 2 {
		t.Fatalf("Claude Code sent %d /v1/messages requests, want a tool round trip (2+)", len(posts))
	}
	if !gjson.GetBytes(posts[0].Body, `messages.#(role=="system")`).Exists() {
		t.Errorf("Claude Code sent no mid-conversation system message; the case this test covers is gone:\n%s", posts[0].Body)
	}
	return posts
}

// TestClaudeCodeOpenAIUpstream: Claude Code with a non-Claude model id served
// by an OpenAI-format upstream runs a real tool and answers. Before the fix
// this was `API Error: 400 the request cannot be sent to a openai upstream:
// messages[1].role: must be "user" or "assistant"`.
func TestClaudeCodeOpenAIUpstream(t *testing.T) {
	s := newStack(t)
	s.addConn("openai-compatible", "key-oa", 1, "glm-4.6")
	s.up.SetToolCalls(map[string]string{"Bash": `{"command":"echo ` + toolMarker + `","description":"Print a marker"}`})

	res, code, out := runClaude(t, s, "glm-4.6", "Run the marker command.")
	if code != 0 || res.IsError || res.Result != fakeupstream.ToolResultText(toolMarker) {
		t.Fatalf("claude exit %d, result %+v, want %q\n%s", code, res, fakeupstream.ToolResultText(toolMarker), out)
	}
	s.rec.capture(t, "/v1/messages", "claude-code-openai")
	checkClaudeSentSystemMessages(t, s)

	if p := s.up.LastPath("key-oa"); p != "/v1/chat/completions" {
		t.Fatalf("upstream path %q", p)
	}
	_, sent := s.up.LastRequest("key-oa")
	roles := gjson.GetBytes(sent, "messages.#.role").Array()
	midSystem := false
	for i, r := range roles {
		if i > 0 && r.String() == "system" {
			midSystem = true
		}
	}
	if !midSystem {
		t.Errorf("no system message at its position in the upstream body: %s", gjson.GetBytes(sent, "messages.#.role"))
	}
	tool := gjson.GetBytes(sent, `messages.#(role=="tool")`)
	if tool.Get("tool_call_id").String() != fakeupstream.ToolCallIDOpenAI || !strings.Contains(tool.Get("content").String(), toolMarker) {
		t.Errorf("tool result upstream = %s, want id %s with the tool's output", tool, fakeupstream.ToolCallIDOpenAI)
	}
	if gjson.GetBytes(sent, "anthropic-beta").Exists() || gjson.GetBytes(sent, "context_management").Exists() {
		t.Errorf("Anthropic-only fields reached an OpenAI upstream: %s", sent)
	}
}

// TestClaudeCodeAnthropicUpstream: the same through an Anthropic-format
// upstream, where the body passes through with the client's anthropic-beta
// and anthropic-version.
func TestClaudeCodeAnthropicUpstream(t *testing.T) {
	s := newStack(t)
	s.addConn("anthropic-compatible", "key-an", 1, "kimi-k2")
	s.up.SetToolCalls(map[string]string{"Bash": `{"command":"echo ` + toolMarker + `","description":"Print a marker"}`})

	res, code, out := runClaude(t, s, "kimi-k2", "Run the marker command.")
	if code != 0 || res.IsError || res.Result != fakeupstream.ToolResultText(toolMarker) {
		t.Fatalf("claude exit %d, result %+v, want %q\n%s", code, res, fakeupstream.ToolResultText(toolMarker), out)
	}
	s.rec.capture(t, "/v1/messages", "claude-code-anthropic")
	posts := checkClaudeSentSystemMessages(t, s)

	h, sent := s.up.LastRequest("key-an")
	lastClient := posts[len(posts)-1]
	if got, want := h.Get("anthropic-beta"), strings.Join(lastClient.Header.Values("anthropic-beta"), ","); want == "" || got != want {
		t.Errorf("upstream anthropic-beta %q, want the client's %q", got, want)
	}
	if got, want := h.Get("anthropic-version"), lastClient.Header.Get("anthropic-version"); got != want {
		t.Errorf("upstream anthropic-version %q, want the client's %q", got, want)
	}
	if !gjson.GetBytes(sent, `messages.#(role=="system")`).Exists() {
		t.Errorf("the mid-conversation system message did not pass through")
	}
	result := gjson.GetBytes(sent, `messages.#(role=="user")#.content.#(type=="tool_result")|0`)
	if result.Get("tool_use_id").String() != fakeupstream.ToolCallIDAnthropic || !strings.Contains(result.Get("content").Raw, toolMarker) {
		t.Errorf("tool result upstream = %s, want id %s with the tool's output", result, fakeupstream.ToolCallIDAnthropic)
	}
}
