//go:build linux

package hostile

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"omniroute/backend/backup"
	"omniroute/backend/store"
)

const backupPass = "hostile backup passphrase"

// backupFile downloads p's backup.
func (p *proc) backupFile() []byte {
	p.t.Helper()
	resp, file := p.do(http.MethodPost, "/api/backup", map[string]any{"passphrase": backupPass}, map[string]string{"Authorization": "Bearer " + p.token})
	if resp.StatusCode != http.StatusOK {
		p.t.Fatalf("backup: %d %s", resp.StatusCode, file)
	}
	return file
}

// restoreFile posts file to /api/restore (query: "" or "?apply=true").
func (p *proc) restoreFile(query string, file []byte) (int, string, []byte) {
	p.t.Helper()
	resp, out := p.do(http.MethodPost, "/api/restore"+query, file,
		map[string]string{"Authorization": "Bearer " + p.token, "X-OmniRoute-Backup-Passphrase": backupPass})
	return resp.StatusCode, resp.Header.Get("Content-Type"), out
}

// connectionBaseURLs lists the gateway's connections' base URLs.
func (p *proc) connectionBaseURLs() []string {
	p.t.Helper()
	list, _ := p.mgmt(http.StatusOK, http.MethodGet, "/api/providers", nil)["connections"].([]any)
	var out []string
	for _, c := range list {
		u, _ := c.(map[string]any)["baseUrl"].(string)
		out = append(out, u)
	}
	return out
}

// Issue 39 item 3: a backup file edited without the passphrase — a
// connection's base URL pointed at another server, an added client key, one
// byte anywhere — is refused before preview or apply with a 4xx naming no
// secret, and nothing changes.
func TestEditedBackupIsRefused(t *testing.T) {
	p := start(t, filepath.Join(t.TempDir(), "data"))
	const secret = "sk-hostile-backup-0123456789"
	p.addConn("victim", "http://127.0.0.1:9", secret, "m", 1)
	file := p.backupFile()
	if !bytes.Contains(file, []byte(`"base_url":"http://127.0.0.1:9/v1"`)) {
		t.Fatalf("the file does not hold the base URL in the expected form: %.400s", file)
	}
	edits := map[string][]byte{
		"base URL to another server": bytes.Replace(file, []byte(`"base_url":"http://127.0.0.1:9/v1"`), []byte(`"base_url":"http://127.0.0.2:9/v1"`), 1),
		"an added key row": bytes.Replace(file, []byte(`"api_keys":[`),
			[]byte(`"api_keys":[{"id":"evil","name":"evil","key_hash":"0000000000000000000000000000000000000000000000000000000000000000","created_at":1},`), 1),
	}
	for _, at := range []int{0, 1, len(file) / 4, len(file) / 2, 3 * len(file) / 4, len(file) - 30, len(file) - 2, len(file) - 1} {
		b := bytes.Clone(file)
		b[at] ^= 0x20
		edits["one byte at "+strconv.Itoa(at)] = b
	}
	for name, b := range edits {
		for _, q := range []string{"", "?apply=true"} {
			code, ct, out := p.restoreFile(q, b)
			if code < 400 || code >= 500 {
				t.Errorf("%s%s: %d, want a 4xx: %.300s", name, q, code, out)
				continue
			}
			checkEnvelope(t, name+q, code, ct, out, code, "")
			if bytes.Contains(out, []byte(secret)) || bytes.Contains(out, []byte("changes")) {
				t.Errorf("%s%s: the refusal previews or names a secret: %s", name, q, out)
			}
		}
	}
	for _, name := range []string{"base URL to another server", "an added key row"} {
		code, ct, out := p.restoreFile("?apply=true", edits[name])
		checkEnvelope(t, name, code, ct, out, http.StatusBadRequest, "BACKUP_TAMPERED")
	}
	if got := p.connectionBaseURLs(); len(got) != 1 || got[0] != "http://127.0.0.1:9/v1" {
		t.Fatalf("connections after the refusals: %v", got)
	}
	if code, _, out := p.restoreFile("?apply=true", file); code != http.StatusOK {
		t.Fatalf("the unedited file: %d %s", code, out)
	}
	p.mustBeUp("after the restores")
	p.stop()
}

// Issue 39 item 4: a file whose rows the schema would not type
// (priority "abc"), authenticated with the right passphrase, is refused by
// the dry run and by apply with 400 BACKUP_INVALID_ROW, nothing is written,
// and the gateway restarts on its database.
func TestBadRestoreCannotBrickTheGateway(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	p := start(t, dir)
	p.addConn("keep", "http://127.0.0.1:9", "sk-keep-0123456789", "m", 1)
	var meta struct {
		SchemaVersion int `json:"schemaVersion"`
	}
	if err := json.Unmarshal(p.backupFile(), &meta); err != nil || meta.SchemaVersion < 1 {
		t.Fatalf("schema version of the gateway's backup: %v %d", err, meta.SchemaVersion)
	}
	f, err := backup.Seal(backup.State{
		"provider_connections": {{"id": "evil", "provider": "openai-compatible", "name": "evil", "base_url": "http://127.0.0.1:9/v1",
			"priority": "abc", "created_at": int64(1), "updated_at": int64(1)}},
		"api_keys": {}, "combos": {}, "key_value": {},
	}, backup.Meta{SchemaVersion: meta.SchemaVersion, AppVersion: "hostile", Now: time.Now()}, backupPass)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"", "?apply=true"} {
		code, ct, out := p.restoreFile(q, buf.Bytes())
		checkEnvelope(t, "priority abc"+q, code, ct, out, http.StatusBadRequest, "BACKUP_INVALID_ROW")
		if !bytes.Contains(out, []byte("priority")) {
			t.Errorf("the refusal does not name the column: %s", out)
		}
	}
	if got := p.connectionBaseURLs(); len(got) != 1 {
		t.Fatalf("connections after the refused restore: %v", got)
	}
	p.stop()
	p = start(t, dir)
	if got := p.connectionBaseURLs(); len(got) != 1 {
		t.Fatalf("connections after a restart: %v", got)
	}
	p.stop()
}

