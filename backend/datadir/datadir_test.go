package datadir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, path, s string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

func TestSecondOpenIsRefusedWithThePID(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir, Options{})
	var locked *ErrLocked
	if !errors.As(err, &locked) || locked.PID != os.Getpid() {
		t.Fatalf("second Open = %v, want ErrLocked naming PID %d", err, os.Getpid())
	}
	if !strings.Contains(err.Error(), "in use") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("message %q does not say the directory is in use", err)
	}
	d.Close()
	d2, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("Open after Close = %v", err)
	}
	d2.Close()
}

func TestLostDatabaseIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(dir string)
		want  string
	}{
		{"empty", func(dir string) { write(t, filepath.Join(dir, DBFile), "", 0o600) }, "empty (0 bytes)"},
		{"missing", func(string) {}, "missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, KeyFile), "k", 0o600)
			tc.setup(dir)
			_, err := Open(dir, Options{})
			if !errors.Is(err, ErrLostDatabase) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--reset") {
				t.Fatalf("Open = %v, want ErrLostDatabase saying %q and naming --reset", err, tc.want)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, KeyFile)); string(b) != "k" {
				t.Fatal("the refusal touched secret.key")
			}
			// The refusal released the lock: a --reset start works at once.
			now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			d, err := Open(dir, Options{Reset: true, Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			want := filepath.Join(dir, "reset-20260102T030405.000Z")
			if d.MovedTo != want {
				t.Fatalf("MovedTo = %q, want %q", d.MovedTo, want)
			}
			if b, _ := os.ReadFile(filepath.Join(want, KeyFile)); string(b) != "k" {
				t.Fatal("the old key was not moved aside intact")
			}
			if _, err := os.Stat(filepath.Join(dir, KeyFile)); !errors.Is(err, os.ErrNotExist) {
				t.Fatal("the old key is still in place after --reset")
			}
		})
	}
}

func TestHealthyDirectoryOpens(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, KeyFile), "k", 0o600)
	write(t, filepath.Join(dir, DBFile), "SQLite format 3\x00", 0o600)
	d, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
}

func TestPermissionsAreTightenedAtEveryStart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{DBFile, DBFile + "-wal", DBFile + "-shm", KeyFile, TokenFile} {
		write(t, filepath.Join(dir, n), "x", 0o644)
	}
	d, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if m := mode(t, dir); m != 0o700 {
		t.Errorf("data dir mode %o, want 700", m)
	}
	for _, n := range []string{DBFile, DBFile + "-wal", DBFile + "-shm", KeyFile, TokenFile, LockFile} {
		if m := mode(t, filepath.Join(dir, n)); m != 0o600 {
			t.Errorf("%s mode %o, want 600", n, m)
		}
	}
}
