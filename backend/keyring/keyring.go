// Package keyring is the in-memory table of client keys: a key found by its
// plaintext value (hashed on the stack, no database read on the hot path),
// its scopes and restrictions, and whether it may still be used (expiry, a
// rotated secret's grace period).
package keyring

import (
	"encoding/json"
	"sync"
	"time"

	"omniroute/backend/errs"
	"omniroute/backend/routing"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
)

// Info is the in-memory view of a client key.
type Info struct {
	ID     string
	Name   string
	Scopes []string
	Access routing.Access
	// ExpiresAtMs is when the key stops working (unix ms; 0: never).
	ExpiresAtMs int64
	// Previous marks the secret a rotation replaced: it works until
	// PrevUntilMs (the grace period's end), then is refused KEY_ROTATED.
	Previous    bool
	PrevUntilMs int64
}

// Refusal is why the key cannot be used at nowMs (nil: it can): an expired
// key is refused KEY_EXPIRED, a replaced secret past its grace period
// KEY_ROTATED, both 401. A key works while nowMs < its expiry (and a replaced
// secret while nowMs < the grace period's end).
func (k *Info) Refusal(nowMs int64) *errs.Error {
	if k.Previous && nowMs >= k.PrevUntilMs {
		return errs.New(errs.Auth, "KEY_ROTATED",
			"the API key %q was rotated: this secret no longer works; use the new secret shown when it was rotated (or rotate it again on the dashboard's API Keys page)", k.Name)
	}
	if k.ExpiresAtMs > 0 && nowMs >= k.ExpiresAtMs {
		return errs.New(errs.Auth, "KEY_EXPIRED",
			"the API key %q expired at %s; set a later expiry or rotate it on the dashboard's API Keys page", k.Name,
			time.UnixMilli(k.ExpiresAtMs).UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// Timed reports whether Refusal depends on the time (an expiry, or a
// replaced secret's grace period); an untimed key is never refused by it, so
// the request edge reads no clock for it.
func (k *Info) Timed() bool { return k.Previous || k.ExpiresAtMs > 0 }

// Keyring maps client key hashes to keys; the hot path never reads the database.
type Keyring struct {
	mu     sync.RWMutex
	byHash map[string]*Info // replaced whole by Load, never changed: callers may keep what Lookup returns
}

// New returns an empty keyring.
func New() *Keyring { return &Keyring{byHash: map[string]*Info{}} }

// Load replaces the keyring's content.
func (k *Keyring) Load(rows []store.APIKey) {
	m := make(map[string]*Info, len(rows))
	for _, row := range rows {
		info := InfoOf(row)
		m[row.KeyHash] = &info
		if row.PrevKeyHash != "" {
			prev := info
			prev.Previous, prev.PrevUntilMs = true, row.PrevValidUntil
			m[row.PrevKeyHash] = &prev
		}
	}
	k.mu.Lock()
	k.byHash = m
	k.mu.Unlock()
}

// InfoOf is a stored key's in-memory view: its scopes and restrictions.
func InfoOf(row store.APIKey) Info {
	info := Info{ID: row.ID, Name: row.Name, ExpiresAtMs: row.ExpiresAt}
	info.Access.Private = row.Private
	_ = json.Unmarshal([]byte(row.Scopes), &info.Scopes)
	_ = json.Unmarshal([]byte(row.AllowedConnections), &info.Access.AllowedConnections)
	_ = json.Unmarshal([]byte(row.AllowedModels), &info.Access.AllowedModels)
	return info
}

// Lookup finds a key by its plaintext value.
func (k *Keyring) Lookup(value string) (*Info, bool) {
	var buf [secrets.HashLen]byte
	h := secrets.AppendHash(buf[:0], value)
	k.mu.RLock()
	defer k.mu.RUnlock()
	info, ok := k.byHash[string(h)] // the conversion in a map index does not allocate
	return info, ok
}

// NameOf returns the name of the key with this id ("" when unknown).
func (k *Keyring) NameOf(id string) string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	for _, info := range k.byHash {
		if info.ID == id {
			return info.Name
		}
	}
	return ""
}
