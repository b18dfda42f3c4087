package server_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"omniroute/backend/config"
	"omniroute/backend/datadir"
	"omniroute/backend/server"
	"omniroute/backend/store"
)

// TestExportSQLiteCarriesTheRequestLog: `omniroute export` of a desktop
// data directory copies the request log that the store's own writer
// connection committed (not only what GORM's connection wrote), and leaves a
// complete file: no -wal beside it once both of its connections closed.
func TestExportSQLiteCarriesTheRequestLog(t *testing.T) {
	dir := t.TempDir()
	dd, err := datadir.Open(dir, datadir.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(dd.File(datadir.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.RequestLogFallback(); err != nil {
		t.Fatalf("no writer connection: %v", err)
	}
	rows := make([]store.RequestLog, 300)
	for i := range rows {
		rows[i] = store.RequestLog{RequestID: fmt.Sprintf("req_%03d", i), CreatedAt: int64(1000 + i), Model: "m", Provider: "p",
			ConnectionID: "c", Status: 200, AttemptCount: 1, Attempts: "[]", LatencyMs: int64(i)}
	}
	if err := st.InsertRequestLogs(rows); err != nil {
		t.Fatal(err)
	}
	if err := st.SetValue("ns", "k", "v"); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	dd.Close()

	to := filepath.Join(t.TempDir(), "backup.db")
	counts, err := server.Export(config.Process{DataDir: dir}, to)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, c := range counts {
		got[c.Table] = c.Rows
	}
	if got["request_logs"] != int64(len(rows)) || got["key_value"] != 1 {
		t.Fatalf("exported %v, want %d request_logs and 1 key_value", got, len(rows))
	}
	if _, err := os.Stat(to + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a -wal file is left beside the export (%v)", err)
	}
	back, err := store.Open(to)
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	logs, err := back.RecentRequestLogs(len(rows) + 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != len(rows) || logs[0].RequestID != rows[len(rows)-1].RequestID {
		t.Fatalf("the export holds %d rows, want %d, the newest %s first", len(logs), len(rows), rows[len(rows)-1].RequestID)
	}
}
