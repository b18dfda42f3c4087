// Package datadir owns the data directory's safety rules, applied at every
// start before the database is touched:
//
//   - one process per directory: an OS file lock (flock; LockFileEx on
//     Windows) on omniroute.lock, held for the process's life and released by
//     the OS even on kill -9. A second instance is told which PID holds it and
//     exits; it never opens, let alone migrates, the database;
//   - a lost database is not a fresh install: a missing or 0-byte
//     omniroute.db beside an existing secret.key means the data was lost or
//     truncated, so the start is refused with a message saying so (starting
//     fresh would silently mint a new default key and break every configured
//     agent). Reset moves the old files aside, never deletes them;
//   - owner-only permissions: the directory 0700 and its files 0600, enforced
//     at every start (an older install or a restore may have left them
//     world-readable).
package datadir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// File names inside the data directory.
const (
	DBFile    = "omniroute.db"
	KeyFile   = "secret.key"
	TokenFile = "management.token"
	LockFile  = "omniroute.lock"
)

// Dir is a locked data directory.
type Dir struct {
	path string
	lock *os.File
	// MovedTo is where Reset moved the old files ("" when nothing was moved).
	MovedTo string
}

// ErrLocked is returned when another process holds the directory.
type ErrLocked struct {
	Dir string
	PID int // 0 when the holder has not written it yet
}

func (e *ErrLocked) Error() string {
	who := "another OmniRoute process"
	if e.PID > 0 {
		who += " (PID " + strconv.Itoa(e.PID) + ")"
	}
	return fmt.Sprintf("the data directory %s is in use by %s; quit it first, or set OMNIROUTE_DATA_DIR to another directory", e.Dir, who)
}

// ErrLostDatabase is returned when secret.key exists but the database does not
// (or is empty).
var ErrLostDatabase = errors.New("lost database")

// Options for Open.
type Options struct {
	// Reset moves the database, key and token aside (into reset-<time>/) and
	// starts fresh. It is the user's explicit answer to ErrLostDatabase.
	Reset bool
	// Now names the reset folder (time.Now by default).
	Now func() time.Time
	// ExternalDatabase says the database lives elsewhere (PostgreSQL): the
	// directory holds only the key, the token and the lock, so a missing
	// omniroute.db is expected, not a lost database.
	ExternalDatabase bool
}

// Open creates (0700) or tightens the directory, takes its lock, applies
// Reset if asked, and refuses a lost database. Close releases the lock.
func Open(path string, o Options) (*Dir, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	if err := os.Chmod(path, 0o700); err != nil {
		return nil, fmt.Errorf("restrict data directory %s to its owner: %w", path, err)
	}
	d := &Dir{path: path}
	if err := d.acquire(); err != nil {
		return nil, err
	}
	if o.Reset {
		if err := d.reset(o.Now()); err != nil {
			d.Close()
			return nil, err
		}
	}
	if !o.ExternalDatabase {
		if err := d.checkDatabase(); err != nil {
			d.Close()
			return nil, err
		}
	}
	if err := d.Tighten(); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// Path is the directory.
func (d *Dir) Path() string { return d.path }

// File is the path of name inside the directory.
func (d *Dir) File(name string) string { return filepath.Join(d.path, name) }

// Close releases the lock.
func (d *Dir) Close() {
	if d.lock != nil {
		unlock(d.lock)
		_ = d.lock.Close()
		d.lock = nil
	}
}

func (d *Dir) acquire() error {
	f, err := os.OpenFile(d.File(LockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open lock file: %w", err)
	}
	if err := tryLock(f); err != nil {
		pid := readPID(f)
		_ = f.Close()
		if errors.Is(err, errWouldBlock) {
			return &ErrLocked{Dir: d.path, PID: pid}
		}
		return fmt.Errorf("lock data directory %s: %w", d.path, err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	_ = f.Sync()
	d.lock = f
	return nil
}

func readPID(f *os.File) int {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	return pid
}

// checkDatabase refuses a database that is gone or empty while its key remains.
func (d *Dir) checkDatabase() error {
	if _, err := os.Stat(d.File(KeyFile)); err != nil {
		return nil // no key: a fresh install (or a key-less one, checked later)
	}
	st, err := os.Stat(d.File(DBFile))
	switch {
	case err == nil && st.Size() > 0:
		return nil
	case err == nil:
		return fmt.Errorf("%w: %s is empty (0 bytes) but %s is there: the database was truncated. "+
			"Restore %s from a backup, or start fresh with `omniroute --reset` (the old files are moved aside, not deleted)",
			ErrLostDatabase, d.File(DBFile), KeyFile, DBFile)
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%w: %s is missing but %s is there: the database was deleted or moved. "+
			"Restore %s from a backup, or start fresh with `omniroute --reset` (the old files are moved aside, not deleted)",
			ErrLostDatabase, d.File(DBFile), KeyFile, DBFile)
	}
	return fmt.Errorf("inspect %s: %w", d.File(DBFile), err)
}

// reset moves the database (with its WAL), key and token into reset-<time>/.
func (d *Dir) reset(now time.Time) error {
	names := []string{DBFile, DBFile + "-wal", DBFile + "-shm", KeyFile, TokenFile}
	var present []string
	for _, n := range names {
		if _, err := os.Lstat(d.File(n)); err == nil {
			present = append(present, n)
		}
	}
	if len(present) == 0 {
		return nil
	}
	dst := d.File("reset-" + now.UTC().Format("20060102T150405.000Z"))
	if err := os.Mkdir(dst, 0o700); err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	for _, n := range present {
		if err := os.Rename(d.File(n), filepath.Join(dst, n)); err != nil {
			return fmt.Errorf("reset: move %s aside: %w", n, err)
		}
	}
	d.MovedTo = dst
	return nil
}

// Tighten makes every known file owner-only (0600). Call it again after the
// database is opened: SQLite creates its -wal and -shm files with the umask.
func (d *Dir) Tighten() error {
	for _, n := range []string{DBFile, DBFile + "-wal", DBFile + "-shm", KeyFile, TokenFile, LockFile} {
		if err := os.Chmod(d.File(n), 0o600); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("restrict %s to its owner: %w", d.File(n), err)
		}
	}
	return nil
}
