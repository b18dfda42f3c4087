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
	src, err := store.Open(dd.File(datadir.DBFile))
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
