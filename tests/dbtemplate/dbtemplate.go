// Package dbtemplate makes a migrated SQLite database once per test binary
// and writes a copy of it wherever a test wants a fresh database: applying
// every migration to an empty file costs about 0.2 s of CPU under the race
// detector (the SQLite engine is transpiled Go), copying the file nothing.
//
// A copy is the file store.Open leaves: every migration applied and no row
// beyond schema_migrations, checkpointed (no WAL beside it). What a first
// start does past the schema (the key, the token, the default settings and
// API key) still happens in each test. The migrations themselves stay
// covered by the tests that open an empty file (backend/store's, the e2e
// and hostile suites' built binary).
package dbtemplate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"omniroute/backend/store"
)

// SQLite is a migrated database file's bytes.
type SQLite struct {
	file []byte
}

// New migrates an empty SQLite file in a temporary directory and keeps its
// bytes.
func New() (*SQLite, error) {
	dir, err := os.MkdirTemp("", "omniroute-dbtemplate-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "template.db")
	st, err := store.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dbtemplate: migrate: %w", err)
	}
	if err := st.Close(); err != nil { // checkpoints the WAL into the file
		return nil, fmt.Errorf("dbtemplate: close: %w", err)
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		return nil, errors.New("dbtemplate: the WAL was not checkpointed into the file")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return &SQLite{file: b}, nil
}

// TB is the part of testing.TB WriteTo uses.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// WriteTo writes a copy of the migrated database at path (owner-only, as
// the gateway keeps its files), creating its directory; path must not exist.
func (s *SQLite) WriteTo(t TB, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatalf("dbtemplate: %v", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatalf("dbtemplate: %v", err)
	}
	_, err = f.Write(s.file)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("dbtemplate: write %s: %v", path, err)
	}
}
