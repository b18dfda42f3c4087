package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"omniroute/backend/backup"
	"omniroute/backend/store"
)

// TestBackupAndRestoreThroughTheAPI: POST /api/backup downloads a file of a
// running gateway; POST /api/restore previews it on another running gateway
// (nothing changes), refuses a wrong passphrase and a newer schema with
// clear 400s, then applies it: the second gateway serves the first one's
// connections, hidden models, aliases, keys and settings at once, without a
// restart.
func TestBackupAndRestoreThroughTheAPI(t *testing.T) {
	a := newEnv(t)
	c := a.createConn(map[string]any{"provider": "openai-compatible", "name": "restored", "apiKey": "bk-up", "baseUrl": a.upURL,
		"models": []string{"m-keep", "m-hide"}})
	id := c["id"].(string)
	if code, m := a.mgmt("PATCH", "/api/providers/"+id, map[string]any{"hiddenModels": []string{"m-hide"}, "modelAliases": map[string]string{"nick": "m-keep"}}); code != 200 {
		t.Fatalf("patch: %d %v", code, m)
	}
	a.patchSettings(map[string]any{"maxAttempts": 5})

	// Backup: the passphrase is required and long enough.
	if code, m := a.mgmt("POST", "/api/backup", map[string]any{"passphrase": "short"}); code != 400 || errField(m) != "BACKUP_PASSPHRASE_TOO_SHORT" {
		t.Fatalf("short passphrase: %d %v", code, m)
	}
	resp, file := a.do("POST", "/api/backup", map[string]any{"passphrase": "a long passphrase"}, map[string]string{"Authorization": "Bearer " + a.token})
	if resp.StatusCode != 200 || resp.Header.Get("Content-Disposition") == "" || !bytes.Contains(file, []byte(`"format":"omniroute-backup"`)) {
		t.Fatalf("backup: %d %s", resp.StatusCode, file)
	}
	if bytes.Contains(file, []byte("bk-up")) || bytes.Contains(file, []byte(a.key)) {
		t.Fatal("the backup holds a plain secret")
	}
	if resp, _ := a.do("POST", "/api/backup", map[string]any{"passphrase": "a long passphrase"}, nil); resp.StatusCode != 401 {
		t.Fatalf("backup without the management token: %d", resp.StatusCode)
	}

	b := newEnv(t)
	restore := func(query, pass string, body []byte) (int, map[string]any) {
		t.Helper()
		resp, out := b.do("POST", "/api/restore"+query, body, map[string]string{"Authorization": "Bearer " + b.token, "X-OmniRoute-Backup-Passphrase": pass})
		var m map[string]any
		_ = json.Unmarshal(out, &m)
		return resp.StatusCode, m
	}
	// Preview: what it would change, and nothing changes.
	code, m := restore("", "a long passphrase", file)
	if code != 200 || m["applied"] != false {
		t.Fatalf("preview: %d %v", code, m)
	}
	conns := m["changes"].(map[string]any)["connections"].(map[string]any)
	if added := conns["added"].([]any); len(added) != 1 || added[0].(map[string]any)["name"] != "restored" {
		t.Fatalf("preview of connections: %v", conns)
	}
	if keys := m["changes"].(map[string]any)["keys"].(map[string]any); len(keys["added"].([]any)) != 1 || len(keys["removed"].([]any)) != 1 {
		t.Fatalf("preview of keys (a's default replaces b's): %v", keys)
	}
	if _, lm := b.mgmt("GET", "/api/providers", nil); len(lm["connections"].([]any)) != 0 {
		t.Fatal("a preview changed the connections")
	}

	// Refusals, each changing nothing.
	v := int(m["backup"].(map[string]any)["schemaVersion"].(float64))
	edited := bytes.Replace(file, []byte(`"schemaVersion":`+strconv.Itoa(v)), []byte(`"schemaVersion":`+strconv.Itoa(v+1)), 1)
	for _, tc := range []struct {
		name, pass string
		body       []byte
		code       string
	}{
		{"wrong passphrase", "not the passphrase", file, "BACKUP_WRONG_PASSPHRASE"},
		{"no passphrase", "", file, "BACKUP_PASSPHRASE_REQUIRED"},
		{"schema version edited", "a long passphrase", edited, "BACKUP_TAMPERED"},
		{"not a backup", "a long passphrase", []byte(`{"hello":1}`), "BACKUP_INVALID"},
	} {
		code, m := restore("?apply=true", tc.pass, tc.body)
		if code != 400 || errField(m) != tc.code {
			t.Errorf("%s: %d %v, want 400 %s", tc.name, code, m, tc.code)
		}
	}
	if code, _ := restore("?apply=maybe", "a long passphrase", file); code != 400 {
		t.Fatalf("apply=maybe: %d", code)
	}
	if _, lm := b.mgmt("GET", "/api/providers", nil); len(lm["connections"].([]any)) != 0 {
		t.Fatal("a refused restore changed the connections")
	}
	if resp, _ := b.chat("m-keep", false, map[string]string{"Authorization": "Bearer " + a.key}); resp.StatusCode != 401 {
		t.Fatalf("a's key before the restore: %d", resp.StatusCode)
	}

	// Apply: served at once.
	code, m = restore("?apply=true", "a long passphrase", file)
	if code != 200 || m["applied"] != true {
		t.Fatalf("apply: %d %v", code, m)
	}
	resp, body := b.chat("nick", false, map[string]string{"Authorization": "Bearer " + a.key})
	if resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != id || a.up.LastModel("bk-up") != "m-keep" {
		t.Fatalf("the restored key, connection and alias: %d %s", resp.StatusCode, body)
	}
	if resp, _ := b.chat("m-keep", false, map[string]string{"Authorization": "Bearer " + b.key}); resp.StatusCode != 401 {
		t.Fatalf("b's own key after the restore: %d (the backup's keys replace it)", resp.StatusCode)
	}
	b.key = a.key
	ids := b.modelIDs()
	if slices.Contains(ids, "m-hide") || !slices.Contains(ids, "nick") {
		t.Fatalf("restored /v1/models %v", ids)
	}
	if _, s := b.mgmt("GET", "/api/settings", nil); s["maxAttempts"] != float64(5) {
		t.Fatalf("restored settings: %v", s["maxAttempts"])
	}
	// Restoring again changes nothing.
	_, m = restore("", "a long passphrase", file)
	for kind, c := range m["changes"].(map[string]any) {
		for _, k := range []string{"added", "changed", "removed"} {
			if l := c.(map[string]any)[k].([]any); len(l) != 0 {
				t.Errorf("a second restore %s %s: %v", k, kind, l)
			}
		}
	}
}

