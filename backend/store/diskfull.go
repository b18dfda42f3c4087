package store

import (
	"errors"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
)

// ErrDiskFull is in the chain of every store error caused by a full disk;
// the HTTP edge answers it 507 INSUFFICIENT_STORAGE (errs.As, through the
// StorageFull method of the error carrying it).
var ErrDiskFull = errors.New("the disk holding the database is full")

// diskFullError is a write refused for a full disk: ErrDiskFull and the
// driver's own error, both in its chain.
type diskFullError struct{ err error }

func (e *diskFullError) Error() string   { return ErrDiskFull.Error() + ": " + e.err.Error() }
func (e *diskFullError) Unwrap() []error { return []error{ErrDiskFull, e.err} }

// StorageFull tells the HTTP edge (package errs) what this error is without
// the store knowing HTTP or error codes.
func (e *diskFullError) StorageFull() bool { return true }

// IsDiskFull reports whether err says the disk is full: ErrDiskFull, ENOSPC,
// SQLite's SQLITE_FULL ("database or disk is full", also from the request
// log's own connection), or PostgreSQL's disk_full (SQLSTATE 53100).
func IsDiskFull(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrDiskFull) || errors.Is(err, syscall.ENOSPC) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "53100"
	}
	return strings.Contains(err.Error(), "database or disk is full")
}

// noteErr records the outcome of a write: a disk-full error marks the store
// full since now (DiskFullSince) and comes back with ErrDiskFull in its
// chain; a successful write clears the mark. Other errors pass through.
func (s *Store) noteErr(err error) error {
	if err == nil {
		s.fullSince.Store(0)
		s.noteReached()
		return nil
	}
	if s.dialect == Postgres && IsUnreachable(err) {
		return s.noteDown(err)
	}
	if !IsDiskFull(err) {
		return err
	}
	s.fullSince.CompareAndSwap(0, time.Now().UnixMilli())
	if errors.Is(err, ErrDiskFull) {
		return err // already marked
	}
	return &diskFullError{err: err}
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
		} else {
			s.noteReached()
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
