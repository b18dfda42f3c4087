package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/config"
	"omniroute/backend/datadir"
	"omniroute/backend/instances"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
)

// Rotation is what RotateSecretKey did.
type Rotation struct {
	// Resealed counts the sealed values rewritten with the new key.
	Resealed int
	// Source is where the old key came from.
	Source secrets.KeySource
	// KeyFile is the data directory's secret.key now holding the new key
	// ("" when the key is provided through the environment: the operator
	// installs the new one there), and OldKeyFile where the old one was kept.
	KeyFile, OldKeyFile string
}

// RotateSecretKey re-seals every stored credential and client key with a new
// sealing key (`omniroute rotate-secret-key`), in one transaction. The new
// key is read from newKeyFile (64 hex characters) or, when the current key
// is the data directory's secret.key and no file is given, generated. With
// a key from the data directory the new key replaces secret.key (the old one
// is kept beside it as secret.key.old-<unix time>); with a key from
// OMNIROUTE_SECRET_KEY(_FILE) newKeyFile is required and the operator then
// gives the instances that key. No gateway may be running on the database:
// a SQLite data directory is locked meanwhile, and on PostgreSQL a live
// instance (a heartbeat under 15 s old) refuses the rotation. A stored value
// the current key cannot open refuses it too, changing nothing.
func RotateSecretKey(proc config.Process, getenv func(string) string, newKeyFile string, now time.Time) (Rotation, error) {
	dir := proc.DataDir
	keyPath := filepath.Join(dir, datadir.KeyFile)
	var out Rotation
	if getenv(secrets.EnvKey) == "" && getenv(secrets.EnvKeyFile) == "" {
		if _, err := os.Stat(keyPath); err != nil {
			return out, fmt.Errorf("no sealing key to rotate: %s is missing and neither %s nor %s is set", keyPath, secrets.EnvKey, secrets.EnvKeyFile)
		}
	}
	oldKey, src, err := secrets.LoadKeyFrom(getenv, keyPath)
	if err != nil {
		return out, err
	}
	out.Source = src
	var newKey []byte
	switch {
	case newKeyFile != "":
		b, err := os.ReadFile(newKeyFile)
		if err != nil {
			return out, fmt.Errorf("--new-key-file: %w", err)
		}
		if newKey, err = secrets.ParseKey(string(b)); err != nil {
			return out, fmt.Errorf("--new-key-file %s: %w", newKeyFile, err)
		}
	case src != secrets.SourceDataDir:
		return out, fmt.Errorf("the sealing key comes from %s: pass --new-key-file FILE with the new key (64 hex characters, e.g. openssl rand -hex 32 > FILE), then give every instance that key", src)
	default:
		newKey = make([]byte, 32)
		if _, err := rand.Read(newKey); err != nil {
			return out, err
		}
	}
	if string(newKey) == string(oldKey) {
		return out, errors.New("the new key is the current key")
	}
	oldBox, err := secrets.New(oldKey)
	if err != nil {
		return out, err
	}
	newBox, err := secrets.New(newKey)
	if err != nil {
		return out, err
	}
	st, closeStore, err := openForRotation(proc)
	if err != nil {
		return out, err
	}
	defer closeStore()
	// The new key file is written before the database changes, so a crash
	// between the two never loses the key the database is sealed with.
	var pending string
	if src == secrets.SourceDataDir {
		pending = keyPath + ".new"
		if err := writeKeyFile(pending, newKey); err != nil {
			return out, err
		}
	}
	n, err := st.ResealAll(func(sealed string) (string, error) {
		plain, err := oldBox.Open(sealed)
		if err != nil {
			return "", fmt.Errorf("a stored credential cannot be opened with the current sealing key (%s); nothing was changed: %w", src, err)
		}
		return newBox.Seal(plain)
	})
	if err != nil {
		if pending != "" {
			_ = os.Remove(pending)
		}
		return out, err
	}
	out.Resealed = n
	if pending != "" {
		old := keyPath + ".old-" + strconv.FormatInt(now.Unix(), 10)
		if err := os.Rename(keyPath, old); err != nil {
			return out, fmt.Errorf("the credentials are sealed with the new key in %s, but %s could not be moved aside: %w", pending, keyPath, err)
		}
		if err := os.Rename(pending, keyPath); err != nil {
			return out, fmt.Errorf("the credentials are sealed with the new key in %s; move it to %s: %w", pending, keyPath, err)
		}
		out.KeyFile, out.OldKeyFile = keyPath, old
	}
	return out, nil
}

// openForRotation opens the process's database for the rotation: SQLite
// under the data directory's lock (a running gateway makes it fail),
// PostgreSQL after checking that no instance is live.
func openForRotation(proc config.Process) (*store.Store, func(), error) {
	if proc.DatabaseURL == "" {
		dd, err := datadir.Open(proc.DataDir, datadir.Options{})
		if err != nil {
			return nil, nil, err
		}
		st, err := openSQLite(dd)
		if err != nil {
			dd.Close()
			return nil, nil, err
		}
		return st, func() { _ = st.Close(); dd.Close() }, nil
	}
	st, err := store.OpenPostgres(proc.DatabaseURL)
	if err != nil {
		return nil, nil, err
	}
	list, err := instances.New(st, clock.Real{}, true, "rotate-secret-key", "", "").List()
	if err != nil {
		_ = st.Close()
		return nil, nil, err
	}
	for _, in := range list {
		if in.Live && !in.Self {
			_ = st.Close()
			return nil, nil, fmt.Errorf("instance %s is running on this database (heartbeat %s ago): stop every instance before rotating the key",
				in.Name, time.Since(in.LastSeen).Round(time.Second))
		}
	}
	return st, func() { _ = st.Close() }, nil
}

// writeKeyFile writes a key as secret.key does (hex, 0600, synced).
func writeKeyFile(path string, key []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
