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

// opencodeBin is opencode (the opencode-ai package), relative to clientsDir.
const opencodeBin = "node_modules/.bin/opencode"

// setupAgent runs the real `omniroute setup <id> --model model` as the
// gateway's user (their HOME) and returns the written config file's content.
func setupAgent(t *testing.T, s *stack, id, model string, file ...string) string {
	t.Helper()
	out, errOut, code := run(t, s.home, s.userEnv(), binPath, "setup", id, "--model", model)
	if code != 0 {
		t.Fatalf("omniroute setup %s: exit %d\nstdout:\n%s\nstderr:\n%s", id, code, out, errOut)
	}
	cfg, err := os.ReadFile(filepath.Join(append([]string{s.home}, file...)...))
	if err != nil {
		t.Fatalf("omniroute setup %s did not write %s: %v\nstdout:\n%s", id, filepath.Join(file...), err, out)
	}
	return string(cfg)
}

// checkOpencodeLimit: an opencode-shaped config (opencode, Kilo) names
// glm-4.6's window as the gateway knows it (200000) and an output limit, so
// the agent compacts before the window is full (with no limit opencode turns
// auto-compaction off).
func checkOpencodeLimit(t *testing.T, cfg string) {
	t.Helper()
	limit := gjson.Get(cfg, `provider.omniroute.models.glm-4\.6.limit`)
	if limit.Get("context").Int() != 200000 || limit.Get("output").Int() != 32000 {
		t.Errorf("limit %s, want context 200000 and output 32000:\n%s", limit.Raw, cfg)
	}
}

// TestOpencodeRightAfterSetup: `omniroute setup opencode --model M` writes
// the provider into ~/.config/opencode/opencode.json, then `opencode run`
// in that HOME with no other environment finishes a tool round trip through
// the gateway: the fake asks for its bash tool, opencode runs it, and the
// fake's answer quoting the tool's output is what opencode prints — whole,
// though its first request met a 429 and its answer was cut and continued
// (addFaultyNeighbours).
func TestOpencodeRightAfterSetup(t *testing.T) {
	s := newStack(t)
	s.addConn("openai-compatible", "key-oa", 2, "glm-4.6")
	s.addFaultyNeighbours("openai-compatible", "key-oa", "glm-4.6")
	s.up.SetToolCalls(map[string]string{"bash": `{"command":"echo ` + toolMarker + `","description":"Print a marker"}`})

	cfg := setupAgent(t, s, "opencode", "glm-4.6", ".config", "opencode", "opencode.json")
	checkOpencodeLimit(t, cfg)
	work := t.TempDir()
	stdout, stderr, code := run(t, work, append(cleanEnv(), "HOME="+s.home), opencodeBin, "run", "Run the marker command.")
	want := fakeupstream.ToolResultText(toolMarker)
	if code != 0 || !strings.Contains(stdout, want) {
		t.Fatalf("opencode run: exit %d, want %q in its output\nopencode.json:\n%s\nstdout:\n%s\nstderr:\n%s", code, want, cfg, stdout, stderr)
	}
	if n := s.up.Hits("key-oa"); n < 2 {
		t.Fatalf("the fake saw %d requests, want a tool round trip (2+)", n)
	}
	if p := s.up.LastPath("key-oa"); p != "/v1/chat/completions" {
		t.Errorf("upstream path %q", p)
	}
	if m := s.up.LastModel("key-oa"); m != "glm-4.6" {
		t.Errorf("upstream model %q, want glm-4.6", m)
	}
	_, sent := s.up.LastRequest("key-oa")
	tool := gjson.GetBytes(sent, `messages.#(role=="tool")`)
	if tool.Get("tool_call_id").String() != fakeupstream.ToolCallIDOpenAI || !strings.Contains(tool.Get("content").String(), toolMarker) {
		t.Errorf("tool result upstream = %s, want id %s with the tool's output", tool, fakeupstream.ToolCallIDOpenAI)
	}
	checkFaultsInvisible(t, s)
}
