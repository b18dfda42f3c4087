package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"omniroute/backend/backup"
	"omniroute/backend/budget"
	"omniroute/backend/clock"
	"omniroute/backend/config"
	"omniroute/backend/datadir"
	"omniroute/backend/errs"
	"omniroute/backend/keyring"
	"omniroute/backend/pricing"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
)

// checkRestorable refuses, with BACKUP_INVALID_ROW, a state the gateway could
// not run on once written: rows the schema would not type (backup.Check),
// general or resilience settings that would not load, a key's budget or
// limits that would not parse. It reads nothing but st's schema: what the
// dry run and the apply both run first, so after any restore the gateway
// starts.
func checkRestorable(st *store.Store, getenv func(string) string, s backup.State) error {
	if err := backup.Check(st, s); err != nil {
		return err
	}
	kv := memKV{}
	for _, r := range s["key_value"] {
		ns, _ := r["namespace"].(string)
		k, _ := r["key"].(string)
		v, _ := r["value"].(string)
		kv[ns+"\x00"+k] = v
	}
	if _, err := config.NewHolder(kv, getenv); err != nil {
		return errs.New(errs.Invalid, backup.CodeInvalidRow, "the backup cannot be restored: its settings would not load (%s); nothing was changed", err.Error())
	}
	for _, r := range s["api_keys"] {
		id, _ := r["id"].(string)
		b, _ := r["budget"].(string)
		l, _ := r["limits"].(string)
		if _, _, err := budget.Parse(store.APIKey{ID: id, Budget: b, Limits: l}); err != nil {
			return errs.New(errs.Invalid, backup.CodeInvalidRow, "the backup cannot be restored: a key's budget or limits would not load (%s); nothing was changed", err.Error())
		}
	}
	return nil
}

// memKV is settings rows in memory (namespace NUL key → value), read as the
// gateway reads its own at start.
type memKV map[string]string

func (m memKV) GetValue(namespace, key string) (string, bool, error) {
	v, ok := m[namespace+"\x00"+key]
	return v, ok, nil
}

func (m memKV) SetValue(namespace, key, value string) error {
	m[namespace+"\x00"+key] = value
	return nil
}

// restoredViews are what a restore reloads.
type restoredViews struct {
	st       *store.Store
	box      *secrets.Box
	clk      clock.Clock
	reload   func() error
	prices   *pricing.Table
	keys     *keyring.Keyring
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
	if err := pricing.Load(st, v.prices); err != nil {
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

// RestoreOptions are `omniroute restore`'s opt-ins and who runs it.
type RestoreOptions struct {
	// AllowUnauthenticated reads a layout version 1 file
	// (--allow-unauthenticated).
	AllowUnauthenticated bool
	// Actor names who restored in the audit log (the OS user); "" is
	// "command line".
	Actor string
}

// Restore reads the backup at path into the process's database
// (`omniroute restore FILE`): it checks the passphrase, the file's MAC and
// the schema version, checks every row as the dry run does, computes what
// would change, and when confirm says yes to those changes replaces the
// configuration in one transaction and records it in the audit log (never
// the passphrase nor anything of the file). For SQLite the data directory's
// lock keeps it from running under a gateway (restore a running one through
// POST /api/restore).
func Restore(proc config.Process, path, passphrase string, o RestoreOptions, confirm func(*backup.File, backup.Preview) bool) (RestoreResult, error) {
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
	next, err := f.Open(passphrase, v, backup.OpenOptions{AllowUnauthenticated: o.AllowUnauthenticated})
	if err != nil {
		return RestoreResult{}, err
	}
	if err := checkRestorable(st, os.Getenv, next); err != nil {
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
	actor := o.Actor
	if actor == "" {
		actor = "command line"
	}
	entry := store.AuditEntry{At: time.Now().UnixMilli(), Actor: actor, ActorKind: "cli", Role: "admin", Remote: "local",
		Action: "omniroute restore", Target: filepath.Base(path), Detail: RestoreAuditDetail(f, true)}
	if err := backup.Apply(st, box, next); err != nil {
		entry.Status = 500
		if e, ok := err.(*errs.Error); ok && e.Class == errs.Invalid {
			entry.Status = 400
		}
		entry.Detail = RestoreAuditDetail(f, false)
		_ = st.AddAudit(&entry) // the refusal is the answer; its record is best effort
		return res, err
	}
	entry.Status = 200
	if err := st.AddAudit(&entry); err != nil {
		return res, fmt.Errorf("restored, but the audit entry was not recorded: %w", err)
	}
	res.Applied = true
	return res, nil
}

// RestoreAuditDetail is a restore's audit detail: that it was applied (or
// refused) and the backup's metadata, never its passphrase nor its rows.
func RestoreAuditDetail(f *backup.File, applied bool) string {
	what := "restore applied"
	if !applied {
		what = "restore refused"
	}
	b, _ := json.Marshal(map[string]any{"event": what, "backup": map[string]any{"createdAt": f.CreatedAt,
		"schemaVersion": f.SchemaVersion, "formatVersion": f.FormatVersion, "withLog": f.WithLog}})
	return string(b)
}
