package server_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"omniroute/tests/fakeupstream"
)

// TestLogsPagingSearchRangeExport: GET /api/logs pages older (before) and
// newer (after), filters a time range (by when the request finished) and a
// text search over model, code, connection and key (by id or name); the
// export gives the filtered range as CSV or JSON; bad parameters are 400.
func TestLogsPagingSearchRangeExport(t *testing.T) {
	e := newEnv(t)
	e.patchResilience(map[string]any{"failover": map[string]any{"failureStreak": 100, "retriesPerTarget": 0}})
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"verify": false, "provider": "openai-compatible", "name": "Lab box",
		"apiKey": "key-a", "baseUrl": e.upURL, "prefix": "lab", "models": []string{"gpt-4o-mini"}})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	lab := m["connection"].(map[string]any)["id"].(string)
	start := e.clk.Now()
	for i := 0; i < 6; i++ { // 6 served by Lab box, one a minute
		e.chat("lab/gpt-4o-mini", false, nil)
		e.clk.Advance(time.Minute)
	}
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 500})
	for i := 0; i < 2; i++ { // 2 failures
		e.chat("lab/gpt-4o-mini", false, nil)
		e.clk.Advance(time.Minute)
	}
	e.restart() // flushes the request log

	page := func(q string) map[string]any {
		t.Helper()
		code, m := e.mgmt("GET", "/api/logs?"+q, nil)
		if code != 200 {
			t.Fatalf("%s: %d %v", q, code, m)
		}
		return m
	}
	ids := func(m map[string]any) []int64 {
		var out []int64
		for _, l := range m["logs"].([]any) {
			out = append(out, int64(l.(map[string]any)["id"].(float64)))
		}
		return out
	}
	p1 := page("limit=3")
	p2 := page(fmt.Sprintf("limit=3&before=%d", int64(p1["nextBefore"].(float64))))
	if a, b := ids(p1), ids(p2); len(a) != 3 || len(b) != 3 || b[0] >= a[2] {
		t.Fatalf("older page %v after %v", b, a)
	}
	if p1["newerAfter"] != nil {
		t.Fatalf("the newest page offers newer rows: %v", p1["newerAfter"])
	}
	back := page(fmt.Sprintf("limit=3&after=%d", int64(p2["newerAfter"].(float64))))
	if fmt.Sprint(ids(back)) != fmt.Sprint(ids(p1)) {
		t.Fatalf("newer page %v, want %v", ids(back), ids(p1))
	}
	row := p1["logs"].([]any)[0].(map[string]any)
	if row["finishedAt"] == nil {
		t.Fatalf("row without finishedAt: %v", row)
	}

	count := func(q string) int { t.Helper(); return len(page("limit=1000&" + q)["logs"].([]any)) }
	tests := []struct {
		q    string
		want int
	}{
		{"q=Lab%20box", 8},       // the connection's name
		{"q=LAB%20BOX", 8},       // case-insensitive
		{"q=" + lab[:8], 8},      // its id
		{"q=upstream_server", 2}, // the error code
		{"q=gpt-4o", 8},          // the model
		{"q=Default", 8},         // the key's name
		{"q=100%25", 0},          // a LIKE wildcard is a plain character
		{"q=nothing-like-this", 0},
		{"from=" + start.Add(2*time.Minute).Format(time.RFC3339), 6},
		{fmt.Sprintf("from=%d&to=%d", start.Add(2*time.Minute).UnixMilli(), start.Add(4*time.Minute).UnixMilli()), 2},
		{"status=error&q=lab", 2},
	}
	for _, tt := range tests {
		if got := count(tt.q); got != tt.want {
			t.Errorf("%s: %d rows, want %d", tt.q, got, tt.want)
		}
	}
	for _, bad := range []string{"before=1&after=2", "from=yesterday", "from=2026-01-01T00:10:00Z&to=2026-01-01T00:05:00Z", "after=0"} {
		if code, _ := e.mgmt("GET", "/api/logs?"+bad, nil); code != 400 {
			t.Errorf("%s: %d, want 400", bad, code)
		}
	}

	resp, body := e.do("GET", "/api/logs/export?format=csv&status=error", nil, map[string]string{"Authorization": "Bearer " + e.token})
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") || !strings.Contains(resp.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("csv export: %d %v", resp.StatusCode, resp.Header)
	}
	recs, err := csv.NewReader(strings.NewReader(string(body))).ReadAll()
	if err != nil || len(recs) != 3 || recs[0][0] != "id" || recs[1][7] != "Lab box" || recs[1][9] != "ALL_ATTEMPTS_FAILED" {
		t.Fatalf("csv %v %v", recs, err)
	}
	resp, body = e.do("GET", "/api/logs/export?format=json&q=lab", nil, map[string]string{"Authorization": "Bearer " + e.token})
	var rows []map[string]any
	if resp.StatusCode != 200 || json.Unmarshal(body, &rows) != nil || len(rows) != 8 || rows[0]["connectionName"] != "Lab box" {
		t.Fatalf("json export: %d %s", resp.StatusCode, body)
	}
	if code, _ := e.mgmt("GET", "/api/logs/export?format=xml", nil); code != 400 {
		t.Fatalf("xml export: %d", code)
	}
}
