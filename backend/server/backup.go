package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"omniroute/backend/api"
	"omniroute/backend/backup"
	"omniroute/backend/budget"
	"omniroute/backend/clock"
	"omniroute/backend/config"
	"omniroute/backend/datadir"
	"omniroute/backend/pricing"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
)

// restoredViews are what a restore reloads.
type restoredViews struct {
	st       *store.Store
	box      *secrets.Box
	clk      clock.Clock
	reload   func() error
	prices   *pricing.Table
	keys     *api.Keyring
	ledger   *budget.Ledger
	settings *config.Holder
}

// reloadRestored brings every in-memory view in step with a database a
// restore just rewrote: connections and combos, pricing overrides, client
// keys and their budgets, and the settings. A backup without client keys
// leaves a new default key, as a first start does.
func reloadRestored(v restoredViews) error {
	st := v.st
	if err := v.reload(); err != nil {
		return err
	}
	if err := api.LoadPricing(st, v.prices); err != nil {
		return err
	}
	if err := ensureDefaultKey(st, v.box, v.clk); err != nil {
		return err
	}
	rows, err := st.APIKeys()
	if err != nil {
		return err
	}
	v.keys.Load(rows)
	if err := loadBudgets(st, v.ledger, rows); err != nil {
		return err
	}
	return v.settings.Reload()
}

// openOffline opens the process's database without a gateway (the CLI's
// backup and restore): PostgreSQL with OMNIROUTE_DATABASE_URL, else the data
// directory's SQLite under the directory's lock, so a running desktop
// gateway is never written under. It returns the store, the data
// directory's secrets box and a close function.
func openOffline(proc config.Process) (*store.Store, *secrets.Box, func(), error) {
	var st *store.Store
	var err error
	closeDir := func() {}
	if proc.DatabaseURL != "" {
		if err := store.ValidDatabaseURL(proc.DatabaseURL); err != nil {
			return nil, nil, nil, err
		}
		// The team's instances share one secret.key: a new one made here
		// would seal restored credentials that no instance can open.
		if _, err := os.Stat(filepath.Join(proc.DataDir, datadir.KeyFile)); err != nil {
			return nil, nil, nil, fmt.Errorf("no %s in %s: point OMNIROUTE_DATA_DIR at a data directory holding the team's %s (every instance has it)",
				datadir.KeyFile, proc.DataDir, datadir.KeyFile)
		}
		st, err = store.OpenPostgres(proc.DatabaseURL)
	} else {
		dd, derr := datadir.Open(proc.DataDir, datadir.Options{})
		var locked *datadir.ErrLocked
		if errors.As(derr, &locked) {
			return nil, nil, nil, fmt.Errorf("%w; stop it first, or back up and restore the running gateway from the dashboard (Backup & Restore)", derr)
		}
		if derr != nil {
			return nil, nil, nil, derr
		}
		closeDir = func() { dd.Close() }
		st, err = openSQLite(dd)
	}
	if err != nil {
		closeDir()
		return nil, nil, nil, err
	}
	key, err := secrets.LoadOrCreateKey(filepath.Join(proc.DataDir, datadir.KeyFile))
	var box *secrets.Box
	if err == nil {
		box, err = secrets.New(key)
	}
	if err != nil {
		st.Close()
		closeDir()
		return nil, nil, nil, err
	}
	return st, box, func() { st.Close(); closeDir() }, nil
}

// Backup writes the backup file of the process's database to path, which
// must not exist (`omniroute backup FILE`): settings, connections (secrets
// sealed with passphrase), keys, combos, rules, pricing and budgets, and the
// request log when withLog. The file is written beside path and renamed, mode
// 0600.
func Backup(proc config.Process, path, passphrase string, withLog bool, version string) (*backup.File, error) {
	if _, err := os.Stat(path); err == nil {
		return nil, fmt.Errorf("%s exists; backup writes a new file", path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	st, box, done, err := openOffline(proc)
	if err != nil {
		return nil, err
	}
	defer done()
	v, err := st.SchemaVersion()
	if err != nil {
		return nil, err
	}
	s, err := backup.Read(st, box, withLog)
	if err != nil {
		return nil, err
	}
	f, err := backup.Seal(s, backup.Meta{SchemaVersion: v, AppVersion: version, Now: time.Now()}, passphrase)
	if err != nil {
		return nil, err
	}
	tmp := path + ".partial"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Write(out); err != nil {
		out.Close()
		os.Remove(tmp)
		return nil, err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		os.Remove(tmp)
		return nil, err
	}
	if err := out.Close(); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	return f, os.Rename(tmp, path)
}

// RestoreResult is what `omniroute restore` found and did.
type RestoreResult struct {
	File    *backup.File
	Changes backup.Preview
	Applied bool
}

// Restore reads the backup at path into the process's database
// (`omniroute restore FILE`): it checks the schema version and the
// passphrase, computes what would change, and when confirm says yes to
// those changes replaces the configuration in one transaction. For SQLite
// the data directory's lock keeps it from running under a gateway (restore
// a running one through POST /api/restore).
func Restore(proc config.Process, path, passphrase string, confirm func(*backup.File, backup.Preview) bool) (RestoreResult, error) {
	in, err := os.Open(path)
	if err != nil {
		return RestoreResult{}, err
	}
	defer in.Close()
	f, err := backup.Parse(in)
	if err != nil {
		return RestoreResult{}, err
	}
	st, box, done, err := openOffline(proc)
	if err != nil {
		return RestoreResult{}, err
	}
	defer done()
	v, err := st.SchemaVersion()
	if err != nil {
		return RestoreResult{}, err
	}
	next, err := f.Open(passphrase, v)
	if err != nil {
		return RestoreResult{}, err
	}
	cur, err := backup.Read(st, box, next.HasLog())
	if err != nil {
		return RestoreResult{}, err
	}
	res := RestoreResult{File: f, Changes: backup.Diff(cur, next)}
	if !confirm(f, res.Changes) {
		return res, nil
	}
	if err := backup.Apply(st, box, next); err != nil {
		return res, err
	}
	res.Applied = true
	return res, nil
}
