package store

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/glebarez/sqlite"
	"golang.org/x/sync/errgroup"
	"gorm.io/gorm"
	sqlite3 "modernc.org/sqlite/lib"
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
			PromptTokens: id * 3, CompletionTokens: id * 5, QueueMs: int64(id % 7), QueueReason: []string{"", "concurrency"}[id%2], CachedTokens: id % 11,
			CostUSD: sql.NullFloat64{Float64: float64(id%4) * 0.125, Valid: id%3 != 0}, SavedUSD: float64(id%2) * 0.5}
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

// totalChanges is the rows the writer's connection has written since it
// opened.
func (w *logWriter) totalChanges() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return sqlite3.Xsqlite3_total_changes64(w.conn.tls, w.conn.db)
}

// gormChanges is the rows the store's GORM connection has written since it
// opened.
func gormChanges(t *testing.T, s *Store) int64 {
	t.Helper()
	var n int64
	if err := s.DB().Raw(`SELECT total_changes()`).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// countLogs is the request_logs rows the store's GORM connection sees.
func countLogs(t *testing.T, s *Store) int64 {
	t.Helper()
	var n int64
	if err := s.DB().Raw(`SELECT COUNT(*) FROM request_logs`).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRequestLogCompiledPathIsUsed: on SQLite the store opens its own writer
// connection, batches are written by it and not by the GORM connection, and
// the GORM connection reads them as soon as InsertRequestLogs returns.
func TestRequestLogCompiledPathIsUsed(t *testing.T) {
	s, _ := openTemp(t)
	if err := s.RequestLogFallback(); err != nil || s.logs == nil {
		t.Fatalf("no writer connection: %v", err)
	}
	// The store DSN's PRAGMAs, applied on the writer's connection too.
	for pragma, want := range map[string]string{"journal_mode": "wal", "busy_timeout": "10000", "foreign_keys": "1", "synchronous": "1",
		"cache_size": strconv.Itoa(-pageCacheKiB)} {
		s.logs.mu.Lock()
		got, err := s.logs.conn.queryText("PRAGMA " + pragma)
		s.logs.mu.Unlock()
		if err != nil || got != want {
			t.Errorf("writer connection: PRAGMA %s = %q (%v), want %q", pragma, got, err, want)
		}
	}
	w0, g0 := s.logs.totalChanges(), gormChanges(t, s)
	rows := variedLogs(0, 2*logStmtRows+3)
	if err := s.InsertRequestLogs(rows); err != nil {
		t.Fatal(err)
	}
	cells := int64(len(rollupCells(rows)))
	if w, g := s.logs.totalChanges()-w0, gormChanges(t, s)-g0; w != int64(len(rows))+cells || g != 0 {
		t.Fatalf("the batch wrote %d rows through the writer connection (want %d rows + %d cells) and %d through GORM's (want 0)", w, len(rows), cells, g)
	}
	if n := countLogs(t, s); n != int64(len(rows)) {
		t.Fatalf("GORM's connection reads %d rows right after the batch, want %d", n, len(rows))
	}
}

// TestRequestLogFallback: the writer connection refuses what is not the
// store's own file in WAL mode, and a store whose writer did not open says
// why and writes its batches through the GORM connection, in full.
func TestRequestLogFallback(t *testing.T) {
	s, path := openTemp(t)
	var file string
	if err := s.DB().Raw(`SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&file).Error; err != nil || file == "" {
		t.Fatalf("store file %q: %v", file, err)
	}
	if w, err := openLogWriter(path, file); err != nil {
		t.Fatalf("the store's own file: %v", err)
	} else if err := w.close(); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "none.db")
	for _, tc := range []struct{ name, path, file, want string }{
		{"missing file (never created)", missing, file, "unable to open"},
		{"another file than the store's", path, file + "-other", "not the store's file"},
		{"in memory, not WAL", ":memory:", "", "not wal"},
	} {
		w, err := openLogWriter(tc.path, tc.file)
		if err == nil {
			_ = w.close()
			t.Errorf("%s: opened", tc.name)
		} else if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the writer created a database file (%v)", err)
	}
	// A WAL database the migrations have not run on: the statements do not
	// compile, so the writer does not open.
	bare := filepath.Join(t.TempDir(), "bare.db")
	db, err := gorm.Open(sqlite.Open(sqliteDSN(bare)), gormConfig())
	if err != nil {
		t.Fatal(err)
	}
	var bareFile string
	if err := db.Raw(`SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&bareFile).Error; err != nil {
		t.Fatal(err)
	}
	if w, err := openLogWriter(bare, bareFile); err == nil {
		_ = w.close()
		t.Error("unmigrated database: opened")
	} else if !strings.Contains(err.Error(), "no such table") {
		t.Errorf("unmigrated database: err = %v, want no such table", err)
	}
	if sqlDB, err := db.DB(); err == nil {
		_ = sqlDB.Close()
	}

	fb, err := open(filepath.Join(t.TempDir(), "fallback.db"), OpenOptions{}, func(string, string) (*logWriter, error) {
		return nil, errors.New("no writer here")
	})
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	if err := fb.RequestLogFallback(); err == nil || !strings.Contains(err.Error(), "no writer here") {
		t.Fatalf("RequestLogFallback = %v, want the opener's error", err)
	}
	g0 := gormChanges(t, fb)
	rows := variedLogs(0, 2*logStmtRows+3)
	if err := fb.InsertRequestLogs(rows); err != nil {
		t.Fatal(err)
	}
	if g := gormChanges(t, fb) - g0; g < int64(len(rows)) {
		t.Fatalf("GORM's connection wrote %d rows, want the batch's %d and its cells", g, len(rows))
	}
	if n := countLogs(t, fb); n != int64(len(rows)) {
		t.Fatalf("%d rows, want %d", n, len(rows))
	}
}

// TestRequestLogConcurrentWithGORMWrites: log batches on the writer
// connection race single statements, transactions that read before they
// write, and retention on the GORM connection. Both sides wait for the write
// lock instead of failing (no SQLITE_BUSY within the busy timeout) and
// nothing is lost.
func TestRequestLogConcurrentWithGORMWrites(t *testing.T) {
	s, path := openTemp(t)
	const rounds, batch = 100, 20
	var g errgroup.Group
	g.Go(func() error {
		for i := range rounds {
			if err := s.InsertRequestLogs(variedLogs(i*batch, batch)); err != nil {
				return fmt.Errorf("log batch %d: %w", i, err)
			}
		}
		return nil
	})
	g.Go(func() error {
		for i := range rounds {
			if err := s.SetValue("single", fmt.Sprint(i), "v"); err != nil {
				return fmt.Errorf("single statement %d: %w", i, err)
			}
			err := s.DB().Transaction(func(tx *gorm.DB) error {
				var n int64
				if err := tx.Raw(`SELECT COUNT(*) FROM request_logs`).Scan(&n).Error; err != nil {
					return err
				}
				return tx.Exec(`INSERT INTO key_value (namespace, key, value, updated_at) VALUES ('seen', ?, ?, 0)`, fmt.Sprint(i), fmt.Sprint(n)).Error
			})
			if err != nil {
				return fmt.Errorf("read-then-write transaction %d: %w", i, err)
			}
			if err := s.PruneRequestLogs(rounds * batch); err != nil {
				return fmt.Errorf("retention %d: %w", i, err)
			}
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if n := countLogs(t, s); n != rounds*batch {
		t.Fatalf("%d log rows, want %d", n, rounds*batch)
	}
	// Another store on the file (so, other connections) sees everything.
	other, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var values int64
	if err := other.DB().Raw(`SELECT COUNT(*) FROM key_value WHERE namespace IN ('single', 'seen')`).Scan(&values).Error; err != nil {
		t.Fatal(err)
	}
	if n := countLogs(t, other); n != rounds*batch || values != 2*rounds {
		t.Fatalf("another connection sees %d log rows (want %d) and %d values (want %d)", n, rounds*batch, values, 2*rounds)
	}
}

// TestGORMTransactionsTakeTheWriteLockAtBegin: a GORM transaction holds
// SQLite's write lock from its BEGIN, before it writes (BEGIN IMMEDIATE), so
// one that reads first waits for the writer connection's batch instead of
// failing with SQLITE_BUSY when it comes to write. Probed deterministically:
// inside such a transaction, after a read only, the writer connection
// cannot take the lock (busy timeout 0 for the probe).
func TestGORMTransactionsTakeTheWriteLockAtBegin(t *testing.T) {
	s, _ := openTemp(t)
	err := s.DB().Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Raw(`SELECT COUNT(*) FROM request_logs`).Scan(&n).Error; err != nil {
			return err
		}
		s.logs.mu.Lock()
		defer s.logs.mu.Unlock()
		c := s.logs.conn
		sqlite3.Xsqlite3_busy_timeout(c.tls, c.db, 0)
		defer sqlite3.Xsqlite3_busy_timeout(c.tls, c.db, 10_000)
		if err := c.exec("BEGIN IMMEDIATE"); err == nil {
			_ = c.exec("ROLLBACK")
			return errors.New("the writer connection took the write lock inside a GORM transaction that had only read: it began DEFERRED")
		} else if !strings.Contains(err.Error(), "locked") {
			return fmt.Errorf("probe: %w", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The lock is released at the transaction's end: the writer writes.
	if err := s.InsertRequestLogs(variedLogs(0, 3)); err != nil {
		t.Fatal(err)
	}
}

// TestRequestLogStoreReopen: a closed store refuses batches (no crash, no
// write), and the file reopened gets a new writer connection that appends.
func TestRequestLogStoreReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	for round := range 3 {
		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RequestLogFallback(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if err := s.InsertRequestLogs(variedLogs(round*10, 10)); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if n := countLogs(t, s); n != int64(10*(round+1)) {
			t.Fatalf("round %d: %d rows, want %d", round, n, 10*(round+1))
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.InsertRequestLogs(variedLogs(1000, 1)); !errors.Is(err, errLogWriterClosed) {
			t.Fatalf("batch after Close: %v, want %v", err, errLogWriterClosed)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
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

// TestRequestLogPruneOnTheWriter: on SQLite, PruneRequestLogs runs on the
// writer's connection (not GORM's) and leaves exactly the rows and rollup
// cells the portable path leaves: the newest keep rows (keep − 1 deletes one
// more row, keep again none) and, per resolution, the cells within its window.
func TestRequestLogPruneOnTheWriter(t *testing.T) {
	fast, _ := openTemp(t)
	slow, _ := openTemp(t)
	// 2,000 rows 7.9 s apart span 4.4 h: beyond the 1-minute resolution's 3 h.
	for start := 0; start < 2000; start += 250 {
		rows := variedLogs(start, 250)
		if err := fast.InsertRequestLogs(rows); err != nil {
			t.Fatal(err)
		}
		if err := slow.insertRequestLogsPortable(rows); err != nil {
			t.Fatal(err)
		}
	}
	_, cellsBefore := logTables(t, fast)
	for _, keep := range []int{5000, 700, 700, 699, 0} {
		w0, g0 := fast.logs.totalChanges(), gormChanges(t, fast)
		if err := fast.PruneRequestLogs(keep); err != nil {
			t.Fatalf("keep %d, writer: %v", keep, err)
		}
		if g := gormChanges(t, fast) - g0; g != 0 {
			t.Fatalf("keep %d: the prune deleted %d rows through GORM's connection, want 0", keep, g)
		}
		if err := slow.pruneRequestLogsPortable(keep); err != nil {
			t.Fatalf("keep %d, portable: %v", keep, err)
		}
		fastLogs, fastCells := logTables(t, fast)
		slowLogs, slowCells := logTables(t, slow)
		if want := min(keep, 2000); len(fastLogs) != want || !reflect.DeepEqual(fastLogs, slowLogs) {
			t.Fatalf("keep %d: %d rows on the writer, %d portable, want %d", keep, len(fastLogs), len(slowLogs), want)
		}
		if want := 2000 - min(keep, 2000); keep > 0 && len(fastLogs) > 0 && fastLogs[0].ID != int64(want+1) {
			t.Fatalf("keep %d: the oldest row left is %d, want %d", keep, fastLogs[0].ID, want+1)
		}
		if !reflect.DeepEqual(fastCells, slowCells) {
			t.Fatalf("keep %d: usage_rollup differs:\nwriter   %v\nportable %v", keep, fastCells, slowCells)
		}
		if keep == 5000 {
			if w := fast.logs.totalChanges() - w0; w == 0 || len(fastCells) >= len(cellsBefore) {
				t.Fatalf("the first prune deleted %d rows on the writer; rollup cells %d → %d: the 1-minute cells beyond 3 h should go",
					w, len(cellsBefore), len(fastCells))
			}
		}
	}
}

// TestRequestLogTextBufferKept: the C buffer a batch's strings are bound from
// is kept for the next batches (one allocation, not a mapping per batch), is
// grown for a larger batch, and is not grown for one beyond maxKeptText (that
// batch's buffer is its own, freed after it); Close frees it. Every batch
// reads back exactly as written, a short one after a long one included (no
// stale byte of the previous batch is bound).
func TestRequestLogTextBufferKept(t *testing.T) {
	s, _ := openTemp(t)
	w := s.logs
	kept := func() (uintptr, int) { w.mu.Lock(); defer w.mu.Unlock(); return w.ctext, w.ctextCap }
	if p, n := kept(); p != 0 || n != 0 {
		t.Fatalf("a buffer before any batch: %#x, %d bytes", p, n)
	}
	huge := variedLogs(481, 2)
	huge[1].Attempts = strings.Repeat("é", maxKeptText) // 2× maxKeptText bytes
	var want []RequestLog
	var first uintptr
	for i, b := range []struct {
		rows []RequestLog
		grow bool // the kept buffer is replaced by a larger one
	}{{variedLogs(0, 40), true}, {variedLogs(40, 40), false}, {variedLogs(80, 1), false}, {variedLogs(81, 400), true},
		{huge, false}, {variedLogs(483, 3), false}} {
		p0, n0 := kept()
		if err := s.InsertRequestLogs(b.rows); err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		p, n := kept()
		if p == 0 || n > maxKeptText {
			t.Fatalf("batch %d: kept buffer %#x of %d bytes, want one of at most %d", i, p, n, maxKeptText)
		}
		if grew := p != p0; grew != b.grow || (!grew && n != n0) || (grew && n <= n0) {
			t.Fatalf("batch %d: buffer %#x (%d bytes) → %#x (%d bytes), want grown: %v", i, p0, n0, p, n, b.grow)
		}
		if i == 0 {
			first = p
		}
		want = append(want, b.rows...)
		got, _ := logTables(t, s)
		if len(got) != len(want) {
			t.Fatalf("batch %d: %d rows read back, want %d", i, len(got), len(want))
		}
		for j := range got {
			w := want[j]
			w.ID = int64(j + 1)
			if !w.CostUSD.Valid {
				w.CostUSD.Float64 = 0 // NULL reads back as 0
			}
			if got[j] != w {
				t.Fatalf("batch %d, row %d:\n got %+v\nwant %+v", i, j, got[j], w)
			}
		}
	}
	if first == 0 {
		t.Fatal("no buffer after the first batch")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if p, n := kept(); p != 0 || n != 0 {
		t.Fatalf("the buffer outlived Close: %#x, %d bytes", p, n)
	}
}

// TestRequestLogRetainedInTheBatch: InsertRequestLogsRetaining leaves, after
// each batch, exactly the newest keep rows (all of a batch larger than keep),
// every field as written and ids never reused; the usage rollup is the one
// plain batches leave (retention deletes log rows only); a batch that fails
// deletes nothing. PruneRequestLogs after it has nothing left to delete.
func TestRequestLogRetainedInTheBatch(t *testing.T) {
	s, _ := openTemp(t)
	plain, _ := openTemp(t)
	const keep = 150
	var all []RequestLog
	for _, n := range []int{100, 100, 60, 256, 30, logStmtRows + 1} {
		rows := variedLogs(len(all), n)
		if err := s.InsertRequestLogsRetaining(rows, keep); err != nil {
			t.Fatalf("batch of %d: %v", n, err)
		}
		if err := plain.InsertRequestLogs(rows); err != nil {
			t.Fatal(err)
		}
		all = append(all, rows...)
		got, cells := logTables(t, s)
		from := len(all) - max(keep, n)
		if from < 0 {
			from = 0
		}
		if len(got) != len(all)-from {
			t.Fatalf("after a batch of %d: %d rows, want %d", n, len(got), len(all)-from)
		}
		for j, r := range got {
			w := all[from+j]
			w.ID = int64(from + j + 1)
			if !w.CostUSD.Valid {
				w.CostUSD.Float64 = 0 // NULL reads back as 0
			}
			if r != w {
				t.Fatalf("after a batch of %d, row %d:\n got %+v\nwant %+v", n, j, r, w)
			}
		}
		if _, want := logTables(t, plain); !reflect.DeepEqual(cells, want) {
			t.Fatalf("after a batch of %d the rollup differs from plain batches':\n got %v\nwant %v", n, cells, want)
		}
	}
	before, _ := logTables(t, s)
	w0 := s.logs.totalChanges()
	if err := s.PruneRequestLogs(keep); err != nil {
		t.Fatal(err)
	}
	if after, _ := logTables(t, s); !reflect.DeepEqual(after, before) || s.logs.totalChanges() != w0 {
		t.Fatalf("PruneRequestLogs after retaining batches deleted %d rows, want none", len(before)-len(after))
	}
	if err := s.DB().Exec(`CREATE TRIGGER refuse BEFORE INSERT ON request_logs WHEN NEW.request_id = 'boom'
		BEGIN SELECT RAISE(ABORT, 'refused'); END`).Error; err != nil {
		t.Fatal(err)
	}
	rows := variedLogs(len(all), 40)
	rows[39].RequestID = "boom"
	if err := s.InsertRequestLogsRetaining(rows, keep); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("err = %v, want the trigger's refusal", err)
	}
	if after, _ := logTables(t, s); !reflect.DeepEqual(after, before) {
		t.Fatalf("a failed retaining batch left %d rows, want the %d before it", len(after), len(before))
	}
}
