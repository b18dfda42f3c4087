// Package routing turns a requested model into ordered candidate connections and
// combines the resilience layers (breaker, cooldown, …) into one admission
// decision per candidate, keeping the reason and remaining time of every exclusion.
package routing

import (
	"encoding/json"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"omniroute/backend/providers"
	"omniroute/backend/resilience/cooldown"
	"omniroute/backend/store"
)

// Conn is the in-memory view of one connection; the hot path reads only this.
type Conn struct {
	ID            string
	Provider      providers.Provider
	Name          string
	AuthType      string
	BaseURL       string
	Prefix        string
	Priority      int
	Active        bool
	MaxConcurrent int
	Models        []string
	CreatedAt     int64
	// BreakerKey is the provider identity for the breaker and health: the provider id,
	// or "<provider>:<prefix or id>" for user-defined endpoints.
	BreakerKey string
	// LocalAddress is the local IP outgoing requests leave from
	// (providerSpecificData.localAddress); "" is the default route.
	LocalAddress string
	secret       string
	overrides    cooldownOverrides
	// slots serialises requests beyond MaxConcurrent (nil: no limit).
	slots *semaphore.Weighted

	mu sync.Mutex
	cd cooldown.State
}

// Category is the connection's breaker/cooldown profile name.
func (c *Conn) Category() string {
	if c.AuthType == "oauth" {
		return string(providers.CategoryOAuth)
	}
	return string(c.Provider.Category)
}

// Cooldown returns a copy of the connection's cooldown state.
func (c *Conn) Cooldown() cooldown.State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cd
}

// Target returns what an executor needs to call this connection for model.
func (c *Conn) Target(model string) providers.Target {
	return providers.Target{Provider: c.Provider, BaseURL: c.BaseURL, Secret: c.secret, AuthType: c.AuthType, Model: model}
}

// Opener decrypts stored secrets.
type Opener interface {
	Open(sealed string) (string, error)
}

// Registry holds every connection in memory, ordered by priority.
type Registry struct {
	catalog *providers.Catalog
	mu      sync.RWMutex
	list    []*Conn
	byID    map[string]*Conn
}

// NewRegistry returns an empty registry.
func NewRegistry(catalog *providers.Catalog) *Registry {
	return &Registry{catalog: catalog, byID: map[string]*Conn{}}
}

// Load replaces the registry's content with rows, decrypting secrets with box.
func (r *Registry) Load(rows []store.Connection, box Opener) error {
	list := make([]*Conn, 0, len(rows))
	byID := make(map[string]*Conn, len(rows))
	for _, row := range rows {
		c, err := connFromRow(r.catalog, row, box)
		if err != nil {
			return err
		}
		list = append(list, c)
		byID[c.ID] = c
	}
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].Priority != list[j].Priority {
			return list[i].Priority < list[j].Priority
		}
		return list[i].CreatedAt < list[j].CreatedAt
	})
	r.mu.Lock()
	r.list, r.byID = list, byID
	r.mu.Unlock()
	return nil
}

func connFromRow(cat *providers.Catalog, row store.Connection, box Opener) (*Conn, error) {
	p, ok := cat.Lookup(row.Provider)
	if !ok {
		p = providers.Provider{ID: row.Provider, Name: row.Provider, Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI}
	}
	secretSealed := row.APIKeyEnc
	if row.AuthType == "oauth" && row.AccessTokenEnc != "" {
		secretSealed = row.AccessTokenEnc
	}
	secret, err := box.Open(secretSealed)
	if err != nil {
		return nil, err
	}
	base := row.BaseURL
	if base == "" {
		base = p.BaseURL
	}
	var models []string
	_ = json.Unmarshal([]byte(row.Models), &models)
	mc := 0
	if row.MaxConcurrent != nil {
		mc = *row.MaxConcurrent
	}
	key := p.ID
	if p.UserDefined {
		id := row.Prefix
		if id == "" {
			id = row.ID
		}
		key = p.ID + ":" + id
	}
	return &Conn{
		ID: row.ID, Provider: p, Name: row.Name, AuthType: row.AuthType, BaseURL: base,
		Prefix: strings.ToLower(row.Prefix), Priority: row.Priority, Active: row.IsActive,
		MaxConcurrent: mc, Models: models, CreatedAt: row.CreatedAt, BreakerKey: key, secret: secret,
		cd: CooldownFromRow(row), overrides: parseOverrides(row.RateLimitOverrides), slots: newSlots(mc),
		LocalAddress: LocalAddressOf(row.ProviderSpecificData),
	}, nil
}

