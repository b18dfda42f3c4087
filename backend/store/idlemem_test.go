package store

import "testing"

// TestOpenClosesTheMigratingConnection: the connection that ran the
// migrations is closed once they are done, its page cache and parsed schema
// with it (idle RSS, docs/BENCHMARKS.md); the store's next statement opens a
// fresh connection with the same PRAGMAs.
func TestOpenClosesTheMigratingConnection(t *testing.T) {
	s, _ := openTemp(t)
	sqlDB, err := s.db.DB()
	if err != nil {
		t.Fatal(err)
	}
	if st := sqlDB.Stats(); st.OpenConnections != 0 || st.MaxIdleClosed != 1 {
		t.Fatalf("after Open: %d connections open, %d closed as idle; want 0 and 1 (the migrating one)", st.OpenConnections, st.MaxIdleClosed)
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
