//go:build clients

package clients

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"omniroute/tests/fakeupstream"
)

// TestCodexRightAfterSetup is a new user's flow: `omniroute setup codex
// --model M` writes the model, the provider and a bearer token into
// ~/.codex/config.toml, then `codex exec` runs in that HOME with no other
// environment: no exported key, no CODEX_HOME. Codex must find everything in
// the file and finish a tool round trip, through a 429 and a cut answer
// (addFaultyNeighbours).
func TestCodexRightAfterSetup(t *testing.T) {
	s := newStack(t)
	s.addConn("openai-compatible", "key-oa", 2, "glm-4.6")
	s.addFaultyNeighbours("openai-compatible", "key-oa", "glm-4.6")
	s.up.SetToolCalls(map[string]string{"exec_command": `{"cmd":"echo ` + toolMarker + `"}`})

	if out, errOut, code := run(t, s.home, s.userEnv(), binPath, "setup", "codex", "--model", "glm-4.6"); code != 0 {
		t.Fatalf("omniroute setup codex: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	cfgBytes, err := os.ReadFile(filepath.Join(s.home, ".codex", "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(cfgBytes)
	// glm-4.6's window as the gateway knows it: Codex compacts at 90% of it.
	if !strings.Contains(cfg, "\nmodel_context_window = 200000\n") {
		t.Errorf("config.toml lacks model_context_window = 200000:\n%s", cfg)
	}

	last := filepath.Join(t.TempDir(), "last-message.txt")
	work := t.TempDir()
	stdout, stderr, code := run(t, work, append(cleanEnv(), "HOME="+s.home), codexBin, "exec", "--skip-git-repo-check",
		"--dangerously-bypass-approvals-and-sandbox", "--output-last-message", last, "Run the marker command.")
	msg, _ := os.ReadFile(last)
	got := strings.TrimSpace(string(msg))
	if code != 0 || !strings.HasPrefix(got, fakeupstream.ToolResultText("")) || !strings.HasSuffix(got, toolMarker) {
		t.Fatalf("codex in a fresh HOME: exit %d, last message %q\nconfig.toml:\n%s\nstdout:\n%s\nstderr:\n%s", code, got, cfg, stdout, stderr)
	}
	if m := s.up.LastModel("key-oa"); m != "glm-4.6" {
		t.Errorf("upstream model %q, want glm-4.6", m)
	}
	// Codex names every key of config.toml it ignores ("`…` is ignored"):
	// the window must be one it takes.
	if strings.Contains(stdout+stderr, "is ignored") {
		t.Errorf("Codex ignored a setting setup wrote:\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	checkFaultsInvisible(t, s)
}
