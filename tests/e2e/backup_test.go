package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"omniroute/tests/fakeupstream"
	"omniroute/tests/pgtest"
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
	} else if !strings.Contains(errOut, "Backup & Restore") {
		t.Fatalf("a refused backup says what to do instead: %s", errOut)
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

// TestBackupRestoreDesktopToTeamServer: a desktop's backup restores into a
// running team server's PostgreSQL database with the CLI (the instance
// follows within seconds, no restart), and the team's backup restores into a
// new desktop data directory that then lists exactly the models the first
// desktop listed.
func TestBackupRestoreDesktopToTeamServer(t *testing.T) {
	t.Parallel()
	pgs, err := pgtest.Start()
	if err != nil {
		t.Fatal(err) // PostgreSQL is required: never a skip
	}
	t.Cleanup(pgs.Stop)
	dbURL := "OMNIROUTE_DATABASE_URL=" + pgs.NewDatabase(t)
	up := fakeupstream.New()
	upURL := up.Start()
	t.Cleanup(up.Close)
	passEnv := "OMNIROUTE_BACKUP_PASSPHRASE=team passphrase"

	dirA := t.TempDir()
	a := startGateway(t, dirA, 0)
	id := a.addConn("desk", upURL, "desk-key", 1)
	a.mustMgmt(http.StatusOK, http.MethodPatch, "/api/providers/"+id, map[string]any{"models": []string{"gpt-4o-mini", "m-2"},
		"hiddenModels": []string{"m-2"}, "modelAliases": map[string]string{"quick": "gpt-4o-mini"}})
	want := a.modelIDs(a.key)
	a.stop()
	file := filepath.Join(t.TempDir(), "desk.backup")
	if out, errOut, code := runCLI(t, gatewayEnv(dirA, 0, passEnv), "backup", file, "--with-log"); code != 0 {
		t.Fatalf("backup: %d\n%s\n%s", code, out, errOut)
	}

	dirT := t.TempDir()
	team := startGateway(t, dirT, 0, dbURL)
	out, errOut, code := runCLI(t, gatewayEnv(dirT, 0, dbURL, passEnv), "restore", file, "--yes")
	if code != 0 || !strings.Contains(out, "Restored.") {
		t.Fatalf("restore into PostgreSQL: %d\n%s\n%s", code, out, errOut)
	}
	deadline := time.Now().Add(20 * time.Second) // the reconcile safety net is 15 s; the change feed is faster
	for {
		resp, body := team.do(http.MethodGet, "/v1/models", nil, map[string]string{"Authorization": "Bearer " + a.key})
		if resp.StatusCode == 200 && strings.Contains(string(body), `"quick"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the running team instance never served the restored configuration: %d %s", resp.StatusCode, body)
		}
		time.Sleep(50 * time.Millisecond) // poll interval, not a timing assertion
	}
	if got := team.modelIDs(a.key); !slices.Equal(got, want) {
		t.Fatalf("team server lists %v, the desktop listed %v", got, want)
	}
	if resp, body := team.chat(a.key, "quick", false); resp.StatusCode != 200 || up.LastModel("desk-key") != "gpt-4o-mini" {
		t.Fatalf("alias through the team server: %d %s", resp.StatusCode, body)
	}

	back := filepath.Join(t.TempDir(), "team.backup")
	if out, errOut, code := runCLI(t, gatewayEnv(dirT, 0, dbURL, passEnv), "backup", back); code != 0 {
		t.Fatalf("backup of PostgreSQL: %d\n%s\n%s", code, out, errOut)
	}
	if _, errOut, code := runCLI(t, gatewayEnv(t.TempDir(), 0, dbURL, passEnv), "backup", filepath.Join(t.TempDir(), "x")); code == 0 || !strings.Contains(errOut, "secret.key") {
		t.Fatalf("PostgreSQL backup without the team's secret.key: %d %s", code, errOut)
	}
	dirC := t.TempDir()
	if out, errOut, code := runCLI(t, gatewayEnv(dirC, 0, passEnv), "restore", back, "--yes"); code != 0 {
		t.Fatalf("restore into a new desktop: %d\n%s\n%s", code, out, errOut)
	}
	c := startGateway(t, dirC, 0)
	if c.key != a.key {
		t.Fatalf("default key after the round trip %q, want %q", c.key, a.key)
	}
	if got := c.modelIDs(c.key); !slices.Equal(got, want) {
		t.Fatalf("after SQLite → PostgreSQL → SQLite: %v, want %v", got, want)
	}
}
