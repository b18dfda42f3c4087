package store

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"omniroute/backend/errs"
)

func TestIsDiskFull(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"ENOSPC", fmt.Errorf("write: %w", syscall.ENOSPC), true},
		{"SQLITE_FULL", errors.New("database or disk is full (13)"), true},
		{"PostgreSQL disk_full", fmt.Errorf("x: %w", &pgconn.PgError{Code: "53100"}), true},
		{"PostgreSQL unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"another error", errors.New("database is locked (5)"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsDiskFull(tc.err); got != tc.want {
				t.Fatalf("IsDiskFull(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// fillDisk makes the store's GORM connection unable to grow the database
// (PRAGMA max_page_count at its current size): SQLite then answers a write
// that needs a new page with SQLITE_FULL, as on a full disk.
func fillDisk(t *testing.T, s *Store, full bool) {
	t.Helper()
	limit := 1 << 30
	if full {
		if err := s.db.Raw(`PRAGMA page_count`).Scan(&limit).Error; err != nil {
			t.Fatal(err)
		}
	}
	pragma := fmt.Sprintf(`PRAGMA max_page_count = %d`, limit)
	if err := s.db.Exec(pragma).Error; err != nil {
		t.Fatal(err)
	}
	if s.logs != nil { // the request log's own connection too
		s.logs.mu.Lock()
		err := s.logs.conn.exec(pragma)
		s.logs.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// A write refused for a full disk comes back as INSUFFICIENT_STORAGE (an
// errs.Error, the SQLite error kept in the chain) and marks the store full
// since then; the next successful write clears the mark.
func TestDiskFullIsAStableErrorAndAState(t *testing.T) {
	s, _ := openTemp(t)
	if !s.DiskFullSince().IsZero() {
		t.Fatal("full before any write")
	}
	fillDisk(t, s, true)
	big := make([]byte, 64<<10)
	for i := range big {
		big[i] = 'x'
	}
	err := s.SetValue("settings", "big", string(big))
	if !errors.Is(err, ErrDiskFull) || !IsDiskFull(err) {
		t.Fatalf("SetValue on a full disk = %v, want ErrDiskFull in the chain", err)
	}
	// The HTTP edge's mapping: 507 INSUFFICIENT_STORAGE, not INTERNAL_ERROR.
	if e := errs.As(err); e.Class != errs.InsufficientStorage || e.Code != errs.CodeInsufficientStorage {
		t.Fatalf("errs.As = %+v, want the INSUFFICIENT_STORAGE class", e)
	}
	if !strings.Contains(err.Error(), "database or disk is full") {
		t.Fatalf("%v: the SQLite error is not kept", err)
	}
	since := s.DiskFullSince()
	if since.IsZero() {
		t.Fatal("DiskFullSince is zero after a disk-full write")
	}
	// A read neither fails nor clears the mark; a second failure keeps its start.
	if _, _, err := s.GetValue("settings", "big"); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertRequestLogs(variedLogs(0, 200)); !IsDiskFull(err) {
		t.Fatalf("request log batch on a full disk = %v, want disk full", err)
	}
	if got := s.DiskFullSince(); !got.Equal(since) {
		t.Fatalf("DiskFullSince moved %v -> %v", since, got)
	}
	fillDisk(t, s, false)
	if err := s.SetValue("settings", "small", "1"); err != nil {
		t.Fatal(err)
	}
	if !s.DiskFullSince().IsZero() {
		t.Fatal("the mark stayed after a write succeeded")
	}
}
