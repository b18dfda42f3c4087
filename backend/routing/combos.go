package routing

import (
	"encoding/json"
	"strings"
	"sync"

	"omniroute/backend/store"
)

// ComboTarget is one member of a combo.
type ComboTarget struct {
	Model         string  `json:"model"`
	ConnectionID  string  `json:"connectionId,omitempty"`
	Weight        *int    `json:"weight,omitempty"`
	Priority      int     `json:"priority,omitempty"`
	ContextWindow int     `json:"contextWindow,omitempty"`
	CostPer1M     float64 `json:"costPer1M,omitempty"`
}

// ComboConfig holds a combo's optional tuning.
type ComboConfig struct {
	Description string `json:"description,omitempty"`
	// StickyTTLMs keeps a session on its target for this long (round-robin).
	StickyTTLMs int64 `json:"stickyTtlMs,omitempty"`
	// MaxRetriesPerTarget bounds same-target retries of transient failures.
	MaxRetriesPerTarget *int `json:"maxRetriesPerTarget,omitempty"`
	// QuotaShare marks targets that share one account's quota (guide §4):
	// they are picked by deficit round robin with power-of-two choices on the
	// connection's live in-flight count, and serialised through the
	// connection's concurrency gate fail-open (a wait budget that runs out
	// proceeds without a slot instead of refusing).
	QuotaShare bool `json:"quotaShare,omitempty"`
}

// Combo is a named model group.
type Combo struct {
	ID       string
	Name     string
	Strategy string
	Targets  []ComboTarget
	Config   ComboConfig
}

// Combos holds the combos in memory.
type Combos struct {
	mu     sync.RWMutex
	byName map[string]*Combo
}

// NewCombos returns an empty combo set.
func NewCombos() *Combos { return &Combos{byName: map[string]*Combo{}} }

// Load replaces the combo set.
func (c *Combos) Load(rows []store.Combo) {
	m := make(map[string]*Combo, len(rows))
	for _, r := range rows {
		co := &Combo{ID: r.ID, Name: r.Name, Strategy: r.Strategy}
		_ = json.Unmarshal([]byte(r.Targets), &co.Targets)
		_ = json.Unmarshal([]byte(r.Config), &co.Config)
		m[strings.ToLower(r.Name)] = co
	}
	c.mu.Lock()
	c.byName = m
	c.mu.Unlock()
}

// Lookup finds a combo addressed by its name or "combo/<name>".
func (c *Combos) Lookup(model string) (*Combo, bool) {
	name := strings.ToLower(strings.TrimSpace(model))
	name = strings.TrimPrefix(name, "combo/")
	c.mu.RLock()
	defer c.mu.RUnlock()
	co, ok := c.byName[name]
	return co, ok
}

// All lists the combos.
func (c *Combos) All() []*Combo {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]*Combo, 0, len(c.byName))
	for _, co := range c.byName {
		out = append(out, co)
	}
	return out
}
