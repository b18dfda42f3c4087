package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"omniroute/tests/fakeupstream"
)

// modelIDs lists /v1/models with key.
func (g *gatewayProc) modelIDs(key string) []string {
	g.t.Helper()
	resp, body := g.do(http.MethodGet, "/v1/models", nil, map[string]string{"Authorization": "Bearer " + key})
	if resp.StatusCode != 200 {
		g.t.Fatalf("/v1/models: %d %s", resp.StatusCode, body)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	_ = json.Unmarshal(body, &list)
	var out []string
	for _, d := range list.Data {
		out = append(out, d.ID)
	}
	return out
}

// TestHiddenModelsAndBackupRestore, through the real binary as a user runs
// it: hide a model and alias another with PATCH /api/providers/{id}; back the
// stopped gateway up with `omniroute backup`; a wrong passphrase and a
// running gateway are refused; `omniroute restore --yes` into a fresh data
// directory brings the connection, its hidden model and alias, and the
// client key, served as before; POST /api/restore previews the same file on
// the running restored gateway with nothing to change.
func TestHiddenModelsAndBackupRestore(t *testing.T) {
	t.Parallel()
	up := fakeupstream.New()
	upURL := up.Start()
	t.Cleanup(up.Close)
	dirA := t.TempDir()
	a := startGateway(t, dirA, 0)
	id := a.addConn("primary", upURL, "bk-key", 1)
	a.mustMgmt(http.StatusOK, http.MethodPatch, "/api/providers/"+id, map[string]any{"models": []string{"gpt-4o-mini", "gpt-hidden"}})
	code, m := a.mgmt(http.MethodPatch, "/api/providers/"+id, map[string]any{"modelAliases": map[string]string{"gpt-4o-mini": "gpt-hidden"}})
	if code != http.StatusBadRequest {
		t.Fatalf("an alias that is a model of the connection: %d %v", code, m)
	}
	a.mustMgmt(http.StatusOK, http.MethodPatch, "/api/providers/"+id, map[string]any{"hiddenModels": []string{"gpt-hidden"}, "modelAliases": map[string]string{"mini": "gpt-4o-mini"}})
	ids := a.modelIDs(a.key)
	if slices.Contains(ids, "gpt-hidden") || !slices.Contains(ids, "mini") {
		t.Fatalf("/v1/models after hiding and aliasing: %v", ids)
	}
	resp, body := a.chat(a.key, "gpt-hidden", false)
	checkError(t, "hidden model", resp, body, http.StatusNotFound, "MODEL_NOT_FOUND")
	if resp, body := a.chat(a.key, "mini", false); resp.StatusCode != 200 || up.LastModel("bk-key") != "gpt-4o-mini" {
		t.Fatalf("alias: %d %s (upstream saw %q)", resp.StatusCode, body, up.LastModel("bk-key"))
	}

	file := filepath.Join(t.TempDir(), "omniroute.backup")
	passEnv := "OMNIROUTE_BACKUP_PASSPHRASE=a long passphrase"
	// While the desktop gateway runs, its data directory is locked.
	if _, errOut, code := runCLI(t, gatewayEnv(dirA, 0, passEnv), "backup", file); code == 0 {
		t.Fatal("backup of a running SQLite gateway's directory succeeded")
	} else if errOut == "" {
		t.Fatal("refused backup said nothing")
	}
	a.stop()
	out, errOut, code := runCLI(t, gatewayEnv(dirA, 0, passEnv), "backup", file)
	if code != 0 || !strings.Contains(out, "provider_connections") {
		t.Fatalf("backup: %d\n%s\n%s", code, out, errOut)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "bk-key") || strings.Contains(string(raw), a.key) {
		t.Fatal("the backup file holds a plain secret")
	}
	if st, _ := os.Stat(file); st.Mode().Perm() != 0o600 {
		t.Fatalf("backup file mode %v", st.Mode().Perm())
	}

	dirB := t.TempDir()
	if _, errOut, code := runCLI(t, gatewayEnv(dirB, 0, "OMNIROUTE_BACKUP_PASSPHRASE=wrong passphrase"), "restore", file, "--yes"); code == 0 || !strings.Contains(errOut, "wrong passphrase") {
		t.Fatalf("wrong passphrase: %d %s", code, errOut)
	}
	out, errOut, code = runCLI(t, gatewayEnv(dirB, 0, passEnv), "restore", file, "--dry-run")
	if code != 0 || !strings.Contains(out, "connections  1 added") || !strings.Contains(out, "+ primary") || !strings.Contains(out, "nothing was changed") {
		t.Fatalf("dry run: %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = runCLI(t, gatewayEnv(dirB, 0, passEnv), "restore", file, "--yes")
	if code != 0 || !strings.Contains(out, "Restored.") {
		t.Fatalf("restore: %d\n%s\n%s", code, out, errOut)
	}

	b := startGateway(t, dirB, 0)
	if b.key != a.key {
		t.Fatalf("the restored gateway's default key %q, the backed-up one %q", b.key, a.key)
	}
	if b.token == a.token {
		t.Fatal("the management token (the machine's, not backed up) came along")
	}
	ids = b.modelIDs(b.key)
	if slices.Contains(ids, "gpt-hidden") || !slices.Contains(ids, "mini") {
		t.Fatalf("restored /v1/models: %v", ids)
	}
	if resp, body := b.chat(b.key, "mini", false); resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != id {
		t.Fatalf("restored alias: %d %s", resp.StatusCode, body)
	}
	// The running gateway previews the same file through the API: nothing to change.
	resp, body = b.do(http.MethodPost, "/api/restore", raw, map[string]string{"Authorization": "Bearer " + b.token,
		"Content-Type": "application/json", "X-OmniRoute-Backup-Passphrase": "a long passphrase"})
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"applied":false`) || strings.Contains(string(body), `"id":"`+id+`"`) {
		t.Fatalf("preview on the restored gateway: %d %s", resp.StatusCode, body)
	}
}
