package agents

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Backups and the created-marker form an undo stack per config file:
//
//	<path>.omniroute-backup-<stamp>[-<n>]   copy of the file before a Setup
//	<path>.omniroute-created                 Setup created the file; holds its stamp
//
// Each entry has a key (stamp, n) that is strictly greater than every key
// that existed when it was made, so Undo pops the newest one even if the
// clock goes backwards.
const (
	backupInfix   = ".omniroute-backup-"
	createdSuffix = ".omniroute-created"
	stampLayout   = "20060102T150405.000000000Z"
)

// undoKey orders undo entries.
type undoKey struct {
	stamp string // fixed-width UTC timestamp (stampLayout)
	n     int
}

func (k undoKey) less(o undoKey) bool {
	if k.stamp != o.stamp {
		return k.stamp < o.stamp
	}
	return k.n < o.n
}

func (k undoKey) String() string {
	if k.n == 0 {
		return k.stamp
	}
	return k.stamp + "-" + strconv.Itoa(k.n)
}

// parseUndoKey parses "<stamp>[-<n>]"; ok is false for foreign names.
func parseUndoKey(s string) (undoKey, bool) {
	if len(s) < len(stampLayout) {
		return undoKey{}, false
	}
	stamp, rest := s[:len(stampLayout)], s[len(stampLayout):]
	if _, err := time.Parse(stampLayout, stamp); err != nil {
		return undoKey{}, false
	}
	if rest == "" {
		return undoKey{stamp: stamp}, true
	}
	if !strings.HasPrefix(rest, "-") {
		return undoKey{}, false
	}
	n, err := strconv.Atoi(rest[1:])
	if err != nil || n <= 0 || strconv.Itoa(n) != rest[1:] {
		return undoKey{}, false
	}
	return undoKey{stamp: stamp, n: n}, true
}

// undoEntry is one backup file or the created-marker of a config path.
type undoEntry struct {
	key    undoKey
	path   string // backup or marker file
	marker bool
}

// undoEntries lists the undo stack of path, oldest first.
func undoEntries(path string) []undoEntry {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []undoEntry
	prefix := base + backupInfix
	for _, de := range des {
		name := de.Name()
		switch {
		case strings.HasPrefix(name, prefix) && de.Type().IsRegular():
			if k, ok := parseUndoKey(name[len(prefix):]); ok {
				out = append(out, undoEntry{key: k, path: filepath.Join(dir, name)})
			}
		case name == base+createdSuffix && de.Type().IsRegular():
			p := filepath.Join(dir, name)
			var k undoKey // unreadable marker: oldest
			if b, err := os.ReadFile(p); err == nil {
				if pk, ok := parseUndoKey(strings.TrimSpace(string(b))); ok {
					k = pk
				}
			}
			out = append(out, undoEntry{key: k, path: p, marker: true})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].key.less(out[j].key) })
	return out
}

// nextUndoKey returns a key newer than every existing entry of path.
func nextUndoKey(path string, now time.Time) undoKey {
	k := undoKey{stamp: now.UTC().Format(stampLayout)}
	if es := undoEntries(path); len(es) > 0 {
		if top := es[len(es)-1].key; !top.less(k) {
			k = undoKey{stamp: top.stamp, n: top.n + 1}
		}
	}
	return k
}

// resolveTarget returns the file that writes to path should go to: path
// itself, or the target of a symlink (so dotfile-managed links survive).
func resolveTarget(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return path, nil
	}
	t, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("agents: %s is a broken symlink: %w", path, err)
	}
	return t, nil
}

// readConfig reads path (following symlinks); exists is false when it is
// missing.
func readConfig(path string) (data []byte, mode fs.FileMode, exists bool, err error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, false, fmt.Errorf("agents: %s is not a regular file", path)
	}
	data, err = os.ReadFile(path)
	if err != nil {
		return nil, 0, false, err
	}
	return data, fi.Mode().Perm(), true, nil
}

// writeAtomic writes data to path via a temp file in the same directory and
// a rename, creating missing parent directories with mode 0700.
func writeAtomic(path string, data []byte, mode fs.FileMode) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".omniroute-tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(mode); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// writeNew creates path exclusively with data and mode (mode is applied
// regardless of umask).
func writeNew(path string, data []byte, mode fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr, os.Chmod(path, mode)); err != nil {
		_ = os.Remove(path)
		return err
	}
	return nil
}

