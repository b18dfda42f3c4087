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
//   - a database copied without its write-ahead log is not a fresh install
//     either: omniroute.db without tables beside secret.key or
//     management.token is refused (ExpectsSchema; the store checks it), and
//     so is a WAL whose committed transactions SQLite would silently drop
//     (a frame failing its checksum before them: wal.go);
//   - owned by the effective user, as ssh requires of ~/.ssh: a directory or
//     file owned by another user is refused (that user could replace
//     management.token or omniroute.db and take over the gateway);
//   - owner-only permissions: the directory 0700 and its files 0600, enforced
//     at every start (an older install or a restore may have left them
//     world-readable).
package datadir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
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
	// DamagedWAL says, when AcceptDamagedWAL let a damaged WAL through, what
	// was damaged and where the copy of it is ("" otherwise): the caller logs
	// it loudly.
	DamagedWAL string
	// expectsSchema: omniroute.db existed at Open beside secret.key or
	// management.token, so it must hold tables.
	expectsSchema bool
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
	// AcceptDamagedWAL lets a start go on over a damaged WAL (ErrDamagedWAL)
	// with the transactions before the damage, after copying the WAL aside
	// (`omniroute --accept-damaged-wal`): the user's explicit answer.
	AcceptDamagedWAL bool
	// EffectiveUID is the uid the directory and its files must belong to
	// (os.Geteuid by default; tests inject another).
	EffectiveUID func() int
	// owner reads a file's owner uid (fileOwner by default; tests inject one).
	owner func(os.FileInfo) (int, bool)
}

// ErrForeignOwner is returned when the data directory or one of its files is
// owned by another user than the one running OmniRoute.
var ErrForeignOwner = errors.New("data directory not owned by this user")

// Open creates (0700) or tightens the directory, refuses one (or a file in
// it) owned by another user, takes its lock, applies Reset if asked, and
// refuses a lost database or a damaged WAL. Close releases the lock.
func Open(path string, o Options) (*Dir, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.EffectiveUID == nil {
		o.EffectiveUID = effectiveUID
	}
	if o.owner == nil {
		o.owner = fileOwner
	}
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	// Ownership before anything is changed or created in it.
	if err := checkOwners(path, o.EffectiveUID(), o.owner); err != nil {
		return nil, err
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
		err := d.checkDatabase()
		if err == nil {
			err = d.checkWAL(o.AcceptDamagedWAL, func() string { return o.Now().UTC().Format("20060102T150405.000Z") })
		}
		if err != nil {
			d.Close()
			return nil, err
		}
		d.expectsSchema = ExpectsSchemaAt(d.path)
	}
	if err := d.Tighten(); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// Path is the directory.
func (d *Dir) Path() string { return d.path }

// ExpectsSchema reports whether omniroute.db existed at Open beside
// secret.key or management.token: a database with state around it, which
// must hold tables. One without is the 4 KiB header a copy made without its
// WAL leaves (until the first checkpoint every table lives in the WAL), not a
// fresh install; the caller refuses it with NoSchemaError.
func (d *Dir) ExpectsSchema() bool { return d.expectsSchema }

// ErrNoSchema is returned (through NoSchemaError) when the database the data
// directory's key or token go with has no tables.
var ErrNoSchema = errors.New("database without its tables")

// NoSchemaError is the refusal of a database without tables beside the key
// or token: what happened and the ways out.
func (d *Dir) NoSchemaError() error { return NoSchemaError(d.path) }

// ExpectsSchemaAt is ExpectsSchema for a directory that is not opened (and
// locked): the commands that read the database beside a running gateway.
func ExpectsSchemaAt(dir string) bool {
	d := &Dir{path: dir}
	return d.exists(DBFile) && (d.exists(KeyFile) || d.exists(TokenFile))
}

// NoSchemaError is the refusal of the database of the directory dir without
// tables beside its key or token.
func NoSchemaError(dir string) error {
	d := &Dir{path: dir}
	return fmt.Errorf("%w: %s has no tables, but %s or %s is there: the database was copied or restored without its write-ahead log "+
		"(%s, where SQLite keeps recent writes until a checkpoint moves them into %s). Nothing was changed. "+
		"Restore %s together with %s from the same copy, or start fresh with `omniroute --reset` (the old files are moved aside, not deleted)",
		ErrNoSchema, d.File(DBFile), KeyFile, TokenFile, DBFile+"-wal", DBFile, DBFile, DBFile+"-wal")
}

func (d *Dir) exists(name string) bool {
	_, err := os.Stat(d.File(name))
	return err == nil
}

// checkOwners refuses a directory, or one of its known files, that another
// user owns: that user could replace the token or the database. uid < 0
// (no uids on this platform) skips the check.
func checkOwners(dir string, uid int, owner func(os.FileInfo) (int, bool)) error {
	if uid < 0 {
		return nil
	}
	names := []string{"", DBFile, DBFile + "-wal", DBFile + "-shm", KeyFile, TokenFile, LockFile}
	for _, n := range names {
		p := filepath.Join(dir, n)
		fi, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("inspect %s: %w", p, err)
		}
		got, ok := owner(fi)
		if !ok || got == uid {
			continue
		}
		what := "the data directory " + p
		if n != "" {
			what = p + " in the data directory"
		}
		return fmt.Errorf("%w: %s is owned by uid %d, but OmniRoute runs as uid %d: that user could replace its files "+
			"(management.token, omniroute.db) and take over the gateway. Run OmniRoute as the owner, or give the directory "+
			"to this user (as root: `chown -R %d %s`), or set OMNIROUTE_DATA_DIR to a directory of your own",
			ErrForeignOwner, what, got, uid, uid, dir)
	}
	return nil
}

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
// On Windows mode bits only toggle "read-only" (the profile directory's ACL is
// what keeps other users out), and changing them on the open database fails
// with a sharing violation, so there is nothing to do.
func (d *Dir) Tighten() error {
	if runtime.GOOS == "windows" {
		return nil
	}
	for _, n := range []string{DBFile, DBFile + "-wal", DBFile + "-shm", KeyFile, TokenFile, LockFile} {
		if err := os.Chmod(d.File(n), 0o600); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("restrict %s to its owner: %w", d.File(n), err)
		}
	}
	return nil
}
