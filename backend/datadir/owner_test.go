package datadir

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// ownedBy reports every file as the running user's except the named ones,
// which it reports as uid 65534's (nobody): ownership without root.
func ownedBy(me int, foreign ...string) func(os.FileInfo) (int, bool) {
	return func(fi os.FileInfo) (int, bool) {
		for _, n := range foreign {
			if fi.Name() == n {
				return 65534, true
			}
		}
		return me, true
	}
}

func TestForeignOwnerIsRefused(t *testing.T) {
	const me = 1000
	for _, tc := range []struct {
		name    string
		foreign []string // base names reported as owned by uid 65534; "data" is the directory
		want    string   // in the message; "" = opens
	}{
		{"all mine", nil, ""},
		{"directory", []string{"data"}, "the data directory"},
		{"token", []string{TokenFile}, TokenFile + " in the data directory"},
		{"database", []string{DBFile}, DBFile + " in the data directory"},
		{"wal", []string{DBFile + "-wal"}, DBFile + "-wal in the data directory"},
		{"lock", []string{LockFile}, LockFile + " in the data directory"},
		{"an unknown file is not ours to judge", []string{"notes.txt"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			for _, n := range []string{DBFile, DBFile + "-wal", KeyFile, TokenFile, LockFile, "notes.txt"} {
				write(t, filepath.Join(dir, n), "x", 0o644)
			}
			d, err := Open(dir, Options{EffectiveUID: func() int { return me }, owner: ownedBy(me, tc.foreign...)})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Open = %v, want it to open", err)
				}
				d.Close()
				return
			}
			if !errors.Is(err, ErrForeignOwner) || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), "owned by uid 65534") || !strings.Contains(err.Error(), "runs as uid 1000") ||
				!strings.Contains(err.Error(), "chown -R 1000 "+dir) {
				t.Fatalf("Open = %v\nwant ErrForeignOwner naming %q, both uids and the chown fix", err, tc.want)
			}
			// Refused before anything changed: modes untouched, no lock taken.
			if m := mode(t, filepath.Join(dir, TokenFile)); m != 0o644 {
				t.Errorf("the refusal chmod-ed the token (%o)", m)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, LockFile)); string(b) != "x" {
				t.Error("the refusal wrote the lock file")
			}
		})
	}
}

// TestForeignOwnerForReal chowns the directory to nobody (65534), which needs
// root (CI runs as root); the injected test above covers every case without.
func TestForeignOwnerForReal(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown needs root; TestForeignOwnerIsRefused covers the check")
	}
	for _, target := range []string{"", TokenFile} {
		t.Run("chown "+target, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(dir, TokenFile), "x", 0o600)
			if err := os.Chown(filepath.Join(dir, target), 65534, 65534); err != nil {
				t.Fatal(err)
			}
			_, err := Open(dir, Options{})
			if !errors.Is(err, ErrForeignOwner) || !strings.Contains(err.Error(), "runs as uid "+strconv.Itoa(os.Geteuid())) {
				t.Fatalf("Open = %v, want ErrForeignOwner", err)
			}
		})
	}
}