func newSlots(n int) *semaphore.Weighted {
	if n <= 0 {
		return nil
	}
	return semaphore.NewWeighted(int64(n))
}

// cooldownOverrides are the per-connection cooldown settings from
// rateLimitOverrides; they win over persisted and env settings.
type cooldownOverrides struct {
	BaseCooldownMs    *int64 `json:"baseCooldownMs"`
	MaxBackoffSteps   *int   `json:"maxBackoffSteps"`
	MaxHintCooldownMs *int64 `json:"maxHintCooldownMs"`
	// DisableCooling opts the connection out of cooldowns shared with others
	// (the egress-bucket lock); its own failures still cool it.
	DisableCooling bool `json:"disableCooling"`
}

// LocalAddressOf reads providerSpecificData.localAddress when it is an IP.
func LocalAddressOf(providerSpecificData string) string {
	var d struct {
		LocalAddress string `json:"localAddress"`
	}
	_ = json.Unmarshal([]byte(providerSpecificData), &d)
	if ip := net.ParseIP(strings.TrimSpace(d.LocalAddress)); ip != nil {
		return ip.String()
	}
	return ""
}

func parseOverrides(raw string) cooldownOverrides {
	var o cooldownOverrides
	_ = json.Unmarshal([]byte(raw), &o)
	return o
}

func (o cooldownOverrides) apply(s cooldown.Settings) cooldown.Settings {
	if o.BaseCooldownMs != nil {
		s.BaseCooldown = time.Duration(*o.BaseCooldownMs) * time.Millisecond
	}
	if o.MaxBackoffSteps != nil {
		s.MaxBackoffSteps = *o.MaxBackoffSteps
	}
	if o.MaxHintCooldownMs != nil {
		s.MaxHintCooldown = time.Duration(*o.MaxHintCooldownMs) * time.Millisecond
	}
	return s.Normalize()
}

// CooldownFromRow reads a row's resilience columns.
func CooldownFromRow(row store.Connection) cooldown.State {
	st := cooldown.State{
		RateLimitedUntil: msTime(row.RateLimitedUntil),
		TestStatus:       row.TestStatus,
		LastError:        row.LastError,
		LastErrorType:    row.LastErrorType,
		ErrorCode:        row.ErrorCode,
		LastErrorAt:      msTime(row.LastErrorAt),
		BackoffLevel:     row.BackoffLevel,
		RejectStreak:     row.RejectStreak,
		ExpiredRetries:   row.ExpiredRetries,
	}
	switch row.TestStatus {
	case "banned", "expired", "credits_exhausted":
		st.Terminal = row.TestStatus
	}
	return st
}

// CooldownFields converts a state to its DB columns.
func CooldownFields(s cooldown.State) store.CooldownFields {
	status := s.TestStatus
	if s.Terminal != "" {
		status = s.Terminal
	}
	if status == "" {
		status = "active"
	}
	return store.CooldownFields{
		RateLimitedUntil: timeMs(s.RateLimitedUntil), TestStatus: status, LastError: s.LastError,
		LastErrorType: s.LastErrorType, LastErrorAt: timeMs(s.LastErrorAt), ErrorCode: s.ErrorCode,
		BackoffLevel: s.BackoffLevel, RejectStreak: s.RejectStreak, ExpiredRetries: s.ExpiredRetries,
	}
}

// All returns the connections in priority order.
func (r *Registry) All() []*Conn {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.list
}

// Get returns one connection.
func (r *Registry) Get(id string) (*Conn, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	c, ok := r.byID[id]
	return c, ok
}
