package config

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
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
	kv         KV
	getenv     func(string) string
	mu         sync.Mutex // serialises changes; readers load the snapshots
	general    atomic.Pointer[General]
	resilience atomic.Pointer[Resilience]
	overlay    map[string]any // the persisted part of the resilience settings
	listeners  []func(Resilience)
	// generalListeners run after the general settings changed.
	generalListeners []func(General)
}

// NewHolder loads persisted settings over the defaults (env supplies the
// resilience defaults through getenv).
func NewHolder(kv KV, getenv func(string) string) (*Holder, error) {
	h := &Holder{kv: kv, getenv: getenv}
	general := DefaultGeneral()
	if err := load(kv, "general", &general); err != nil {
		return nil, err
	}
	h.general.Store(&general)
	if err := load(kv, "resilience", &h.overlay); err != nil {
		return nil, err
	}
	r, err := ResolveResilience(getenv, h.overlay)
	if err != nil {
		return nil, fmt.Errorf("stored resilience settings are invalid: %w", err)
	}
	h.resilience.Store(&r)
	return h, nil
}

// Resilience returns the effective resilience settings.
func (h *Holder) Resilience() Resilience { return *h.resilience.Load() }

// ResilienceRef returns the effective resilience settings without a copy, for
// the request path: a snapshot that is replaced, never changed, so the caller
// must not modify it.
func (h *Holder) ResilienceRef() *Resilience { return h.resilience.Load() }

// OnResilienceChange registers f to be called after every successful patch.
func (h *Holder) OnResilienceChange(f func(Resilience)) {
	h.mu.Lock()
	h.listeners = append(h.listeners, f)
	h.mu.Unlock()
}

// PatchResilience validates a partial update (unknown keys, wrong types and
// negative numbers are rejected; large values are clamped), persists the
// overlay and returns the effective settings.
func (h *Holder) PatchResilience(patch []byte) (Resilience, error) {
	var p map[string]any
	if err := json.Unmarshal(patch, &p); err != nil || p == nil {
		return h.Resilience(), &FieldError{"", "body must be a JSON object"}
	}
	if f := negativeField("", p); f != "" {
		return h.Resilience(), &FieldError{f, "must not be negative"}
	}
	h.mu.Lock()
	merged := mergeJSON(h.overlay, p)
	r, err := ResolveResilience(h.getenv, merged)
	if err != nil {
		h.mu.Unlock()
		return h.Resilience(), err
	}
	if err := save(h.kv, "resilience", merged); err != nil {
		h.mu.Unlock()
		return h.Resilience(), err
	}
	h.overlay = merged
	h.resilience.Store(&r)
	listeners := append([]func(Resilience){}, h.listeners...)
	h.mu.Unlock()
	for _, f := range listeners {
		f(r)
	}
	return r, nil
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
func (h *Holder) General() General { return *h.general.Load() }

// GeneralRef returns the current general settings without a copy, for the
// request path: a snapshot that is replaced, never changed, so the caller
// must not modify it.
func (h *Holder) GeneralRef() *General { return h.general.Load() }

// PatchGeneral validates and applies a partial update, persisting it.
func (h *Holder) PatchGeneral(patch []byte) (General, error) {
	h.mu.Lock()
	cur := h.General()
	next, err := PatchJSON(cur, patch)
	if err == nil {
		err = save(h.kv, "general", next)
	}
	if err != nil {
		h.mu.Unlock()
		return cur, err
	}
	h.general.Store(&next)
	listeners := append([]func(General){}, h.generalListeners...)
	h.mu.Unlock()
	for _, f := range listeners {
		f(next)
	}
	return next, nil
}

// OnGeneralChange registers f to be called with the general settings after
// every successful patch or reload.
func (h *Holder) OnGeneralChange(f func(General)) {
	h.mu.Lock()
	h.generalListeners = append(h.generalListeners, f)
	h.mu.Unlock()
}

// Reload re-reads the persisted settings, for an instance sharing its database
// with others that may have changed them; the resilience listeners run when
// the effective resilience settings changed. On an error (unreadable or
// invalid stored settings) the current settings stay.
func (h *Holder) Reload() error {
	h.mu.Lock()
	general := DefaultGeneral()
	var overlay map[string]any
	err := load(h.kv, "general", &general)
	if err == nil {
		err = load(h.kv, "resilience", &overlay)
	}
	var r Resilience
	if err == nil {
		r, err = ResolveResilience(h.getenv, overlay)
	}
	if err != nil {
		h.mu.Unlock()
		return err
	}
	changed := !reflect.DeepEqual(r, *h.resilience.Load())
	h.overlay = overlay
	h.general.Store(&general)
	h.resilience.Store(&r)
	listeners := append([]func(Resilience){}, h.listeners...)
	generalListeners := append([]func(General){}, h.generalListeners...)
	h.mu.Unlock()
	if changed {
		for _, f := range listeners {
			f(r)
		}
	}
	for _, f := range generalListeners {
		f(general)
	}
	return nil
}
