package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"omniroute/backend/config"
	"omniroute/backend/datadir"
	"omniroute/backend/store"
)

// ImportDB copies the SQLite database of the data directory fromDir (a
// desktop install) into the PostgreSQL database of proc.DatabaseURL, which
// must be empty, in one transaction (`omniroute import-db`). fromDir is
// locked meanwhile, so its gateway must not be running. Credentials stay
// sealed with fromDir's secret.key, which every instance then needs.
func ImportDB(proc config.Process, fromDir string) ([]store.TableCount, error) {
	if proc.DatabaseURL == "" {
		return nil, errors.New("set OMNIROUTE_DATABASE_URL to the (empty) PostgreSQL database to import into")
	}
	if err := store.ValidDatabaseURL(proc.DatabaseURL); err != nil {
		return nil, err
	}
	if st, err := os.Stat(filepath.Join(fromDir, datadir.DBFile)); err != nil || st.Size() == 0 {
		return nil, fmt.Errorf("no SQLite database to import at %s", filepath.Join(fromDir, datadir.DBFile))
	}
	dd, err := datadir.Open(fromDir, datadir.Options{})
	if err != nil {
		return nil, err
	}
	defer dd.Close()
	src, err := openSQLite(dd)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	dst, err := store.OpenPostgres(proc.DatabaseURL)
	if err != nil {
		return nil, err
	}
	defer dst.Close()
	return src.CopyInto(dst)
}

// Export copies the process's database (PostgreSQL with OMNIROUTE_DATABASE_URL,
// else the data directory's SQLite) into a new SQLite file at to, which must
// not exist (`omniroute export`): a backup, or a way back to a desktop.
// Credentials stay sealed with the instances' secret.key.
func Export(proc config.Process, to string) ([]store.TableCount, error) {
	if _, err := os.Stat(to); err == nil {
		return nil, fmt.Errorf("%s exists; export writes a new file", to)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var src *store.Store
	var err error
	if proc.DatabaseURL != "" {
		src, err = store.OpenPostgres(proc.DatabaseURL)
	} else {
		// The directory's lock keeps a running gateway from writing meanwhile.
		dd, derr := datadir.Open(proc.DataDir, datadir.Options{})
		if derr != nil {
			return nil, derr
		}
		defer dd.Close()
		src, err = openSQLite(dd)
	}
	if err != nil {
		return nil, err
	}
	defer src.Close()
	dst, err := store.Open(to)
	if err != nil {
		return nil, err
	}
	counts, err := src.CopyInto(dst)
	cerr := dst.Close()
	if err != nil {
		_ = os.Remove(to)
		_ = os.Remove(to + "-wal")
		_ = os.Remove(to + "-shm")
		return nil, err
	}
	return counts, cerr
}

// Migrate applies the database's pending migrations without starting a
// gateway (`omniroute migrate`, for deployment scripts) and returns the
// schema version. Starting a gateway migrates as well.
// On SQLite the data directory's lock is taken first, so a running gateway
// is never migrated under.
func Migrate(proc config.Process) (int, error) {
	var st *store.Store
	var err error
	if proc.DatabaseURL != "" {
		st, err = store.OpenPostgres(proc.DatabaseURL)
	} else {
		dd, derr := datadir.Open(proc.DataDir, datadir.Options{})
		if derr != nil {
			return 0, derr
		}
		defer dd.Close()
		st, err = openSQLite(dd)
	}
	if err != nil {
		return 0, err
	}
	defer st.Close()
	return st.SchemaVersion()
}
