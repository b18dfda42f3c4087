package server_test

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"omniroute/backend/backup"
	"omniroute/backend/config"
	"omniroute/backend/server"
	"omniroute/backend/store"
)

// editDB stops e, runs statements on its SQLite file and starts it again.
func (e *env) editDB(stmts ...string) {
	e.t.Helper()
	e.stop()
	st, err := store.Open(filepath.Join(e.dir, "omniroute.db"))
	if err != nil {
		e.t.Fatal(err)
	}
	for _, q := range stmts {
		if err := st.DB().Exec(q).Error; err != nil {
			e.t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		e.t.Fatal(err)
	}
	e.start()
}

// TestCorruptCredentialStartsSwitchedOff (issue 39): one damaged sealed
// credential no longer stops the gateway from starting: that connection is
// loaded switched off and named (its loadError, its health reason), the
// others serve.
func TestCorruptCredentialStartsSwitchedOff(t *testing.T) {
	e := newEnv(t)
	bad := e.addConn("damaged", "key-a", 1)
	e.addConn("fine", "key-b", 2)
	e.editDB(`UPDATE provider_connections SET api_key_enc = 'v1:AAAAdamaged' WHERE id = '` + bad + `'`)

	code, m := e.mgmt("GET", "/api/providers/"+bad, nil)
	c, _ := m["connection"].(map[string]any)
	if le, _ := c["loadError"].(string); code != 200 || !strings.Contains(le, "cannot be opened") {
		t.Fatalf("the damaged connection: %d %v", code, m)
	}
	found := false
	for _, x := range e.health()["connections"].([]any) {
		h := x.(map[string]any)
		if h["id"] == bad {
			found = true
			if r, _ := h["reason"].(string); h["state"] != "disabled" || !strings.Contains(r, "credential cannot be opened") {
				t.Fatalf("health of the damaged connection: %v", h)
			}
		}
	}
	if !found {
		t.Fatal("the damaged connection is not in health")
	}
	resp, body := e.chat("gpt-4o-mini", false, nil)
	if resp.StatusCode != 200 || e.up.LastModel("key-a") != "" {
		t.Fatalf("the other connection serves: %d %s", resp.StatusCode, body)
	}
}

// TestUnreadableLogRowsDoNotFailTheLog (issue 39): a request-log row with
// text in a numeric column is skipped and counted (skippedRows and
// X-OmniRoute-Skipped-Rows), never a 500.
func TestUnreadableLogRowsDoNotFailTheLog(t *testing.T) {
	e := newEnv(t)
	e.addConn("c", "key-a", 1)
	for range 3 {
		if resp, body := e.chat("gpt-4o-mini", false, nil); resp.StatusCode != 200 {
			t.Fatalf("chat: %d %s", resp.StatusCode, body)
		}
	}
	e.editDB(`UPDATE request_logs SET latency_ms = 'abc' WHERE id = (SELECT MIN(id) FROM request_logs)`)
	resp, body := e.do("GET", "/api/logs", nil, map[string]string{"Authorization": "Bearer " + e.token})
	if resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Skipped-Rows") != "1" || !strings.Contains(string(body), `"skippedRows":1`) {
		t.Fatalf("logs with one damaged row: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if n := strings.Count(string(body), `"requestId"`); n != 2 {
		t.Fatalf("%d rows, want the 2 readable ones: %s", n, body)
	}
	resp, body = e.do("GET", "/api/logs/export?format=json", nil, map[string]string{"Authorization": "Bearer " + e.token})
	if resp.StatusCode != 200 || strings.Count(string(body), `"requestId"`) != 2 {
		t.Fatalf("export: %d %s", resp.StatusCode, body)
	}
}

// TestWrongKeyStillRefusesToStart: a key that opens none of the stored
// credentials (connections' and client keys') is the wrong key, not one
// damaged value: the gateway still refuses to start, naming secret.key,
// rather than seal new credentials with it.
func TestWrongKeyStillRefusesToStart(t *testing.T) {
	e := newEnv(t)
	e.addConn("c", "key-a", 1)
	e.stop()
	other := strings.Repeat("ab", 32) + "\n"
	if err := os.WriteFile(filepath.Join(e.dir, "secret.key"), []byte(other), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Process: config.Process{DataDir: e.dir, Host: "127.0.0.1"},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Getenv: func(string) string { return "" }})
	if err == nil {
		srv.Close()
		t.Fatal("started with a key that opens none of the stored credentials")
	}
	if !strings.Contains(err.Error(), "secret.key") || !strings.Contains(err.Error(), "opens none") {
		t.Fatalf("refusal: %v", err)
	}
}

// TestCommandLineRestoreIsAudited (issue 39): `omniroute restore --yes FILE`
// leaves an audit entry (who, the file's name, "restore applied"), never
// the passphrase; a dry run leaves none.
func TestCommandLineRestoreIsAudited(t *testing.T) {
	e := newEnv(t)
	e.addConn("c", "key-a", 1)
	e.stop()
	proc := config.Process{DataDir: e.dir}
	const pass = "never-in-the-audit-log"
	file := filepath.Join(t.TempDir(), "b.json")
	if _, err := server.Backup(proc, file, pass, false, "test"); err != nil {
		t.Fatal(err)
	}
	audit := func() []store.AuditEntry {
		st, err := store.Open(filepath.Join(e.dir, "omniroute.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		rows, err := st.Audit(store.AuditFilter{Action: "omniroute restore", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	if _, err := server.Restore(proc, file, pass, server.RestoreOptions{}, func(*backup.File, backup.Preview) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if n := len(audit()); n != 0 {
		t.Fatalf("a dry run left %d entries", n)
	}
	res, err := server.Restore(proc, file, pass, server.RestoreOptions{Actor: "command line (tester)"}, func(*backup.File, backup.Preview) bool { return true })
	if err != nil || !res.Applied {
		t.Fatalf("restore: %v %+v", err, res)
	}
	rows := audit()
	if len(rows) != 1 {
		t.Fatalf("entries %+v, want one", rows)
	}
	en := rows[0]
	if en.Actor != "command line (tester)" || en.ActorKind != "cli" || en.Status != 200 || en.Target != "b.json" ||
		!strings.Contains(en.Detail, "restore applied") || strings.Contains(en.Detail, pass) {
		t.Fatalf("entry %+v", en)
	}
	e.start()
}
