// Package store persists connections, keys, settings and resilience state in
// SQLite (GORM over the pure-Go glebarez driver, the desktop default) or in a
// shared PostgreSQL database (GORM's pgx driver, for several instances), and
// applies the embedded numbered migrations of its dialect at start.
package store

import (
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/glebarez/sqlite"
	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"omniroute/migrations"
)

// Dialect names the database behind a Store.
type Dialect string

// Dialects.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// migrateLockKey is the PostgreSQL advisory lock held while migrating, so that
// instances starting together migrate once ("omni" in ASCII).
const migrateLockKey = 0x6f6d6e69

// ErrBadDatabaseURL is returned for an OMNIROUTE_DATABASE_URL that is not a
// postgres:// or postgresql:// URL.
var ErrBadDatabaseURL = errors.New("OMNIROUTE_DATABASE_URL must be a postgres:// or postgresql:// URL")

// ErrNotFound is returned when a looked-up row does not exist.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned when a unique constraint rejects a write.
var ErrConflict = errors.New("conflict")

// ErrSchemaTooNew is returned when the database was migrated by a newer binary.
var ErrSchemaTooNew = errors.New("database schema is newer than this binary")

// Store is the gateway's database handle.
type Store struct {
	db      *gorm.DB
	dialect Dialect
	dsn     string      // the PostgreSQL URL (for the change listener); "" for SQLite
	logs    *logWriter  // SQLite: the request log's own connection; nil on PostgreSQL or when it did not open
	logsErr error       // SQLite: why logs is nil
	closed  atomic.Bool // Close ran: a second Close does nothing
	// fullSince is when writes began failing for a full disk (unix ms; 0:
	// the last write succeeded): DiskFullSince, diskfull.go.
	fullSince atomic.Int64
	// downSince is when statements began failing because a shared database
	// did not answer (unix ms; 0: the last one reached it); reachedAt is
	// when one last reached it.
	downSince, reachedAt atomic.Int64
}

func gormConfig() *gorm.Config {
	return &gorm.Config{
		Logger:                 logger.Discard,
		SkipDefaultTransaction: true,
		NowFunc:                func() time.Time { return time.Now().UTC() },
	}
}

// pageCacheKiB bounds SQLite's page cache (PRAGMA cache_size, in KiB; SQLite's
// default is 2,000). The hot pages are few: the request log's newest leaf and
// index pages and the small configuration tables; a scan of the log misses a
// cache of either size. Every KiB of cache filled stays resident (SQLite's
// allocator keeps it), so at 1,000 req/s the default cost ≈ 3 MiB of RSS more
// (docs/BENCHMARKS.md, issue 19). Each of the store's two connections has its
// own cache of this bound; the request log's writer fills only a few pages of
// it (the log's newest leaf, the rollup's cells of the batch).
const pageCacheKiB = 512

// sqlitePragmas are the PRAGMAs every SQLite connection of a store runs when
// it opens: the GORM connection through its DSN, the request log's writer
// (sqlitelog.go) directly.
func sqlitePragmas() []string {
	return []string{"journal_mode(WAL)", "busy_timeout(10000)", "foreign_keys(1)", "synchronous(NORMAL)",
		"cache_size(" + strconv.Itoa(-pageCacheKiB) + ")"}
}

// sqliteDSN is the GORM connection's DSN for the file at path: the PRAGMAs,
// and every transaction begun IMMEDIATE, so that it waits (busy_timeout) for
// the request log's writer rather than failing with SQLITE_BUSY should it
// read before it writes.
func sqliteDSN(path string) string {
	var q []string
	for _, p := range sqlitePragmas() {
		q = append(q, "_pragma="+p)
	}
	q = append(q, "_txlock=immediate")
	return path + "?" + strings.Join(q, "&")
}

// Open opens (creating if needed) the SQLite database at path in WAL mode
// and applies migrations. The store has one GORM connection, and once
// migrated a second one of its own for the request log's batches
// (sqlitelog.go); should that one not open, RequestLogFallback says why and
// the batches go through GORM's.
func Open(path string) (*Store, error) {
	return open(path, OpenOptions{}, openLogWriter)
}

// OpenOptions tune OpenWith.
type OpenOptions struct {
	// RequireSchema refuses (ErrNoSchema), before migrating anything, a
	// database without tables: the caller knows state exists around it (a
	// key, a token), so an empty database is one copied without its WAL,
	// not a fresh install.
	RequireSchema bool
}

// ErrNoSchema is returned by OpenWith with RequireSchema for a database
// without tables.
var ErrNoSchema = errors.New("the database has no tables")

// OpenWith is Open with options.
func OpenWith(path string, o OpenOptions) (*Store, error) {
	return open(path, o, openLogWriter)
}

