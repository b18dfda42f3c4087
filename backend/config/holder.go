package config

import (
	"encoding/json"
	"fmt"
	"sync"
)

// KV persists settings documents.
type KV interface {
	GetValue(namespace, key string) (string, bool, error)
	SetValue(namespace, key, value string) error
}

const settingsNamespace = "settings"

// Holder keeps the current settings in memory (the hot path reads only memory)
// and writes every change through to the store.
type Holder struct {
	kv      KV
	mu      sync.RWMutex
	general General
}

// NewHolder loads persisted settings over the defaults.
func NewHolder(kv KV) (*Holder, error) {
	h := &Holder{kv: kv, general: DefaultGeneral()}
	if err := load(kv, "general", &h.general); err != nil {
		return nil, err
	}
	return h, nil
}

func load(kv KV, key string, into any) error {
	raw, ok, err := kv.GetValue(settingsNamespace, key)
	if err != nil || !ok {
		return err
	}
	if err := json.Unmarshal([]byte(raw), into); err != nil {
		return fmt.Errorf("stored %s settings are unreadable: %w", key, err)
	}
	return nil
}

func save(kv KV, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return kv.SetValue(settingsNamespace, key, string(b))
}

// General returns the current general settings.
func (h *Holder) General() General {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.general
}

// PatchGeneral validates and applies a partial update, persisting it.
func (h *Holder) PatchGeneral(patch []byte) (General, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	next, err := PatchJSON(h.general, patch)
	if err != nil {
		return h.general, err
	}
	if err := save(h.kv, "general", next); err != nil {
		return h.general, err
	}
	h.general = next
	return next, nil
}
