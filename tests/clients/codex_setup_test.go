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
// --model M`, then `codex exec` in the same HOME with no other environment —
// no exported key, no CODEX_HOME. Codex must find the model, the provider and
// a credential in what setup wrote, and finish a tool round trip.
func TestCodexRightAfterSetup(t *testing.T) {
	s := newStack(t)
	s.addConn("openai-compatible", "key-oa", 1, "glm-4.6")
	s.up.SetToolCalls(map[string]string{"exec_command": `{"cmd":"echo ` + toolMarker + `"}`})

	stdout, stderr, code := run(t, s.home, s.userEnv(), binPath, "setup", "codex", "--model", "glm-4.6")
	if code != 0 {
		t.Fatalf("omniroute setup codex --model glm-4.6: exit %d\n%s%s", code, stdout, stderr)
	}
	cfg, err := os.ReadFile(filepath.Join(s.home, ".codex", "config.toml"))
	if err != nil {
		t.Fatalf("setup wrote no ~/.codex/config.toml: %v", err)
	}

	last := filepath.Join(t.TempDir(), "last-message.txt")
	work := t.TempDir()
	stdout, stderr, code = run(t, work, append(cleanEnv(), "HOME="+s.home), codexBin, "exec", "--skip-git-repo-check",
		"--dangerously-bypass-approvals-and-sandbox", "--output-last-message", last, "Run the marker command.")
	msg, _ := os.ReadFile(last)
	got := strings.TrimSpace(string(msg))
	if code != 0 || !strings.HasPrefix(got, fakeupstream.ToolResultText("")) || !strings.HasSuffix(got, toolMarker) {
		t.Fatalf("codex after setup: exit %d, last message %q\nconfig.toml:\n%s\nstdout:\n%s\nstderr:\n%s", code, got, cfg, stdout, stderr)
	}
	if m := s.up.LastModel("key-oa"); m != "glm-4.6" {
		t.Errorf("upstream model %q, want glm-4.6", m)
	}
}
