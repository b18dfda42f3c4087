//go:build !windows

// Symlinks need privileges on Windows, so this test runs elsewhere only.

package agents

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestSetupFollowsSymlink(t *testing.T) {
	m, home := newTestManager(t, nil)
	real := filepath.Join(home, "dotfiles", "claude-settings.json")
	orig := "{\"model\": \"opus\"}\n"
	writeFile(t, real, []byte(orig), 0o644)
	link := filepath.Join(home, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Setup("claude-code"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("symlink replaced: %v", err)
	}
	if got := jsonPath(t, readFile(t, real), "env", "ANTHROPIC_AUTH_TOKEN"); got != testKey {
		t.Errorf("target not updated: %v", got)
	}
	if _, err := m.Undo("claude-code"); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, real); string(got) != orig {
		t.Errorf("undo target: %s", got)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("symlink replaced by undo: %v", err)
	}
}
