// Package store persists connections, keys, settings and resilience state in
// SQLite (GORM over the pure-Go glebarez driver) and applies the embedded
// numbered migrations at start.
package store

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/glebarez/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"omniroute/migrations"
)

// ErrNotFound is returned when a looked-up row does not exist.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned when a unique constraint rejects a write.
var ErrConflict = errors.New("conflict")

// ErrSchemaTooNew is returned when the database was migrated by a newer binary.
var ErrSchemaTooNew = errors.New("database schema is newer than this binary")

// Store is the gateway's database handle.
type Store struct {
	db *gorm.DB
}

// Open opens (creating if needed) the SQLite database at path in WAL mode with a
// single connection, so there is exactly one writer, and applies migrations.
func Open(path string) (*Store, error) {
	dsn := path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"
	db, err := gorm.Open(sqlite.Open(dsn), &gorm.Config{
		Logger:                 logger.Discard,
		SkipDefaultTransaction: true,
		NowFunc:                func() time.Time { return time.Now().UTC() },
	})
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	sqlDB.SetMaxOpenConns(1)
	sqlDB.SetMaxIdleConns(1)
	s := &Store{db: db}
	if err := s.migrate(migrations.Files); err != nil {
		_ = sqlDB.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

// DB exposes the GORM handle to the repositories of this package's callers' tests.
func (s *Store) DB() *gorm.DB { return s.db }

type migration struct {
	version int
	name    string
	sql     string
}

func loadMigrations(files fs.FS) ([]migration, error) {
	names, err := fs.Glob(files, "*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, n := range names {
		num, _, ok := strings.Cut(filepath.Base(n), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %q: name must start with a positive number and '_'", n)
		}
		body, err := fs.ReadFile(files, n)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: n, sql: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i := 1; i < len(out); i++ {
		if out[i].version == out[i-1].version {
			return nil, fmt.Errorf("two migrations numbered %d", out[i].version)
		}
	}
	return out, nil
}

// migrate applies every migration newer than the recorded version, each in its
// own transaction, and refuses a database whose version this binary does not know.
func (s *Store) migrate(files fs.FS) error {
	all, err := loadMigrations(files)
	if err != nil {
		return err
	}
	if err := s.db.Exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`).Error; err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	var current int
	if err := s.db.Raw(`SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current).Error; err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	known := 0
	if len(all) > 0 {
		known = all[len(all)-1].version
	}
	if current > known {
		return fmt.Errorf("%w: the database is at schema version %d but this OmniRoute knows only up to %d; install a newer OmniRoute or point OMNIROUTE_DATA_DIR elsewhere", ErrSchemaTooNew, current, known)
	}
	for _, m := range all {
		if m.version <= current {
			continue
		}
		err := s.db.Transaction(func(tx *gorm.DB) error {
			for _, stmt := range splitStatements(m.sql) {
				if err := tx.Exec(stmt).Error; err != nil {
					return fmt.Errorf("%s: %w", m.name, err)
				}
			}
			return tx.Exec(`INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)`,
				m.version, m.name, time.Now().UnixMilli()).Error
		})
		if err != nil {
			return fmt.Errorf("apply migration: %w", err)
		}
	}
	return nil
}

// SchemaVersion returns the highest applied migration.
func (s *Store) SchemaVersion() (int, error) {
	var v int
	err := s.db.Raw(`SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v).Error
	return v, err
}

// splitStatements splits a migration on ';' at line ends, dropping comment lines.
func splitStatements(sql string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(sql, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(t, ";") {
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		}
	}
	if strings.TrimSpace(cur.String()) != "" {
		out = append(out, strings.TrimSpace(cur.String()))
	}
	return out
}

func isUniqueViolation(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "unique constraint")
}
