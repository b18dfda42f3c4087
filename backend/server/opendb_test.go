package server_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"omniroute/backend/config"
	"omniroute/backend/datadir"
	"omniroute/backend/server"
)

// The commands that open the database without starting a gateway (setup,
// run, import) refuse a database without tables beside the token or key as
// start-up does: migrating it would turn a WAL-less copy into a fresh
// install for the next start.
func TestOpenStoreRefusesADatabaseWithoutTables(t *testing.T) {
	for _, tc := range []struct {
		name    string
		files   []string
		refused bool
	}{
		{"beside the token", []string{datadir.DBFile, datadir.TokenFile}, true},
		{"beside the key", []string{datadir.DBFile, datadir.KeyFile}, true},
		{"alone: a fresh database", []string{datadir.DBFile}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, n := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			st, err := server.OpenStore(config.Process{DataDir: dir})
			if !tc.refused {
				if err != nil {
					t.Fatal(err)
				}
				_ = st.Close()
				return
			}
			if !errors.Is(err, datadir.ErrNoSchema) {
				t.Fatalf("OpenStore = %v, want ErrNoSchema", err)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, datadir.DBFile)); len(b) != 0 {
				t.Fatalf("the refusal wrote %d bytes into the database", len(b))
			}
		})
	}
}