func errField(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

// sealState writes s as a backup file of e's schema version with passphrase.
func (e *env) sealState(s backup.State, passphrase string) []byte {
	e.t.Helper()
	v, err := e.srv.Store().SchemaVersion()
	if err != nil {
		e.t.Fatal(err)
	}
	// At the env's cheap cost (a restore derives the key the file names: at
	// the default cost each sealed file took seconds to open under -race).
	f, err := backup.SealWith(s, backup.Meta{SchemaVersion: v, AppVersion: "test", Now: time.Unix(0, 0)}, passphrase, testBackupCost())
	if err != nil {
		e.t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		e.t.Fatal(err)
	}
	return buf.Bytes()
}

func (e *env) restore(query, passphrase string, body io.Reader) (int, map[string]any) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.ts.URL+"/api/restore"+query, body)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OmniRoute-Backup-Passphrase", passphrase)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(out, &m)
	return resp.StatusCode, m
}

// TestBackupAndRestoreAreAuditedWithoutTheirBodies (issue 39): the
// passphrase of a backup never reaches the audit log; a backup is "backup
// made", a restore "restore previewed" / "restore applied" / "restore
// refused" with its code, nothing of either body.
func TestBackupAndRestoreAreAuditedWithoutTheirBodies(t *testing.T) {
	a := newEnv(t)
	const pass = "never-in-the-audit-log"
	resp, file := a.do("POST", "/api/backup", map[string]any{"passphrase": pass}, map[string]string{"Authorization": "Bearer " + a.token})
	if resp.StatusCode != 200 {
		t.Fatalf("backup: %d %s", resp.StatusCode, file)
	}
	if code, m := a.restore("", pass, bytes.NewReader(file)); code != 200 {
		t.Fatalf("dry run: %d %v", code, m)
	}
	if code, m := a.restore("?apply=true", pass, bytes.NewReader(file)); code != 200 {
		t.Fatalf("apply: %d %v", code, m)
	}
	if code, m := a.restore("?apply=true", pass+"!", bytes.NewReader(file)); code != 400 {
		t.Fatalf("wrong passphrase: %d %v", code, m)
	}
	resp, out := a.do("GET", "/api/audit?limit=50", nil, map[string]string{"Authorization": "Bearer " + a.token})
	if resp.StatusCode != 200 {
		t.Fatalf("audit: %d %s", resp.StatusCode, out)
	}
	if bytes.Contains(out, []byte(pass)) || bytes.Contains(out, []byte("argon2id")) {
		t.Fatalf("the audit log holds the passphrase or the file: %s", out)
	}
	var page struct {
		Entries []struct {
			Action string
			Detail map[string]any
		}
	}
	if err := json.Unmarshal(out, &page); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, en := range page.Entries {
		if strings.Contains(en.Action, "backup") || strings.Contains(en.Action, "restore") {
			b, _ := json.Marshal(en.Detail)
			got = append(got, en.Action+" "+string(b))
		}
	}
	want := []string{`POST /api/restore {"code":"BACKUP_WRONG_PASSPHRASE","event":"restore refused"}`, `POST /api/restore {"event":"restore applied"}`,
		`POST /api/restore {"event":"restore previewed"}`, `POST /api/backup {"event":"backup made"}`}
	if !slices.Equal(got, want) {
		t.Fatalf("entries\n%q\nwant\n%q", got, want)
	}
}

