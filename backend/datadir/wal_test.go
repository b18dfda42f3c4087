package datadir

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/glebarez/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// crashedCopy writes a WAL database of commits one-row transactions with
// automatic checkpoints off, and copies omniroute.db and its WAL while the
// connection is still open: the state a kill -9 leaves (every row in the
// WAL). It returns the copy's directory, which holds a secret.key too.
func crashedCopy(t *testing.T, commits int) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "src.db")
	db, err := gorm.Open(sqlite.Open(src+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)"), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := db.DB()
	sqlDB.SetMaxOpenConns(1)
	defer sqlDB.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.Exec(`CREATE TABLE keys (id INTEGER PRIMARY KEY, v TEXT)`).Error)
	for i := range commits {
		must(db.Exec(`INSERT INTO keys (v) VALUES (?)`, strings.Repeat("k", 100+i)).Error)
	}
	dir := filepath.Join(t.TempDir(), "data")
	must(os.Mkdir(dir, 0o700))
	for _, n := range []string{"", "-wal"} {
		b, err := os.ReadFile(src + n)
		must(err)
		must(os.WriteFile(filepath.Join(dir, DBFile+n), b, 0o600))
	}
	write(t, filepath.Join(dir, KeyFile), "k", 0o600)
	return dir
}

// rowsSQLiteKeeps opens the copy with SQLite (recovery runs) and counts rows.
func rowsSQLiteKeeps(t *testing.T, dir string) int {
	t.Helper()
	db, err := gorm.Open(sqlite.Open(filepath.Join(dir, DBFile)), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := db.DB()
	defer sqlDB.Close()
	var n int
	if err := db.Raw(`SELECT COUNT(*) FROM keys`).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func walFrameOffset(t *testing.T, wal []byte, frame int) int {
	t.Helper()
	pageSize := int(wal[8])<<24 | int(wal[9])<<16 | int(wal[10])<<8 | int(wal[11])
	return walHeaderSize + frame*(walFrameHeaderSize+pageSize)
}

func TestIntactWALOpens(t *testing.T) {
	dir := crashedCopy(t, 20)
	rep, err := inspectWAL(filepath.Join(dir, DBFile+"-wal"))
	if err != nil || rep.damaged() || rep.commits != 21 {
		t.Fatalf("inspect = %+v, %v; want 21 intact commits (the table and 20 rows)", rep, err)
	}
	d, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if n := rowsSQLiteKeeps(t, dir); n != 20 {
		t.Fatalf("SQLite kept %d rows, want 20", n)
	}
}

func TestDamagedWALIsRefusedNotTruncated(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(wal []byte) []byte
		want   string
	}{
		{"1 KB flipped mid-file", func(w []byte) []byte {
			off := walFrameOffset(t, w, 8) + walFrameHeaderSize + 100
			for i := off; i < off+1024; i++ {
				w[i] ^= 0xff
			}
			return w
		}, "frame 9 "},
		{"one bit in a frame's page", func(w []byte) []byte {
			w[walFrameOffset(t, w, 3)+walFrameHeaderSize+7] ^= 1
			return w
		}, "frame 4 "},
		{"a frame header's salt", func(w []byte) []byte {
			w[walFrameOffset(t, w, 5)+9] ^= 1
			return w
		}, "frame 6 "},
		{"the header's checksum", func(w []byte) []byte {
			w[25] ^= 1
			return w
		}, "header is damaged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := crashedCopy(t, 20)
			walPath := filepath.Join(dir, DBFile+"-wal")
			w, err := os.ReadFile(walPath)
			if err != nil {
				t.Fatal(err)
			}
			damaged := tc.damage(w)
			if err := os.WriteFile(walPath, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err = Open(dir, Options{})
			if !errors.Is(err, ErrDamagedWAL) || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), "--accept-damaged-wal") || !strings.Contains(err.Error(), "--reset") {
				t.Fatalf("Open = %v\nwant ErrDamagedWAL saying %q, naming --accept-damaged-wal and --reset", err, tc.want)
			}
			if b, _ := os.ReadFile(walPath); !bytes.Equal(b, damaged) {
				t.Fatal("the refusal changed the WAL")
			}

			// The user's explicit answer: a copy of the damaged log is kept,
			// then SQLite keeps what precedes the damage.
			now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			d, err := Open(dir, Options{AcceptDamagedWAL: true, Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			d.Close()
			kept := filepath.Join(dir, DBFile+"-wal.damaged-20260102T030405.000Z")
			if b, err := os.ReadFile(kept); err != nil || !bytes.Equal(b, damaged) {
				t.Fatalf("the damaged WAL was not copied to %s (%v)", kept, err)
			}
			if !strings.Contains(d.DamagedWAL, kept) {
				t.Errorf("DamagedWAL = %q, want it to name the copy", d.DamagedWAL)
			}
			if tc.want != "header is damaged" {
				if n := rowsSQLiteKeeps(t, dir); n >= 20 {
					t.Fatalf("SQLite kept %d rows: the damage did not drop any, so the test proves nothing", n)
				}
			}
		})
	}
}

// An uncommitted tail (a transaction cut by kill -9, a torn last frame) and
// frames of an older WAL generation are what SQLite rightly ignores: no refusal.
func TestHarmlessWALTailsOpen(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(w []byte) []byte
	}{
		{"torn last frame", func(w []byte) []byte {
			w[len(w)-10] ^= 0xff
			return w
		}},
		{"cut mid-frame", func(w []byte) []byte { return w[:len(w)-100] }},
		{"uncommitted frames after the last commit", func(w []byte) []byte {
			last := w[walFrameOffset(t, w, 0):]
			frame := walFrameOffset(t, w, 1) - walFrameOffset(t, w, 0)
			extra := bytes.Clone(last[len(last)-frame:])
			extra[4], extra[5], extra[6], extra[7] = 0, 0, 0, 0 // not a commit frame
			extra[30] ^= 0xff
			return append(w, extra...)
		}},
		{"an older generation's frames", func(w []byte) []byte {
			frame := walFrameOffset(t, w, 1) - walFrameOffset(t, w, 0)
			extra := bytes.Clone(w[len(w)-frame:]) // a commit frame…
			extra[8] ^= 0xff                       // …under another salt
			return append(w, extra...)
		}},
		{"empty", func([]byte) []byte { return nil }},
		{"header only", func(w []byte) []byte { return w[:walHeaderSize] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := crashedCopy(t, 5)
			walPath := filepath.Join(dir, DBFile+"-wal")
			w, _ := os.ReadFile(walPath)
			if err := os.WriteFile(walPath, tc.damage(w), 0o600); err != nil {
				t.Fatal(err)
			}
			d, err := Open(dir, Options{})
			if err != nil {
				t.Fatalf("Open = %v, want it to open", err)
			}
			d.Close()
		})
	}
}

func TestExpectsSchema(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		want  bool
	}{
		{"fresh", nil, false},
		{"token only (omniroute token ran first)", []string{TokenFile}, false},
		{"database alone", []string{DBFile}, false},
		{"database and key", []string{DBFile, KeyFile}, true},
		{"database and token", []string{DBFile, TokenFile}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, n := range tc.files {
				write(t, filepath.Join(dir, n), "SQLite format 3\x00", 0o600)
			}
			d, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if got := d.ExpectsSchema(); got != tc.want {
				t.Fatalf("ExpectsSchema = %v, want %v", got, tc.want)
			}
			if err := d.NoSchemaError(); !errors.Is(err, ErrNoSchema) || !strings.Contains(err.Error(), "--reset") ||
				!strings.Contains(err.Error(), DBFile+"-wal") {
				t.Fatalf("NoSchemaError = %v, want one naming the WAL and --reset", err)
			}
		})
	}
}
