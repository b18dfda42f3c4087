package server_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"testing"
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
	newer := bytes.Replace(file, []byte(`"schemaVersion":`+strconv.Itoa(v)), []byte(`"schemaVersion":`+strconv.Itoa(v+1)), 1)
	for _, tc := range []struct {
		name, pass string
		body       []byte
		code       string
	}{
		{"wrong passphrase", "not the passphrase", file, "BACKUP_WRONG_PASSPHRASE"},
		{"no passphrase", "", file, "BACKUP_PASSPHRASE_REQUIRED"},
		{"newer schema", "a long passphrase", newer, "BACKUP_SCHEMA_TOO_NEW"},
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
