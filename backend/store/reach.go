package store

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrDatabaseUnavailable is in the chain of every store error caused by a
// shared (PostgreSQL) database that did not answer: refused, reset or timed
// out connections, a server shutting down. The HTTP edge answers it
// 503 DATABASE_UNAVAILABLE with Retry-After (errs.As, through the
// DatabaseUnavailable method of the error carrying it), never 500.
var ErrDatabaseUnavailable = errors.New("the database is unreachable")

// unavailableError is a statement the database did not answer:
// ErrDatabaseUnavailable and the driver's own error, both in its chain.
type unavailableError struct{ err error }

func (e *unavailableError) Error() string {
	return ErrDatabaseUnavailable.Error() + ": " + e.err.Error()
}
func (e *unavailableError) Unwrap() []error { return []error{ErrDatabaseUnavailable, e.err} }

// DatabaseUnavailable tells the HTTP edge (package errs) what this error is
// without the store knowing HTTP or error codes.
func (e *unavailableError) DatabaseUnavailable() bool { return true }

// IsUnreachable reports whether err says the database could not be reached
// or went away (as opposed to refusing the statement itself): connection
// refused, reset or closed, a dial or statement timeout, an unexpected EOF,
// SQLSTATE class 08 (connection exception) or 57P01–57P03 (the server is
// shutting down or starting).
func IsUnreachable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrDatabaseUnavailable) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || pgconn.Timeout(err) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03"
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	if errors.As(err, &ce) || errors.As(err, &ne) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"conn closed", "connection refused", "connection reset", "broken pipe", "failed to connect",
		"unexpected EOF", "server closed the connection"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// noteDown marks the database unreachable since now (the first failure of a
// run) and wraps err with ErrDatabaseUnavailable.
func (s *Store) noteDown(err error) error {
	s.downSince.CompareAndSwap(0, time.Now().UnixMilli())
	if errors.Is(err, ErrDatabaseUnavailable) {
		return err
	}
	return &unavailableError{err: err}
}

// noteReached records a statement that reached the database.
func (s *Store) noteReached() {
	s.downSince.Store(0)
	s.reachedAt.Store(time.Now().UnixMilli())
}

// Reachability is what the store last saw of the database: since when its
// statements fail for want of an answer (zero: the last one reached it) and
// when one last reached it (zero: none yet).
func (s *Store) Reachability() (downSince, reachedAt time.Time) {
	if ms := s.downSince.Load(); ms != 0 {
		downSince = time.UnixMilli(ms)
	}
	if ms := s.reachedAt.Load(); ms != 0 {
		reachedAt = time.UnixMilli(ms)
	}
	return downSince, reachedAt
}
