// Package instances keeps the list of gateway instances sharing one database
// (the team server): each instance writes a heartbeat row every Interval,
// removes it on a clean stop, and the list marks a row live while it was seen
// within Timeout. On a database of its own (SQLite) an instance writes nothing
// and the list is itself alone.
package instances

import (
	"encoding/json"
	"sort"
	"time"

	"omniroute/backend/clock"
)

// Namespace is the key_value namespace of the heartbeat rows.
const Namespace = "instances"

// Interval is how often an instance writes its heartbeat; Timeout is how long
// a row stays live without one (three missed beats).
const (
	Interval = 5 * time.Second
	Timeout  = 3 * Interval
)

// KV is the part of the store the heartbeats use.
type KV interface {
	SetValue(namespace, key, value string) error
	Values(namespace string) (map[string]string, error)
	DeleteValue(namespace, key string) error
}

// Info is one instance as the list shows it. Times are UTC.
type Info struct {
	Name      string    `json:"name"`
	Version   string    `json:"version"`
	Address   string    `json:"address"`
	StartedAt time.Time `json:"startedAt"`
	LastSeen  time.Time `json:"lastSeen"`
	Live      bool      `json:"live"`
	Self      bool      `json:"self"`
}

// Registry is this instance's heartbeat and the list of all.
type Registry struct {
	kv     KV
	clk    clock.Clock
	shared bool
	self   Info
}

// New describes this instance. shared says other instances use the same
// database (only then are heartbeats written and read).
func New(kv KV, clk clock.Clock, shared bool, name, version, address string) *Registry {
	return &Registry{kv: kv, clk: clk, shared: shared,
		self: Info{Name: name, Version: version, Address: address, StartedAt: clk.Now().UTC()}}
}

// Name is this instance's name (the X-OmniRoute-Instance header).
func (r *Registry) Name() string { return r.self.Name }

type row struct {
	Version   string `json:"version"`
	Address   string `json:"address"`
	StartedAt int64  `json:"startedAt"`
	LastSeen  int64  `json:"lastSeen"`
}

// Beat writes this instance's heartbeat at the clock's now.
func (r *Registry) Beat() error {
	if !r.shared {
		return nil
	}
	b, err := json.Marshal(row{Version: r.self.Version, Address: r.self.Address,
		StartedAt: r.self.StartedAt.UnixMilli(), LastSeen: r.clk.Now().UnixMilli()})
	if err != nil {
		return err
	}
	return r.kv.SetValue(Namespace, r.self.Name, string(b))
}

// Leave removes this instance's row (a clean stop).
func (r *Registry) Leave() error {
	if !r.shared {
		return nil
	}
	return r.kv.DeleteValue(Namespace, r.self.Name)
}

// List returns every instance with a row, live ones first, then by name;
// this instance is always in it (Self), live.
func (r *Registry) List() ([]Info, error) {
	now := r.clk.Now()
	self := r.self
	self.LastSeen, self.Live, self.Self = now.UTC(), true, true
	out := []Info{self}
	if r.shared {
		rows, err := r.kv.Values(Namespace)
		if err != nil {
			return nil, err
		}
		for name, raw := range rows {
			if name == r.self.Name {
				continue
			}
			var w row
			if json.Unmarshal([]byte(raw), &w) != nil {
				continue // not a heartbeat: ignored
			}
			seen := time.UnixMilli(w.LastSeen).UTC()
			out = append(out, Info{Name: name, Version: w.Version, Address: w.Address,
				StartedAt: time.UnixMilli(w.StartedAt).UTC(), LastSeen: seen, Live: now.Sub(seen) < Timeout})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Live != out[j].Live {
			return out[i].Live
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}