// open is OpenWith with the request log's writer opened by openLog.
func open(path string, o OpenOptions, openLog func(path, file string) (*logWriter, error)) (*Store, error) {
	if o.RequireSchema {
		n, err := countTables(path)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, ErrNoSchema
		}
	}
	db, err := gorm.Open(sqlite.Open(sqliteDSN(path)), gormConfig())
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	sqlDB.SetMaxOpenConns(1)
	sqlDB.SetMaxIdleConns(1)
	s := &Store{db: db, dialect: SQLite}
	if err := s.watchDiskFull(); err != nil {
		_ = sqlDB.Close()
		return nil, err
	}
	if err := s.migrate(migrations.Files); err != nil {
		_ = sqlDB.Close()
		return nil, err
	}
	var file string
	if err := db.Raw(`SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&file).Error; err != nil {
		_ = sqlDB.Close()
		return nil, err
	}
	if mainHoldsTables(file) {
		// Closed as the database's last connection, the migrating one
		// checkpoints the WAL into the main file: only once the main file
		// has been checkpointed before, because a copy of the main file alone
		// taken before the first checkpoint must keep having no tables
		// (refused, not started as a fresh install).
		dropIdleConn(sqlDB)
	}
	s.logs, s.logsErr = openLog(path, file)
	if s.logsErr != nil {
		s.logs = nil
	}
	return s, nil
}

// dropIdleConn closes the pool's idle connection (the one that ran the
// migrations); the next statement opens a fresh one with the same DSN. The
// migrating connection holds every page the migrations wrote in its page
// cache and the schema as parsed along the way: closed, SQLite's allocator
// gives that memory back (≈ 2 MiB of idle RSS with 19 migrations,
// docs/BENCHMARKS.md), and the fresh connection caches only the pages the
// gateway reads.
func dropIdleConn(sqlDB *sql.DB) {
	sqlDB.SetMaxIdleConns(0)
	sqlDB.SetMaxIdleConns(1)
}

// mainHoldsTables reports whether the SQLite main file at path (without its
// WAL) holds more than its header page: it was checkpointed once, so its
// tables are in it.
func mainHoldsTables(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var h [100]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return false
	}
	st, err := f.Stat()
	if err != nil {
		return false
	}
	page := int64(binary.BigEndian.Uint16(h[16:18]))
	if page == 1 {
		page = 65536
	}
	return page >= 512 && st.Size() >= 2*page
}

// countTables counts the tables of the SQLite file at path on a connection
// of its own that sets no journal mode: unlike the store's
// (journal_mode=WAL), it writes nothing, not even the header of a 0-byte
// file, so a refusal leaves the file as it was. It waits for a writer of
// another process (busy_timeout) as the store's connection does.
func countTables(path string) (int, error) {
	db, err := gorm.Open(sqlite.Open(path+"?_pragma=busy_timeout(10000)"), gormConfig())
	if err != nil {
		return 0, fmt.Errorf("open database %s: %w", path, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return 0, err
	}
	defer sqlDB.Close()
	var n int
	if err := db.Raw(`SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'`).Scan(&n).Error; err != nil {
		return 0, fmt.Errorf("read the schema of %s: %w", path, err)
	}
	return n, nil
}

// RequestLogFallback reports why, on SQLite, request-log batches go through
// the GORM connection (database/sql and the driver, several times the CPU
// per row) instead of the store's own writer connection: nil when they do
// not, and on PostgreSQL, where database/sql is the only path.
func (s *Store) RequestLogFallback() error { return s.logsErr }

// ValidDatabaseURL checks that rawURL names a PostgreSQL database.
func ValidDatabaseURL(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return ErrBadDatabaseURL
	}
	return nil
}

// OpenPostgres connects to the PostgreSQL database at rawURL (postgres://…)
// with a small connection pool and applies the PostgreSQL migrations under an
// advisory lock: several instances may share the database and start together.
func OpenPostgres(rawURL string) (*Store, error) {
	if err := ValidDatabaseURL(rawURL); err != nil {
		return nil, err
	}
	db, err := gorm.Open(postgres.Open(withConnectTimeout(rawURL)), gormConfig())
	if err != nil {
		msg := errors.New("connect to PostgreSQL (OMNIROUTE_DATABASE_URL): " + redactErr(err, rawURL))
		if IsUnreachable(err) {
			return nil, &unavailableError{err: msg} // a caller may wait and retry (--wait-for-db)
		}
		return nil, msg
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	sqlDB.SetMaxOpenConns(16)
	sqlDB.SetMaxIdleConns(8)
	sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	s := &Store{db: db, dialect: Postgres, dsn: withConnectTimeout(rawURL)}
	if err := s.watchDiskFull(); err != nil {
		_ = sqlDB.Close()
		return nil, err
	}
	if err := s.migrate(migrations.Postgres()); err != nil {
		_ = sqlDB.Close()
		return nil, err
	}
	return s, nil
}

// defaultConnectTimeout bounds a connection attempt when the URL does not:
// without it an unreachable server would hold a caller for the operating
// system's TCP timeout (minutes), and some callers are on the request path.
const defaultConnectTimeout = "5"

// withConnectTimeout adds connect_timeout to a URL that has none.
func withConnectTimeout(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL
	}
	q := u.Query()
	if q.Get("connect_timeout") != "" {
		return rawURL
	}
	q.Set("connect_timeout", defaultConnectTimeout)
	u.RawQuery = q.Encode()
	return u.String()
}

