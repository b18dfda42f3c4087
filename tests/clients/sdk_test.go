//go:build clients

package clients

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"omniroute/tests/fakeupstream"
)

// sdkResult is one case of sdk.mjs.
type sdkResult struct {
	Text   string `json:"text"`
	ID     string `json:"id"`
	Args   string `json:"args"`
	Finish string `json:"finish"`
	Error  string `json:"error"`
}

// sdkCases lists sdk.mjs's cases by API, with the finish each API reports
// for a text answer and for a tool call.
var sdkCases = []struct {
	name               string
	textFinish, toolFn string
}{
	{"chat", "stop", "tool_calls"},
	{"messages", "end_turn", "tool_use"},
	{"responses", "completed", "completed"},
}

// runSDK runs sdk.mjs against base with key and model; cases nil runs all.
func runSDK(t *testing.T, base, key, model string, cases ...string) map[string]sdkResult {
	t.Helper()
	var out map[string]sdkResult
	runScript(t, "sdk.mjs", map[string]any{"base": base, "key": key, "model": model, "cases": cases}, &out)
	return out
}

// runScript runs a node script of this directory with cfg as SDK_CONFIG in a
// clean environment and decodes the one JSON object it prints into out.
func runScript(t *testing.T, script string, cfg map[string]any, out any) {
	t.Helper()
	b, _ := json.Marshal(cfg)
	wd, _ := os.Getwd()
	env := append(cleanEnv(), "HOME="+t.TempDir(), "SDK_CONFIG="+string(b))
	stdout, stderr, code := run(t, wd, env, "node", script)
	if code != 0 || json.Unmarshal([]byte(stdout), out) != nil {
		t.Fatalf("%s exit %d\nstdout:\n%s\nstderr:\n%s", script, code, stdout, stderr)
	}
}

// TestSDKs: the official SDKs, in every API, streaming and not, get whole
// answers and carry tool ids through a round trip, whichever wire format the
// upstream speaks.
func TestSDKs(t *testing.T) {
	upstreams := []struct {
		provider, key, model, toolID string
	}{
		{"openai-compatible", "key-oa", "deepseek-chat", fakeupstream.ToolCallIDOpenAI},
		{"anthropic-compatible", "key-an", "claude-sonnet-4-5", fakeupstream.ToolCallIDAnthropic},
	}
	s := newStack(t)
	for _, u := range upstreams {
		s.addConn(u.provider, u.key, 1, u.model)
	}
	for _, u := range upstreams {
		t.Run(u.provider, func(t *testing.T) {
			got := runSDK(t, s.base, s.key, u.model)
			for _, c := range sdkCases {
				for _, stream := range []string{"", "-stream"} {
					name := c.name + stream
					if r := got[name]; r.Error != "" || r.Text != fakeupstream.Content(u.key) || r.Finish != c.textFinish {
						t.Errorf("%s: %+v, want text %q finish %q", name, r, fakeupstream.Content(u.key), c.textFinish)
					}
					name = c.name + "-tools" + stream
					if r := got[name]; r.Error != "" || r.ID != u.toolID || r.Args != fakeupstream.ToolArguments ||
						r.Text != fakeupstream.ToolResultText("sunny") || r.Finish != c.toolFn {
						t.Errorf("%s: %+v, want id %q args %s text %q finish %q", name, r, u.toolID, fakeupstream.ToolArguments,
							fakeupstream.ToolResultText("sunny"), c.toolFn)
					}
				}
			}
			if _, sent := s.up.LastRequest(u.key); !strings.Contains(string(sent), u.toolID) {
				t.Errorf("the tool id %s did not reach the upstream with the tool result: %s", u.toolID, sent)
			}
		})
	}
}