// TestRestoreLimits (issue 39): a restore has its own body limit (a file
// past the 1 MiB management limit restores), a file asking for a costlier
// key derivation than OmniRoute writes is refused at once, and one restore
// runs at a time.
func TestRestoreLimits(t *testing.T) {
	a := newEnv(t)
	const pass = "a long passphrase"
	logs := make([]store.Row, 0, 3000)
	for i := range 3000 {
		logs = append(logs, store.Row{"id": int64(i + 1), "request_id": "req-" + strconv.Itoa(i) + strings.Repeat("x", 400), "created_at": int64(1000 + i)})
	}
	big := a.sealState(backup.State{"provider_connections": {}, "api_keys": {}, "combos": {}, "key_value": {},
		"request_logs": logs, "usage_rollup": {}, "key_spend": {}}, pass)
	if len(big) < 1<<20 {
		t.Fatalf("the file is %d bytes; the test needs more than 1 MiB", len(big))
	}
	if code, m := a.restore("", pass, bytes.NewReader(big)); code != 200 || m["backup"].(map[string]any)["withLog"] != true {
		t.Fatalf("a %d-byte file: %d %v", len(big), code, m)
	}

	small := a.sealState(backup.State{"provider_connections": {}, "api_keys": {}, "combos": {}, "key_value": {}}, pass)
	costly := bytes.Replace(small, []byte(fmt.Sprintf(`"memoryKiB":%d,`, testBackupCost().Memory)), []byte(`"memoryKiB":1048576,`), 1)
	if bytes.Equal(costly, small) {
		t.Fatal("the sealed file names no memoryKiB to raise")
	}
	start := time.Now()
	if code, m := a.restore("", pass, bytes.NewReader(costly)); code != 400 || errField(m) != "BACKUP_KDF_TOO_COSTLY" {
		t.Fatalf("1 GiB key derivation: %d %v", code, m)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the costly file took %v to refuse", d)
	}

	// One at a time: a restore whose body is still arriving holds the slot.
	// The probes are cheap (not a backup: refused at once), so the first
	// request finds the slot free unless a probe is in it at that instant
	// (then it is tried again).
	held := false
	for attempt := 0; attempt < 5 && !held; attempt++ {
		pr, pw := io.Pipe()
		first := make(chan int, 1)
		go func() {
			code, _ := a.restore("", pass, pr)
			first <- code
		}()
		if _, err := pw.Write(small[:10]); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
	probe:
		for {
			select {
			case code := <-first: // it met a probe in the slot
				if code != 409 {
					t.Fatalf("the first restore ended early: %d", code)
				}
				pw.Close()
				break probe
			default:
			}
			code, m := a.restore("", pass, strings.NewReader(`{}`))
			if code == 409 && errField(m) == "RESTORE_IN_PROGRESS" {
				held = true
				break
			}
			if code != 400 || time.Now().After(deadline) {
				t.Fatalf("a second restore while one runs: %d %v, want 409 RESTORE_IN_PROGRESS", code, m)
			}
			time.Sleep(5 * time.Millisecond) // until the first holds the slot
		}
		if !held {
			continue
		}
		if _, err := pw.Write(small[10:]); err != nil {
			t.Fatal(err)
		}
		pw.Close()
		if code := <-first; code != 200 {
			t.Fatalf("the first restore: %d", code)
		}
	}
	if !held {
		t.Fatal("the first restore never held the slot")
	}
	if code, m := a.restore("", pass, bytes.NewReader(small)); code != 200 {
		t.Fatalf("after the first: %d %v", code, m)
	}
}

