//go:build clients

package clients

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
)

// crushResult is crush.mjs's answer.
type crushResult struct {
	Provider, Type, Model string
	ContextWindow         int
	Command, ToolCallID   string
	Text, Error           string
}

// TestCrushConfigRightAfterSetup: Crush's CLI cannot run here (its npm
// package, @charmland/crush, downloads the binary from GitHub at install
// time), so its config is held to the endpoint it names instead: `omniroute
// setup crush --model M` writes ~/.config/crush/crush.json, and crush.mjs
// reads it as Crush does and runs Crush's tool round trip over the official
// OpenAI SDK (the wire of an "openai-compat" provider) — whole through a 429
// and a cut answer (addFaultyNeighbours).
func TestCrushConfigRightAfterSetup(t *testing.T) {
	s := newStack(t)
	s.addConn("openai-compatible", "key-oa", 2, "glm-4.6")
	s.addFaultyNeighbours("openai-compatible", "key-oa", "glm-4.6")
	s.up.SetToolCalls(map[string]string{"bash": `{"command":"echo ` + toolMarker + `","description":"Print a marker"}`})

	cfg := setupAgent(t, s, "crush", "glm-4.6", ".config", "crush", "crush.json")
	var got crushResult
	runScript(t, "crush.mjs", map[string]any{"config": filepath.Join(s.home, ".config", "crush", "crush.json")}, &got)
	if got.Error != "" || got.Provider != "omniroute" || got.Type != "openai-compat" || got.Model != "glm-4.6" ||
		got.ContextWindow == 0 || got.ToolCallID != fakeupstream.ToolCallIDOpenAI || strings.TrimSpace(got.Text) != fakeupstream.ToolResultText(toolMarker) {
		t.Fatalf("crush.mjs: %+v\ncrush.json:\n%s", got, cfg)
	}
	checkToolRoundTrip(t, s, "key-oa", "glm-4.6")
	_, sent := s.up.LastRequest("key-oa")
	if tool := gjson.GetBytes(sent, `messages.#(role=="tool")`); !strings.Contains(tool.Get("content").String(), toolMarker) {
		t.Errorf("tool result upstream = %s", tool)
	}
	checkFaultsInvisible(t, s)
}
