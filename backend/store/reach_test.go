package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestIsUnreachable: a database that did not answer, as opposed to one that
// refused the statement.
func TestIsUnreachable(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"connection exception 08006", &pgconn.PgError{Code: "08006"}, true},
		{"admin shutdown 57P01", &pgconn.PgError{Code: "57P01"}, true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"syntax error", &pgconn.PgError{Code: "42601"}, false},
		{"dial refused", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
		{"deadline", fmt.Errorf("claim: %w", context.DeadlineExceeded), true},
		{"wrapped sentinel", fmt.Errorf("x: %w", ErrDatabaseUnavailable), true},
		{"conn closed text", errors.New("conn closed"), true},
		{"not found", ErrNotFound, false},
		{"plain", errors.New("some bug"), false},
	} {
		if got := IsUnreachable(tt.err); got != tt.want {
			t.Errorf("%s: IsUnreachable = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestPostgresUnreachableIsMarked: a statement on a database that went away
// comes back with ErrDatabaseUnavailable in its chain and Reachability says
// since when; the next statement that reaches it clears the mark.
func TestPostgresUnreachableIsMarked(t *testing.T) {
	s := openDialect(t, Postgres)
	if err := s.SetValue("ns", "k", "v"); err != nil {
		t.Fatal(err)
	}
	if down, reached := s.Reachability(); !down.IsZero() || reached.IsZero() {
		t.Fatalf("after a write: down %v reached %v", down, reached)
	}
	// A statement that gets no answer in time (its deadline passes).
	tctx, tcancel := context.WithTimeout(context.Background(), 1)
	defer tcancel()
	err := s.db.WithContext(tctx).Exec(`SELECT pg_sleep(1)`).Error
	if !errors.Is(err, ErrDatabaseUnavailable) {
		t.Fatalf("a timed-out statement: %v; want ErrDatabaseUnavailable in its chain", err)
	}
	if down, _ := s.Reachability(); down.IsZero() {
		t.Fatal("Reachability does not say the database is down")
	}
	if err := s.SetValue("ns", "k", "w"); err != nil {
		t.Fatal(err)
	}
	if down, _ := s.Reachability(); !down.IsZero() {
		t.Fatal("a statement that reached the database did not clear the mark")
	}
}
