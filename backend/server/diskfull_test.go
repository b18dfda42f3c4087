package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// fillDisk caps the database's growth at its current size on the store's
// connection (PRAGMA max_page_count): a write needing a new page then fails
// with SQLITE_FULL, as on a full disk; full=false lifts the cap.
func (e *env) fillDisk(full bool) {
	e.t.Helper()
	limit := 1 << 30
	db := e.srv.Store().DB()
	if full {
		if err := db.Raw(`PRAGMA page_count`).Scan(&limit).Error; err != nil {
			e.t.Fatal(err)
		}
	}
	if err := db.Exec(fmt.Sprintf(`PRAGMA max_page_count = %d`, limit)).Error; err != nil {
		e.t.Fatal(err)
	}
}

// TestDiskFullAnswers507AndShowsInHealth (issue 36 item 7): on a full disk a
// management write answers 507 INSUFFICIENT_STORAGE in the JSON envelope (not
// a bare 500), health turns degraded with a plain storage message, and both
// clear once a write succeeds again.
func TestDiskFullAnswers507AndShowsInHealth(t *testing.T) {
	e := newEnv(t)
	e.addConn("primary", "key-a", 1)
	if s := e.health()["status"]; s != "healthy" {
		t.Fatalf("status before: %v", s)
	}
	e.fillDisk(true)
	// Keys until one needs a page the database cannot add.
	var resp *http.Response
	var body []byte
	for i := range 2000 {
		resp, body = e.do("POST", "/api/keys", map[string]any{"name": fmt.Sprintf("key %d %s", i, strings.Repeat("k", 80))},
			map[string]string{"Authorization": "Bearer " + e.token})
		if resp.StatusCode != http.StatusCreated {
			break
		}
	}
	if resp.StatusCode != http.StatusInsufficientStorage || errorCode(body) != "INSUFFICIENT_STORAGE" ||
		resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("key creation on a full disk: %d %s %s, want 507 INSUFFICIENT_STORAGE in the envelope",
			resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	var env struct {
		Error struct{ Message string } `json:"error"`
	}
	if json.Unmarshal(body, &env); !strings.Contains(env.Error.Message, "disk") || strings.Contains(env.Error.Message, "(13)") {
		t.Fatalf("message %q: want a plain one without SQLite's text", env.Error.Message)
	}
	h := e.health()
	summary, _ := h["summary"].(map[string]any)
	storage, _ := summary["storage"].(map[string]any)
	if h["status"] != "degraded" || storage["state"] != "disk_full" || !strings.Contains(fmt.Sprint(storage["reason"]), "Free some space") {
		t.Fatalf("health on a full disk: status %v storage %v", h["status"], storage)
	}
	// The public health says degraded too.
	resp, body = e.do("GET", "/api/monitoring/health", nil, nil)
	if !strings.Contains(string(body), `"degraded"`) {
		t.Fatalf("public health on a full disk: %d %s", resp.StatusCode, body)
	}

	e.fillDisk(false)
	if code, m := e.mgmt("POST", "/api/keys", map[string]any{"name": "after"}); code != http.StatusCreated {
		t.Fatalf("key creation after space came back: %d %v", code, m)
	}
	if s := e.health()["status"]; s != "healthy" {
		t.Fatalf("status after space came back: %v", s)
	}
}
