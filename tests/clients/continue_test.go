//go:build clients

package clients

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
)

// continueBin is the Continue CLI (@continuedev/cli), relative to clientsDir.
const continueBin = "node_modules/.bin/cn"

// continueRoles is continue.mjs's answer.
type continueRoles struct {
	Autocomplete struct {
		Model, Text, Finish, Error string
	} `json:"autocomplete"`
	Embed struct {
		Model       string
		Count, Dims int
		Error       string
	} `json:"embed"`
}

// TestContinueRightAfterSetup: `omniroute setup continue --model M` writes
// ~/.continue/config.yaml with a chat model, an autocomplete model (the
// served code model) and an embed model (the served embedding model); then
// `cn -p` in that HOME with no other environment finishes a tool round trip
// through the gateway (the fake asks for its Bash tool, cn runs it, and the
// fake's answer quoting the tool's output is what cn prints, whole through a
// 429 and a cut answer: addFaultyNeighbours), and the
// autocomplete (FIM on /v1/completions) and indexing (/v1/embeddings)
// requests Continue's editor extensions send with that config are answered.
func TestContinueRightAfterSetup(t *testing.T) {
	s := newStack(t)
	s.addConn("openai-compatible", "key-oa", 2, "glm-4.6")
	s.addFaultyNeighbours("openai-compatible", "key-oa", "glm-4.6")
	s.addConn("openai-compatible", "key-code", 4, "qwen2.5-coder", "nomic-embed-text")
	s.up.SetToolCalls(map[string]string{"Bash": `{"command":"echo ` + toolMarker + `"}`})

	cfg := setupAgent(t, s, "continue", "glm-4.6", ".continue", "config.yaml")
	for _, want := range []string{"model: glm-4.6\n", "contextLength: 200000\n", "model: qwen2.5-coder\n", "roles: [autocomplete]", "model: nomic-embed-text\n", "roles: [embed]"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config.yaml lacks %q:\n%s", want, cfg)
		}
	}
	stdout, stderr, code := run(t, t.TempDir(), append(cleanEnv(), "HOME="+s.home), continueBin, "-p", "Run the marker command.")
	want := fakeupstream.ToolResultText(toolMarker)
	if code != 0 || strings.TrimSpace(stdout) != want {
		t.Fatalf("cn -p: exit %d, want %q\nconfig.yaml:\n%s\nstdout:\n%s\nstderr:\n%s", code, want, cfg, stdout, stderr)
	}
	if n := s.up.Hits("key-oa"); n < 2 {
		t.Fatalf("the fake saw %d chat requests, want a tool round trip (2+)", n)
	}
	_, sent := s.up.LastRequest("key-oa")
	tool := gjson.GetBytes(sent, `messages.#(role=="tool")`)
	if tool.Get("tool_call_id").String() != fakeupstream.ToolCallIDOpenAI || !strings.Contains(tool.Get("content").String(), toolMarker) {
		t.Errorf("tool result upstream = %s, want id %s with the tool's output", tool, fakeupstream.ToolCallIDOpenAI)
	}
	checkFaultsInvisible(t, s)

	var got continueRoles
	runScript(t, "continue.mjs", map[string]any{"config": filepath.Join(s.home, ".continue", "config.yaml")}, &got)
	if a := got.Autocomplete; a.Error != "" || a.Model != "qwen2.5-coder" || a.Text != fakeupstream.Content("key-code") || a.Finish != "stop" {
		t.Errorf("autocomplete: %+v", a)
	}
	if e := got.Embed; e.Error != "" || e.Model != "nomic-embed-text" || e.Count != 2 || e.Dims != fakeupstream.EmbeddingDims {
		t.Errorf("embed: %+v", e)
	}
	if p := s.up.LastPath("key-code"); p != "/v1/embeddings" {
		t.Errorf("last upstream path of the code connection %q, want /v1/embeddings", p)
	}
	if s.up.ModelHits("key-code", "qwen2.5-coder") != 1 {
		t.Errorf("the autocomplete request did not reach the code model once: %v", s.up.AllHits())
	}
}
