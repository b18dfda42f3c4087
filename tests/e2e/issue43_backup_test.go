package e2e

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBackupRestoreBesideRunningGateway: with the gateway running on its
// data directory (the desktop app at login), `omniroute backup` and
// `omniroute restore` go through its management API instead of refusing:
// the backup file is written (0600), the restore previews (--dry-run changes
// nothing), asks (answering no changes nothing), and with --yes the running
// gateway serves the restored configuration at once; a wrong passphrase is
// the gateway's refusal.
func TestBackupRestoreBesideRunningGateway(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	g := startGateway(t, dir, 0)
	t.Cleanup(g.stop)
	g.addConn("kept", "http://127.0.0.1:9", "bk-key", 1)
	file := filepath.Join(t.TempDir(), "omniroute.backup")
	passEnv := "OMNIROUTE_BACKUP_PASSPHRASE=a long passphrase"
	env := gatewayEnv(dir, g.port, passEnv)

	out, errOut, code := runCLI(t, env, "backup", file)
	if code != 0 || !strings.Contains(out, "running gateway") {
		t.Fatalf("backup beside the running gateway: exit %d\n%s\n%s", code, out, errOut)
	}
	if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("backup file: %v %v", st, err)
	}
	if _, errOut, code := runCLI(t, env, "backup", file); code == 0 || !strings.Contains(errOut, "exists") {
		t.Errorf("a second backup over the file: exit %d %s", code, errOut)
	}

	g.addConn("added-later", "http://127.0.0.1:9", "bk-key-2", 2)
	names := func() []string {
		var out []string
		for _, c := range g.mustMgmt(http.StatusOK, "GET", "/api/providers", nil)["connections"].([]any) {
			out = append(out, c.(map[string]any)["name"].(string))
		}
		return out
	}
	out, errOut, code = runCLI(t, env, "restore", file, "--dry-run")
	if code != 0 || !strings.Contains(out, "- added-later") || !strings.Contains(out, "Dry run") {
		t.Fatalf("restore --dry-run: exit %d\n%s\n%s", code, out, errOut)
	}
	if n := names(); len(n) != 2 {
		t.Fatalf("a dry run changed the connections: %v", n)
	}
	out, errOut, code = restoreAnswering(t, env, "n\n", file)
	if code != 1 || !strings.Contains(errOut, "[y/N]") || !strings.Contains(out, "Not restored") || len(names()) != 2 {
		t.Fatalf("restore answered no: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, errOut, code := runCLI(t, gatewayEnv(dir, g.port, "OMNIROUTE_BACKUP_PASSPHRASE=wrong passphrase"), "restore", file, "--yes"); code == 0 ||
		!strings.Contains(strings.ToLower(errOut), "passphrase") {
		t.Errorf("restore with a wrong passphrase: exit %d %s", code, errOut)
	}
	out, errOut, code = runCLI(t, env, "restore", file, "--yes")
	if code != 0 || !strings.Contains(out, "Restored.") {
		t.Fatalf("restore --yes: exit %d\n%s\n%s", code, out, errOut)
	}
	if n := names(); len(n) != 1 || n[0] != "kept" {
		t.Errorf("the running gateway's connections after the restore: %v, want [kept]", n)
	}
}

// restoreAnswering runs `omniroute restore FILE` with answer on its stdin.
func restoreAnswering(t *testing.T, env []string, answer, file string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, "restore", file)
	cmd.Env, cmd.Stdin = env, strings.NewReader(answer)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	_ = cmd.Run()
	return o.String(), e.String(), cmd.ProcessState.ExitCode()
}