// setupFile applies s to the config file at path with backup/marker
// bookkeeping. The caller holds m.mu.
func (m *Manager) setupFile(s *spec, path string) (Result, error) {
	res := Result{Agent: s.id, Path: path}
	target, err := resolveTarget(path)
	if err != nil {
		return Result{}, err
	}
	old, mode, exists, err := readConfig(target)
	if err != nil {
		return Result{}, err
	}
	data, err := s.apply(&m.o, old, exists)
	if err != nil {
		return Result{}, fmt.Errorf("%w: %s: %v; the file was not changed", ErrUnsupportedConfig, path, err)
	}
	if exists && bytes.Equal(old, data) {
		// Already configured: nothing to back up. Tighten a loose mode on a
		// file that holds the key.
		if mode&0o077 != 0 && bytes.Contains(data, []byte(m.o.APIKey)) {
			if err := os.Chmod(target, 0o600); err != nil {
				return Result{}, err
			}
		}
		return res, nil
	}
	key := nextUndoKey(path, m.o.Now())
	if exists {
		bmode := mode
		if bytes.Contains(old, []byte(m.o.APIKey)) {
			bmode = 0o600
		}
		backup := path + backupInfix + key.String()
		if err := writeNew(backup, old, bmode); err != nil {
			return Result{}, fmt.Errorf("agents: writing backup: %w", err)
		}
		if err := writeAtomic(target, data, 0o600); err != nil {
			_ = os.Remove(backup)
			return Result{}, err
		}
		res.BackupPath, res.Changed = backup, true
		return res, nil
	}
	if err := writeAtomic(target, data, 0o600); err != nil {
		return Result{}, err
	}
	marker := path + createdSuffix
	_ = os.Remove(marker) // stale marker of a file the user deleted
	if err := writeNew(marker, []byte(key.String()+"\n"), 0o600); err != nil {
		_ = os.Remove(target)
		return Result{}, fmt.Errorf("agents: writing created-marker: %w", err)
	}
	res.Created, res.Changed = true, true
	return res, nil
}

// fileConfigured reports whether the file at path exists and points at the gateway.
func fileConfigured(s *spec, o *Options, path string) bool {
	if path == "" {
		return false
	}
	data, _, exists, err := readConfig(path)
	return err == nil && exists && s.configured(o, data)
}

// checkApply runs s.apply on path's current content without writing, so a
// two-file Setup can refuse before it changes either file.
func (m *Manager) checkApply(s *spec, path string) error {
	target, err := resolveTarget(path)
	if err != nil {
		return err
	}
	old, _, exists, err := readConfig(target)
	if err != nil {
		return err
	}
	if _, err := s.apply(&m.o, old, exists); err != nil {
		return fmt.Errorf("%w: %s: %v; no file was changed", ErrUnsupportedConfig, path, err)
	}
	return nil
}

// undoFile pops the newest undo entry of path. The caller holds m.mu.
func undoFile(id, path string) (Result, error) {
	es := undoEntries(path)
	if len(es) == 0 {
		return Result{}, fmt.Errorf("%w: no backup of %s", ErrNothingToUndo, path)
	}
	top := es[len(es)-1]
	res := Result{Agent: id, Path: path, Changed: true}
	if top.marker {
		// Remove the path itself: if the user has since replaced it with a
		// symlink, its target is theirs, not OmniRoute's.
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Result{}, err
		}
		if err := os.Remove(top.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Result{}, err
		}
		res.Created = true
		return res, nil
	}
	target, err := resolveTarget(path)
	if err != nil {
		return Result{}, err
	}
	fi, err := os.Stat(top.path)
	if err != nil {
		return Result{}, err
	}
	data, err := os.ReadFile(top.path)
	if err != nil {
		return Result{}, err
	}
	if err := writeAtomic(target, data, fi.Mode().Perm()); err != nil {
		return Result{}, err
	}
	if err := os.Remove(top.path); err != nil {
		return Result{}, err
	}
	res.BackupPath = top.path
	return res, nil
}
