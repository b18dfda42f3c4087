package store

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"omniroute/tests/pgtest"
)

// pg is the throw-away PostgreSQL server of this package's tests, started by
// TestMain: every store test runs against SQLite and PostgreSQL alike.
var pg *pgtest.Server

func TestMain(m *testing.M) {
	srv, err := pgtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "store tests:", err)
		os.Exit(1)
	}
	pg = srv
	code := m.Run()
	srv.Stop()
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreAnyFunction("database/sql.(*DB).connectionOpener")); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// openDialect opens a fresh, migrated store of dialect d for one test.
func openDialect(t *testing.T, d Dialect) *Store {
	t.Helper()
	var s *Store
	var err error
	switch d {
	case SQLite:
		s, err = Open(filepath.Join(t.TempDir(), "test.db"))
	case Postgres:
		s, err = OpenPostgres(pg.NewDatabase(t))
	}
	if err != nil {
		t.Fatalf("open %s: %v", d, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// eachDialect runs f once per dialect, as subtests named after it; open gives
// f a fresh store of that dialect (call it once per case).
func eachDialect(t *testing.T, f func(t *testing.T, open func(t *testing.T) *Store)) {
	for _, d := range []Dialect{SQLite, Postgres} {
		t.Run(string(d), func(t *testing.T) {
			f(t, func(t *testing.T) *Store { return openDialect(t, d) })
		})
	}
}
