package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestInsertRequestLogsChunks writes batches around the multi-row INSERT's
// chunk size and reads every row back with all its columns.
func TestInsertRequestLogsChunks(t *testing.T) {
	s, _ := openTemp(t)
	total := 0
	for _, n := range []int{1, requestLogInsertChunk - 1, requestLogInsertChunk, requestLogInsertChunk + 1, 2*requestLogInsertChunk + 3} {
		rows := make([]RequestLog, n)
		for i := range rows {
			id := total + i
			rows[i] = RequestLog{RequestID: fmt.Sprintf("req_%04d", id), CreatedAt: int64(1000 + id), APIKeyID: "k", ClientFormat: "openai",
				Model: "m", Provider: "p", ConnectionID: "c", Status: 200 + id%2, Stream: id%2 == 1, AttemptCount: 1 + id%3,
				Attempts: `[]`, LatencyMs: int64(id), ErrorCode: fmt.Sprint("E", id), PromptTokens: id, CompletionTokens: 2 * id,
				QueueMs: int64(3 * id), QueueReason: "q", CachedTokens: 4 * id}
		}
		if err := s.InsertRequestLogs(rows); err != nil {
			t.Fatalf("batch of %d: %v", n, err)
		}
		total += n
	}
	got, err := s.RecentRequestLogs(total + 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != total {
		t.Fatalf("%d rows read back, want %d", len(got), total)
	}
	for i, r := range got {
		id := total - 1 - i // newest first
		want := RequestLog{ID: r.ID, RequestID: fmt.Sprintf("req_%04d", id), CreatedAt: int64(1000 + id), APIKeyID: "k", ClientFormat: "openai",
			Model: "m", Provider: "p", ConnectionID: "c", Status: 200 + id%2, Stream: id%2 == 1, AttemptCount: 1 + id%3,
			Attempts: `[]`, LatencyMs: int64(id), ErrorCode: fmt.Sprint("E", id), PromptTokens: id, CompletionTokens: 2 * id,
			QueueMs: int64(3 * id), QueueReason: "q", CachedTokens: 4 * id}
		if r != want {
			t.Fatalf("row %d:\n got %+v\nwant %+v", id, r, want)
		}
	}
}

// variedLogs is n rows spread over connections, models, keys, providers,
// statuses, latency bins, minute and 15-minute buckets, with empty, long,
// non-ASCII and NUL-holding strings: everything the log and its rollup key on.
func variedLogs(start, n int) []RequestLog {
	rows := make([]RequestLog, n)
	for i := range rows {
		id := start + i
		rows[i] = RequestLog{RequestID: fmt.Sprintf("req_%05d", id), CreatedAt: 1_700_000_000_000 + int64(id)*7_919,
			APIKeyID: []string{"", "key_a", "key_b"}[id%3], ClientFormat: []string{"openai", "anthropic", "responses"}[id%3],
			Model: []string{"gpt-4o", "claude-ünï", "m\x00nul", strings.Repeat("x", 256)}[id%4], Provider: []string{"openai", "anthropic"}[id%2],
			ConnectionID: []string{"conn_1", "conn_2", "", "conn_3", "conn_4"}[id%5], Status: []int{200, 200, 429, 503, 400, 201}[id%6],
			Stream: id%2 == 0, AttemptCount: 1 + id%4, Attempts: fmt.Sprintf(`[{"connectionId":"conn_%d","status":%d}]`, id%5, 200+id),
			LatencyMs: []int64{0, 49, 50, 999, 1_500, 119_999, 120_000, 5_000_000}[id%8], ErrorCode: []string{"", "rate_limited"}[id%2],
			PromptTokens: id * 3, CompletionTokens: id * 5, QueueMs: int64(id % 7), QueueReason: []string{"", "concurrency"}[id%2], CachedTokens: id % 11}
	}
	return rows
}

// logTables reads every request_logs and usage_rollup row, in key order.
func logTables(t *testing.T, s *Store) ([]RequestLog, []map[string]any) {
	t.Helper()
	var logs []RequestLog
	if err := s.DB().Order("id").Find(&logs).Error; err != nil {
		t.Fatal(err)
	}
	var cells []map[string]any
	if err := s.DB().Raw(`SELECT * FROM usage_rollup ORDER BY res, bucket, connection_id, model, api_key_id, provider`).Scan(&cells).Error; err != nil {
		t.Fatal(err)
	}
	return logs, cells
}

// TestRequestLogCompiledPathMatchesPortable: batches written through the
// statements compiled on the SQLite connection (InsertRequestLogs) leave
// exactly the rows and rollup cells that database/sql's multi-row INSERTs
// (insertRequestLogsPortable) leave, and the rollup equals the one rebuilt
// row by row from the log (RebuildUsageRollup).
func TestRequestLogCompiledPathMatchesPortable(t *testing.T) {
	fast, _ := openTemp(t)
	slow, _ := openTemp(t)
	start := 0
	for _, n := range []int{1, logStmtRows - 1, logStmtRows, logStmtRows + 1, 64, 3*logStmtRows + 5, 256, -40} {
		rows := variedLogs(start, max(n, -n))
		if n < 0 { // a run of rows equal but for their id and time: nearly every value is bound once
			n = -n
			for i := range rows {
				id, at := rows[i].RequestID, rows[i].CreatedAt
				rows[i] = rows[0]
				rows[i].RequestID, rows[i].CreatedAt = id, at
			}
		}
		if err := fast.InsertRequestLogs(rows); err != nil {
			t.Fatalf("compiled path, batch of %d: %v", n, err)
		}
		if err := slow.insertRequestLogsPortable(rows); err != nil {
			t.Fatalf("portable path, batch of %d: %v", n, err)
		}
		start += n
	}
	fastLogs, fastCells := logTables(t, fast)
	slowLogs, slowCells := logTables(t, slow)
	if len(fastLogs) != start || !reflect.DeepEqual(fastLogs, slowLogs) {
		t.Fatalf("request_logs differ: %d compiled rows, %d portable rows (want %d)", len(fastLogs), len(slowLogs), start)
	}
	for i, r := range fastLogs {
		if want := variedLogs(i, 1)[0]; r.ID != int64(i+1) || r.RequestID != want.RequestID || r.CreatedAt != want.CreatedAt {
			t.Fatalf("row %d read back as %+v, want %+v", i, r, want)
		}
	}
	if len(fastCells) == 0 || !reflect.DeepEqual(fastCells, slowCells) {
		t.Fatalf("usage_rollup differs:\ncompiled %v\nportable %v", fastCells, slowCells)
	}
	if err := fast.RebuildUsageRollup(); err != nil {
		t.Fatal(err)
	}
	if _, rebuilt := logTables(t, fast); !reflect.DeepEqual(fastCells, rebuilt) {
		t.Fatalf("rollup written batch by batch differs from the one rebuilt row by row:\nbatches %v\nrebuilt %v", fastCells, rebuilt)
	}
}

// TestRequestLogCompiledPathIsUsed: the store reaches the SQLite handle under
// the glebarez driver, so logging does not fall back to the portable path
// (a driver upgrade that changes the connection's layout fails here).
func TestRequestLogCompiledPathIsUsed(t *testing.T) {
	s, _ := openTemp(t)
	called := false
	if err := s.withRawSQLite(func(c rawSQLite) error { called = c.db != 0 && c.tls != nil; return nil }); err != nil || !called {
		t.Fatalf("withRawSQLite: %v (handle seen: %v)", err, called)
	}
	type conn struct {
		db  uintptr
		tls *int
	}
	for _, v := range []any{nil, 42, conn{}, &conn{db: 1}, new(int)} {
		if _, ok := rawSQLiteOf(v); ok {
			t.Errorf("rawSQLiteOf(%T) = ok, want a refusal", v)
		}
	}
}

// TestRequestLogFailedBatchLeavesNothing: a batch whose row fails (a trigger
// refuses one request id; in the multi-row statement, in the single-row tail,
// in the rollup) writes none of its rows or cells, and leaves no transaction
// open on the connection: the next batch and every other write commit.
func TestRequestLogFailedBatchLeavesNothing(t *testing.T) {
	s, path := openTemp(t)
	if err := s.InsertRequestLogs(variedLogs(0, 10)); err != nil {
		t.Fatal(err)
	}
	wantLogs, wantCells := logTables(t, s)
	if err := s.DB().Exec(`CREATE TRIGGER refuse BEFORE INSERT ON request_logs WHEN NEW.request_id = 'boom'
		BEGIN SELECT RAISE(ABORT, 'refused'); END`).Error; err != nil {
		t.Fatal(err)
	}
	if err := s.DB().Exec(`CREATE TRIGGER refuse_cell BEFORE INSERT ON usage_rollup WHEN NEW.model = 'boom'
		BEGIN SELECT RAISE(ABORT, 'refused'); END`).Error; err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		at   int
		col  string
	}{{"multi-row statement", 3, "request_id"}, {"single-row tail", 2*logStmtRows + 1, "request_id"}, {"rollup", 5, "model"}} {
		rows := variedLogs(100, 2*logStmtRows+2)
		if tc.col == "model" {
			rows[tc.at].Model = "boom"
		} else {
			rows[tc.at].RequestID = "boom"
		}
		err := s.InsertRequestLogs(rows)
		if err == nil || !strings.Contains(err.Error(), "refused") {
			t.Fatalf("%s: err = %v, want the trigger's refusal", tc.name, err)
		}
		if logs, cells := logTables(t, s); !reflect.DeepEqual(logs, wantLogs) || !reflect.DeepEqual(cells, wantCells) {
			t.Fatalf("%s: the failed batch left %d rows (want %d) / changed the rollup", tc.name, len(logs), len(wantLogs))
		}
	}
	if err := s.InsertRequestLogs(variedLogs(10, 5)); err != nil {
		t.Fatal(err)
	}
	if err := s.SetValue("ns", "k", "v"); err != nil {
		t.Fatal(err)
	}
	// Another handle on the file sees both: they were committed.
	other, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if v, ok, err := other.GetValue("ns", "k"); err != nil || !ok || v != "v" {
		t.Fatalf("value after a failed batch: %q %v %v (left in an open transaction?)", v, ok, err)
	}
	if logs, _ := logTables(t, other); len(logs) != 15 {
		t.Fatalf("%d rows committed, want 15", len(logs))
	}
}

// TestRequestLogStatementsFreedAtClose: Close finalises the compiled
// statements, so SQLite really closes the file (a connection with live
// statements would stay open as a zombie and keep its -wal file).
func TestRequestLogStatementsFreedAtClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.InsertRequestLogs(variedLogs(0, 40)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Fatalf("no WAL file while open: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the WAL file outlived Close (%v): the connection was not released", err)
	}
}
