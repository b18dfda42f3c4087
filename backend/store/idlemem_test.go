package store

import (
	"database/sql"
	"path/filepath"
	"testing"
)

// TestOpenClosesTheMigratingConnection: a database whose main file was
// checkpointed before gets a fresh connection after the migrations (the
// migrating one, its page cache and parsed schema, is closed), with the
// store's PRAGMAs; a fresh database keeps it, because closing the last
// connection checkpoints, and a copy of the main file alone taken before
// the first checkpoint must have no tables
// (TestCheckpointMakesTheMainFileSelfContained).
func TestOpenClosesTheMigratingConnection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	first, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	stats := func(s *Store) sql.DBStats {
		t.Helper()
		sqlDB, err := s.db.DB()
		if err != nil {
			t.Fatal(err)
		}
		return sqlDB.Stats()
	}
	if st := stats(first); st.OpenConnections != 1 || st.MaxIdleClosed != 0 {
		t.Fatalf("a fresh database: %d connections open, %d closed as idle; want the migrating one kept", st.OpenConnections, st.MaxIdleClosed)
	}
	if err := first.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if st := stats(s); st.OpenConnections != 0 || st.MaxIdleClosed != 1 {
		t.Fatalf("after a checkpoint: %d connections open, %d closed as idle; want 0 and 1 (the migrating one)", st.OpenConnections, st.MaxIdleClosed)
	}
	var fk, cache int
	if err := s.db.Raw(`PRAGMA foreign_keys`).Scan(&fk).Error; err != nil {
		t.Fatal(err)
	}
	if err := s.db.Raw(`PRAGMA cache_size`).Scan(&cache).Error; err != nil {
		t.Fatal(err)
	}
	if fk != 1 || cache != -pageCacheKiB {
		t.Fatalf("the fresh connection: foreign_keys %d, cache_size %d; want 1, %d", fk, cache, -pageCacheKiB)
	}
	if _, err := s.APIKeys(); err != nil {
		t.Fatalf("a statement on the fresh connection: %v", err)
	}
}
