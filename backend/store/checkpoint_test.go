package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// copyMain copies only the main database file, as a single-file backup or a
// sync tool would (no -wal), and returns the copy's path.
func copyMain(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

// Until a checkpoint every table lives in the WAL: a copy of the main file
// has none, and with RequireSchema it is refused, not migrated into a fresh
// install. After Checkpoint the main file alone is the whole database.
func TestCheckpointMakesTheMainFileSelfContained(t *testing.T) {
	s, path := openTemp(t)
	if err := s.SetValue("settings", "general", `{"a":1}`); err != nil {
		t.Fatal(err)
	}

	early := copyMain(t, path)
	if _, err := OpenWith(early, OpenOptions{RequireSchema: true}); !errors.Is(err, ErrNoSchema) {
		t.Fatalf("OpenWith(a WAL-less copy, RequireSchema) = %v, want ErrNoSchema", err)
	}
	// The refusal migrated nothing: still no tables (a plain Open would make them).
	if _, err := OpenWith(early, OpenOptions{RequireSchema: true}); !errors.Is(err, ErrNoSchema) {
		t.Fatalf("second OpenWith = %v, want ErrNoSchema again", err)
	}

	if err := s.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path + "-wal"); err != nil || st.Size() != 0 {
		t.Fatalf("WAL after a TRUNCATE checkpoint: %v, %v; want 0 bytes", st, err)
	}
	late, err := OpenWith(copyMain(t, path), OpenOptions{RequireSchema: true})
	if err != nil {
		t.Fatalf("a copy after Checkpoint: %v", err)
	}
	defer late.Close()
	if v, ok, err := late.GetValue("settings", "general"); err != nil || !ok || v != `{"a":1}` {
		t.Fatalf("the copy after Checkpoint holds %q %v %v, want the value", v, ok, err)
	}
}

// A fresh file (no state around it) is migrated as before.
func TestOpenWithoutRequireSchemaMigratesAnEmptyFile(t *testing.T) {
	s, err := OpenWith(filepath.Join(t.TempDir(), "new.db"), OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.SchemaVersion(); err != nil || v == 0 {
		t.Fatalf("SchemaVersion = %d, %v", v, err)
	}
}

// Close checkpoints: the main file alone holds what was written.
func TestCloseLeavesTheMainFileSelfContained(t *testing.T) {
	s, path := openTemp(t)
	if err := s.SetValue("settings", "general", `{"a":2}`); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := OpenWith(copyMain(t, path), OpenOptions{RequireSchema: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if v, ok, _ := c.GetValue("settings", "general"); !ok || v != `{"a":2}` {
		t.Fatalf("after Close the main file holds %q %v", v, ok)
	}
}