// redactErr keeps a connection error's text without the URL's password.
func redactErr(err error, rawURL string) string {
	msg := err.Error()
	if u, perr := url.Parse(rawURL); perr == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "***")
		}
	}
	return msg
}

// Dialect says which database this store uses.
func (s *Store) Dialect() Dialect { return s.dialect }

// Shared reports whether other instances may write the same database (it is
// PostgreSQL), so in-memory views must follow their changes.
func (s *Store) Shared() bool { return s.dialect == Postgres }

// bind rewrites a raw statement's ? placeholders for the dialect (database/sql
// statements prepared outside GORM; GORM rewrites its own). The statements
// passed here hold no literal question marks.
func (s *Store) bind(sql string) string {
	if s.dialect != Postgres {
		return sql
	}
	var b strings.Builder
	n := 0
	for _, r := range sql {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Close closes the database: on SQLite the request log's connection first
// (its statements finalised), then a TRUNCATE checkpoint on GORM's, so that
// omniroute.db alone holds every write (a copy of it is complete) and a
// checkpoint that could not finish is an error, not a silence; then GORM's
// connection, the last one, whose close removes the WAL.
func (s *Store) Close() error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	var lerr, cerr error
	if s.logs != nil {
		lerr = s.logs.close()
	}
	if s.dialect == SQLite && !s.closed.Swap(true) {
		cerr = s.Checkpoint()
	}
	return errors.Join(lerr, cerr, sqlDB.Close())
}

// ErrCheckpointBusy is returned when a checkpoint could not copy the whole
// WAL into the database file (a reader or writer held it past busy_timeout).
var ErrCheckpointBusy = errors.New("checkpoint incomplete: the database was busy")

// Checkpoint copies the WAL into omniroute.db and truncates it (PRAGMA
// wal_checkpoint(TRUNCATE)), so the main file is self-contained: a copy of
// it alone (a single-file backup, a sync tool) is the whole database. Until
// a checkpoint every write since the last one lives only in the WAL. A no-op
// on PostgreSQL.
func (s *Store) Checkpoint() error {
	if s.dialect != SQLite {
		return nil
	}
	var r struct{ Busy, Log, Checkpointed int }
	if err := s.db.Raw(`PRAGMA wal_checkpoint(TRUNCATE)`).Row().Scan(&r.Busy, &r.Log, &r.Checkpointed); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if r.Busy != 0 {
		return fmt.Errorf("%w (%d of %d WAL frames copied)", ErrCheckpointBusy, r.Checkpointed, r.Log)
	}
	return nil
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

// migrate applies every embedded migration not yet recorded in
// schema_migrations, in number order, each in its own transaction, and
// refuses a database whose newest version this binary does not know. It goes
// by the recorded set, not the highest number: a migration numbered below one
// already applied (two branches merged in either order) is still applied. On
// PostgreSQL it holds a session advisory lock on one pooled connection
// throughout, so of several instances starting together one migrates and the
// others wait, then find nothing left to apply.
func (s *Store) migrate(files fs.FS) error {
	if s.dialect != Postgres {
		return s.migrateOn(s.db, files)
	}
	return s.db.Connection(func(conn *gorm.DB) error {
		if err := conn.Exec(`SELECT pg_advisory_lock(?)`, migrateLockKey).Error; err != nil {
			return fmt.Errorf("take the migration lock: %w", err)
		}
		defer conn.Exec(`SELECT pg_advisory_unlock(?)`, migrateLockKey)
		return s.migrateOn(conn, files)
	})
}

func (s *Store) migrateOn(db *gorm.DB, files fs.FS) error {
	all, err := loadMigrations(files)
	if err != nil {
		return err
	}
	if err := db.Exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`).Error; err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	var recorded []int
	if err := db.Raw(`SELECT version FROM schema_migrations`).Scan(&recorded).Error; err != nil {
		return fmt.Errorf("read schema versions: %w", err)
	}
	applied := make(map[int]bool, len(recorded))
	current := 0
	for _, v := range recorded {
		applied[v] = true
		current = max(current, v)
	}
	known := 0
	if len(all) > 0 {
		known = all[len(all)-1].version
	}
	if current > known {
		where := "point OMNIROUTE_DATA_DIR elsewhere"
		if s.dialect == Postgres {
			where = "point OMNIROUTE_DATABASE_URL at another database"
		}
		return fmt.Errorf("%w: the database is at schema version %d but this OmniRoute knows only up to %d; install a newer OmniRoute or %s", ErrSchemaTooNew, current, known, where)
	}
	for _, m := range all {
		if applied[m.version] {
			continue
		}
		err := db.Transaction(func(tx *gorm.DB) error {
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

// isUniqueViolation reports a write rejected by a unique index: SQLSTATE 23505
// in PostgreSQL, "UNIQUE constraint failed" in SQLite.
func isUniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505"
	}
	return strings.Contains(strings.ToLower(err.Error()), "unique constraint")
}
