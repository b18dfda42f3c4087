package server_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAuditRecordsTheTargetAndOldValues: an edit's audit entry names its
// target and the old value of every field it changed (the Audit Log reads it
// as "… changed the priority of c1 from 2 to 1"), never a secret's.
func TestAuditRecordsTheTargetAndOldValues(t *testing.T) {
	e := newEnv(t)
	id := e.addConn("c1", "sk-upstream-SECRET-123", 2)
	if code, m := e.mgmt("PATCH", "/api/providers/"+id, map[string]any{"priority": 1, "apiKey": "sk-new-SECRET-456", "verify": false}); code != 200 {
		t.Fatalf("patch: %d %v", code, m)
	}
	if code, m := e.mgmt("DELETE", "/api/providers/"+id, nil); code != 200 && code != 204 {
		t.Fatalf("delete: %d %v", code, m)
	}
	code, _, out := e.sendAs("GET", "/api/audit", nil, e.token, "")
	if code != 200 || strings.Contains(string(out), "SECRET") {
		t.Fatalf("audit: %d %s", code, out)
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
	del, patch := page.Entries[0], page.Entries[1]
	if del.Action != "DELETE /api/providers/{id}" || del.Detail["targetName"] != "c1" {
		t.Errorf("delete entry %+v", del)
	}
	before, _ := patch.Detail["before"].(map[string]any)
	if patch.Action != "PATCH /api/providers/{id}" || patch.Detail["targetName"] != "c1" || before["priority"] != float64(2) {
		t.Fatalf("patch entry %+v", patch)
	}
	if _, leaked := before["apiKey"]; leaked {
		t.Errorf("a secret field's old value is recorded: %v", before)
	}
}
