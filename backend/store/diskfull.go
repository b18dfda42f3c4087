package store

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"

	"omniroute/backend/errs"
)

// CodeDiskFull is the stable error code of a write refused because the disk
// holding the database is full (answered 507 Insufficient Storage).
const CodeDiskFull = "INSUFFICIENT_STORAGE"

// diskFullMessage is what a client (and the health page) is told.
const diskFullMessage = "the disk holding the database is full, so this change could not be saved; free some space on it and retry"

// IsDiskFull reports whether err says the disk is full: ENOSPC, SQLite's
// SQLITE_FULL ("database or disk is full", also from the request log's own
// connection), or PostgreSQL's disk_full (SQLSTATE 53100).
func IsDiskFull(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.ENOSPC) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "53100"
	}
	var e *errs.Error
	if errors.As(err, &e) && e.Code == CodeDiskFull {
		return true
	}
	return strings.Contains(err.Error(), "database or disk is full")
}

// noteErr records the outcome of a write: a disk-full error marks the store
// full since now (DiskFullSince) and comes back as an errs.Error with
// CodeDiskFull, the original kept in the chain; a successful write clears
// the mark. Other errors pass through.
func (s *Store) noteErr(err error) error {
	if err == nil {
		s.fullSince.Store(0)
		return nil
	}
	if !IsDiskFull(err) {
		return err
	}
	s.fullSince.CompareAndSwap(0, time.Now().UnixMilli())
	var e *errs.Error
	if errors.As(err, &e) && e.Code == CodeDiskFull {
		return err // already marked
	}
	return fmt.Errorf("%w (%w)", errs.New(errs.InsufficientStorage, CodeDiskFull, diskFullMessage), err)
}

// DiskFullSince is when the latest run of writes refused for a full disk
// began; zero when the last write succeeded (or none failed so).
func (s *Store) DiskFullSince() time.Time {
	if ms := s.fullSince.Load(); ms != 0 {
		return time.UnixMilli(ms)
	}
	return time.Time{}
}

// watchDiskFull hooks noteErr after every GORM write statement (create,
// update, delete, raw Exec) and after every read (a read never clears the
// mark), so each repository method reports a full disk alike.
func (s *Store) watchDiskFull() error {
	write := func(db *gorm.DB) { db.Error = s.noteErr(db.Error) }
	read := func(db *gorm.DB) {
		if db.Error != nil {
			db.Error = s.noteErr(db.Error)
		}
	}
	cb := s.db.Callback()
	return errors.Join(
		cb.Create().Register("omniroute:disk_full", write),
		cb.Update().Register("omniroute:disk_full", write),
		cb.Delete().Register("omniroute:disk_full", write),
		cb.Raw().Register("omniroute:disk_full", write),
		cb.Query().Register("omniroute:disk_full", read),
		cb.Row().Register("omniroute:disk_full", read),
	)
}

// transaction is db.Transaction with its outcome noted (in WAL mode a
// transaction's pages reach the disk at COMMIT, so that is where a full disk
// shows).
func (s *Store) transaction(db *gorm.DB, fn func(tx *gorm.DB) error) error {
	return s.noteErr(db.Transaction(fn))
}
