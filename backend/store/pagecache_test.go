package store

import "testing"

// The embedded database runs with the bounded page cache (issue 19: every
// KiB of cache filled under load stays resident).
func TestSQLitePageCacheIsBounded(t *testing.T) {
	s, _ := openTemp(t)
	var size int
	if err := s.DB().Raw("PRAGMA cache_size").Scan(&size).Error; err != nil {
		t.Fatal(err)
	}
	if size != -pageCacheKiB || pageCacheKiB >= 2000 {
		t.Fatalf("cache_size = %d, want %d (KiB, below SQLite's default 2000)", size, -pageCacheKiB)
	}
}