// TestBadRowsAreRefusedByTheDryRun (issue 39): a file with priority "abc"
// is refused by the dry run and by apply with 400 BACKUP_INVALID_ROW naming
// the column, nothing is written, and the gateway restarts.
func TestBadRowsAreRefusedByTheDryRun(t *testing.T) {
	a := newEnv(t)
	const pass = "a long passphrase"
	bad := a.sealState(backup.State{"provider_connections": {{"id": "evil", "provider": "openai-compatible", "name": "evil",
		"base_url": "http://127.0.0.1:9/v1", "priority": "abc", "created_at": int64(1), "updated_at": int64(1)}},
		"api_keys": {}, "combos": {}, "key_value": {}}, pass)
	for _, q := range []string{"", "?apply=true"} {
		code, m := a.restore(q, pass, bytes.NewReader(bad))
		e, _ := m["error"].(map[string]any)
		if msg, _ := e["message"].(string); code != 400 || errField(m) != "BACKUP_INVALID_ROW" || !strings.Contains(msg, "priority") {
			t.Fatalf("restore%s: %d %v, want 400 BACKUP_INVALID_ROW naming priority", q, code, m)
		}
	}
	badSettings := a.sealState(backup.State{"provider_connections": {}, "api_keys": {}, "combos": {},
		"key_value": {{"namespace": "settings", "key": "general", "value": `{"maxAttempts":"many"}`, "updated_at": int64(1)}}}, pass)
	if code, m := a.restore("?apply=true", pass, bytes.NewReader(badSettings)); code != 400 || errField(m) != "BACKUP_INVALID_ROW" {
		t.Fatalf("unreadable settings: %d %v", code, m)
	}
	if _, m := a.mgmt("GET", "/api/providers", nil); len(m["connections"].([]any)) != 0 {
		t.Fatalf("a refused restore wrote: %v", m)
	}
	a.restart()
	if _, m := a.mgmt("GET", "/api/providers", nil); len(m["connections"].([]any)) != 0 {
		t.Fatalf("after a restart: %v", m)
	}
}