// Issue 39 item 6: one corrupt sealed credential in the SQLite file no
// longer stops the gateway from starting: it starts, names the connection
// (log, loadError, health reason) and serves the others; a request-log row
// with text in a numeric column is skipped and counted by GET /api/logs.
func TestCorruptStoredStateStillStarts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	p := start(t, dir)
	bad := p.addConn("damaged", "http://127.0.0.1:9", "sk-damaged-0123456789", "m", 1)
	p.addConn("fine", "http://127.0.0.1:9", "sk-fine-0123456789", "m", 2)
	p.stop()

	st, err := store.Open(filepath.Join(dir, "omniroute.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.InsertRequestLogs([]store.RequestLog{{RequestID: "good", CreatedAt: 1, Attempts: `[]`, Status: 200},
		{RequestID: "damaged", CreatedAt: 2, Attempts: `[]`, Status: 200}}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE provider_connections SET api_key_enc = 'v1:' || substr(api_key_enc, 5) || 'x' WHERE id = '` + bad + `'`,
		`UPDATE request_logs SET status = 'abc' WHERE request_id = 'damaged'`,
	} {
		if err := st.DB().Exec(q).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	p = start(t, dir)
	if !strings.Contains(p.logs(), bad) || !strings.Contains(p.logs(), "credential cannot be opened") {
		t.Errorf("the start log does not name the damaged connection %s:\n%s", bad, tail(p.logs(), 3000))
	}
	c, _ := p.mgmt(http.StatusOK, http.MethodGet, "/api/providers/"+bad, nil)["connection"].(map[string]any)
	if le, _ := c["loadError"].(string); !strings.Contains(le, "cannot be opened") {
		t.Errorf("the connection does not say why it is off: %v", c)
	}
	h := p.mgmt(http.StatusOK, http.MethodGet, "/api/monitoring/health", nil)
	named := false
	for _, x := range h["connections"].([]any) {
		ch := x.(map[string]any)
		if ch["id"] == bad {
			r, _ := ch["reason"].(string)
			named = ch["state"] == "disabled" && strings.Contains(r, "credential cannot be opened")
		}
	}
	if !named {
		t.Errorf("health does not name the damaged connection: %v", h["connections"])
	}
	resp, out := p.do(http.MethodGet, "/api/logs", nil, map[string]string{"Authorization": "Bearer " + p.token})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-OmniRoute-Skipped-Rows") != "1" || !bytes.Contains(out, []byte(`"skippedRows":1`)) ||
		!bytes.Contains(out, []byte(`"requestId":"good"`)) {
		t.Errorf("logs with a damaged row: %d %v %s", resp.StatusCode, resp.Header, out)
	}
	p.mustBeUp("after reading the damaged state")
	p.stop()
}

// Issue 39 item 2: a backup's and a restore's passphrase never reaches the
// audit log (its API, the database files) or the gateway's own log; the
// audit says what happened ("backup made", "restore previewed") and nothing
// of the body, and a refused backup is audited by its code alone.
func TestBackupPassphraseNeverAudited(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	p := start(t, dir)
	p.backupFile()
	file := p.backupFile()
	if code, _, out := p.restoreFile("", file); code != http.StatusOK {
		t.Fatalf("dry run: %d %s", code, out)
	}
	const refused = "short-pass-HOSTILE"
	if resp, out := p.do(http.MethodPost, "/api/backup", map[string]any{"passphrase": refused, "withLog": "not a bool"}, map[string]string{"Authorization": "Bearer " + p.token}); resp.StatusCode < 400 || resp.StatusCode >= 500 {
		t.Fatalf("a malformed backup request: %d %s, want a 4xx", resp.StatusCode, out)
	}
	resp, audit := p.do(http.MethodGet, "/api/audit?limit=100", nil, map[string]string{"Authorization": "Bearer " + p.token})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("audit: %d %s", resp.StatusCode, audit)
	}
	for _, want := range []string{"POST /api/backup", "POST /api/restore"} {
		if !bytes.Contains(audit, []byte(want)) {
			t.Errorf("the audit log has no %q entry: %.800s", want, audit)
		}
	}
	p.stop()
	leaks := map[string][]byte{"the audit API": audit, "the gateway's log": []byte(p.logs())}
	for _, name := range []string{"omniroute.db", "omniroute.db-wal"} {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		leaks[name] = b
	}
	for where, b := range leaks {
		for _, secret := range []string{backupPass, refused} {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds the passphrase %q", where, secret)
			}
		}
	}
}
