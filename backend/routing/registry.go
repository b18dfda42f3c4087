// Package routing turns a requested model into ordered candidate connections and
// combines the resilience layers (breaker, cooldown, …) into one admission
// decision per candidate, keeping the reason and remaining time of every exclusion.
package routing

import (
	"encoding/json"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"omniroute/backend/providers"
	"omniroute/backend/resilience/cooldown"
	"omniroute/backend/resilience/queue"
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
	// Models are the names the connection serves as bare names: the ones the
	// user listed, then the ones discovered from the upstream (ServedModels).
	Models   []string
	modelSet map[string]struct{}
	// hidden are the models the user hid here: never routed to on this
	// connection, whichever name reaches it (bare, provider/ or prefix/).
	hidden map[string]struct{}
	// Aliases are the user's names for models of this connection, alias →
	// upstream model; an alias is listed in /v1/models and routes here.
	Aliases   map[string]string
	CreatedAt int64
	// BreakerKey is the provider identity for the breaker and health: the provider id,
	// or "<provider>:<prefix or id>" for user-defined endpoints.
	BreakerKey string
	// LocalAddress is the local IP outgoing requests leave from
	// (providerSpecificData.localAddress); "" is the default route.
	LocalAddress string
	// Account is the subscription account's ids and opt-ins (providerSpecificData).
	Account providers.Account
	// parts are the target fields its provider module read from
	// providerSpecificData and the credentials (providers.ConnData.Parts).
	parts providers.Target
	// HasRefresh reports a stored refresh token (OAuth connections).
	HasRefresh bool
	// Prefill is how the connection continues a trailing assistant message
	// (providerSpecificData.assistantPrefill); "" is its provider's default.
	Prefill PrefillMode
	// LoadError says why the connection's stored credential could not be
	// opened (a corrupt value, or one sealed with another secret.key): such
	// a connection is loaded switched off (Active false) so the gateway
	// starts and names it, instead of refusing to start.
	LoadError string

	credMu    sync.RWMutex
	secret    string
	expiresAt time.Time
	// endpoint replaces BaseURL once a token exchange named the upstream;
	// "" keeps BaseURL.
	endpoint string
	quota    Quota

	overrides cooldownOverrides
	// Limits are the connection's concurrency caps and request-queue overrides.
	Limits Limits

	mu sync.Mutex
	cd cooldown.State
	// cdSeq counts this instance's own changes of cd: a decision the shared
	// database returns is adopted only if no newer local change followed it
	// (that one's decision comes next).
	cdSeq uint64

	// reach is what attempts and checks saw of the upstream being reachable
	// (Reach); reachClean is set while it was reached with no miss since.
	reachMu    sync.Mutex
	reach      Reach
	reachClean atomic.Bool
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
	c.credMu.RLock()
	secret, base := c.secret, c.BaseURL
	if c.endpoint != "" {
		base = c.endpoint
	}
	c.credMu.RUnlock()
	t := c.parts
	t.Provider, t.BaseURL, t.Secret, t.AuthType, t.Model, t.ConnectionID, t.Account = c.Provider, base, secret, c.AuthType, model, c.ID, c.Account
	return t
}

// Endpoint is the base URL to send to: the one a token exchange named last,
// else the stored BaseURL.
func (c *Conn) Endpoint() string {
	c.credMu.RLock()
	defer c.credMu.RUnlock()
	if c.endpoint != "" {
		return c.endpoint
	}
	return c.BaseURL
}

// SetEndpoint records the base URL a token exchange named ("" forgets it).
func (c *Conn) SetEndpoint(u string) {
	c.credMu.Lock()
	c.endpoint = u
	c.credMu.Unlock()
}

// Credential returns the current secret (API key or access token) and when an
// access token expires (zero: unknown or never).
func (c *Conn) Credential() (string, time.Time) {
	c.credMu.RLock()
	defer c.credMu.RUnlock()
	return c.secret, c.expiresAt
}

// SetCredential replaces the access token in memory after a refresh was persisted.
func (c *Conn) SetCredential(secret string, expiresAt time.Time) {
	c.credMu.Lock()
	c.secret, c.expiresAt = secret, expiresAt
	c.credMu.Unlock()
}

// Quota is a subscription connection's usage windows as its upstream last
// reported them (anthropic-ratelimit-unified-*, x-codex-*).
type Quota struct {
	FiveHour Window `json:"fiveHour"`
	Weekly   Window `json:"weekly"`
	// Daily is a Code Assist login's most used daily model quota
	// (retrieveUserQuota), DailyModel the model it is of.
	Daily      Window `json:"daily"`
	DailyModel string `json:"dailyModel,omitempty"`
	// Status is the upstream's overall verdict ("allowed", "allowed_warning", "rejected"), when given.
	Status string `json:"status,omitempty"`
	// ObservedAt is when the headers were read (zero: never).
	ObservedAt time.Time `json:"observedAt"`
}

// Window is one usage window: utilisation 0..1 (negative: unknown) and reset time.
type Window struct {
	Utilization float64   `json:"utilization"`
	ResetsAt    time.Time `json:"resetsAt"`
}

// Known reports whether the window was reported.
func (w Window) Known() bool { return w.Utilization >= 0 }

// QuotaWindows returns the last reported usage windows.
func (c *Conn) QuotaWindows() Quota {
	c.credMu.RLock()
	defer c.credMu.RUnlock()
	return c.quota
}

// SetQuotaWindows records usage windows an upstream reported.
func (c *Conn) SetQuotaWindows(q Quota) {
	c.credMu.Lock()
	c.quota = q
	c.credMu.Unlock()
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

// CredentialUnreadable is a connection's LoadError when its stored
// credential does not open.
const CredentialUnreadable = "the stored credential cannot be opened (corrupt, or sealed with another secret.key): the connection is switched off until its key is entered again"

// Load replaces the registry's content with rows, decrypting secrets with box.
// A row whose credential does not open is loaded switched off with its
// LoadError set (Unloadable lists them); it never stops the load.
func (r *Registry) Load(rows []store.Connection, box Opener) error {
	list := make([]*Conn, 0, len(rows))
	byID := make(map[string]*Conn, len(rows))
	for _, row := range rows {
		c, err := connFromRow(r.catalog, row, box)
		if err != nil {
			return err
		}
		if old, ok := r.Get(row.ID); ok {
			c.quota = old.QuotaWindows() // in-memory observations survive a reload
			c.adoptReach(old)
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
	loadErr := ""
	secret, err := box.Open(secretSealed)
	if err != nil {
		secret, loadErr = "", CredentialUnreadable
	}
	base := row.BaseURL
	var cd providers.ConnData
	if p.Module != nil && p.Module.Connect != nil {
		if cd, err = p.Module.Connect(providers.ConnInput{Data: row.ProviderSpecificData, Secret: secret, Open: box.Open}); err != nil {
			cd, loadErr = providers.ConnData{}, CredentialUnreadable
		}
		if base == "" {
			base = cd.BaseURL
		}
	}
	if base == "" {
		base = p.BaseURL
	}
	models := ServedModels(row)
	hidden := HiddenModels(row)
	if cd.Format != "" {
		p.Format = cd.Format // e.g. a resource served through the Responses API
	}
	own := append([]string(nil), cd.Models...)
	sort.Strings(own)
	for _, m := range own {
		if !slices.Contains(models, m) && !slices.Contains(hidden, m) {
			models = append(models, m) // a mapped model routes before any refresh
		}
	}
	var hiddenSet map[string]struct{}
	if len(hidden) > 0 {
		hiddenSet = setOf(hidden)
	}
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
	var expires time.Time
	if row.ExpiresAt > 0 {
		expires = time.UnixMilli(row.ExpiresAt)
	}
	return &Conn{
		ID: row.ID, Provider: p, Name: row.Name, AuthType: row.AuthType, BaseURL: base,
		Prefix: strings.ToLower(row.Prefix), Priority: row.Priority, Active: row.IsActive && loadErr == "", LoadError: loadErr,
		MaxConcurrent: mc, Models: models, modelSet: setOf(models), hidden: hiddenSet, Aliases: ModelAliases(row), CreatedAt: row.CreatedAt, BreakerKey: key, secret: secret, expiresAt: expires,
		Account: AccountFromData(row.ProviderSpecificData), HasRefresh: row.RefreshTokenEnc != "",
		parts: cd.Parts,
		quota: Quota{FiveHour: Window{Utilization: -1}, Weekly: Window{Utilization: -1}, Daily: Window{Utilization: -1}},
		cd:    CooldownFromRow(row), overrides: parseOverrides(row.RateLimitOverrides),
		Limits:       parseLimits(row.RateLimitOverrides, mc, row.RateLimitProtection),
		LocalAddress: LocalAddressOf(row.ProviderSpecificData), Prefill: PrefillOf(row.ProviderSpecificData),
	}, nil
}

// AccountFromData reads a connection's providerSpecificData: accountId,
// organizationUUID and the usage wall opt-ins lowPriorityMode and
// autoLimitReset (both off unless exactly true).
func AccountFromData(raw string) providers.Account {
	var d struct {
		AccountID        string `json:"accountId"`
		OrganizationUUID string `json:"organizationUUID"`
		LowPriorityMode  bool   `json:"lowPriorityMode"`
		AutoLimitReset   bool   `json:"autoLimitReset"`
	}
	_ = json.Unmarshal([]byte(raw), &d)
	return providers.Account{ID: d.AccountID, OrganizationUUID: d.OrganizationUUID, LowPriorityMode: d.LowPriorityMode, AutoLimitReset: d.AutoLimitReset}
}

// ServedModels is what a connection serves: the user's list first, then the
// discovered names it does not already hold (exact, case-sensitive: upstream
// model ids are), less the models the user hid.
func ServedModels(row store.Connection) []string {
	hidden := HiddenModels(row)
	all := KnownModels(row)
	if len(hidden) == 0 {
		return all
	}
	out := all[:0]
	for _, m := range all {
		if !slices.Contains(hidden, m) {
			out = append(out, m)
		}
	}
	return out
}

// KnownModels is every model a connection knows of, hidden or not: the
// user's list, then the discovered names it does not already hold.
func KnownModels(row store.Connection) []string {
	var listed, found []string
	_ = json.Unmarshal([]byte(row.Models), &listed)
	_ = json.Unmarshal([]byte(row.DiscoveredModels), &found)
	out := make([]string, 0, len(listed)+len(found))
	seen := make(map[string]bool, len(listed)+len(found))
	for _, m := range append(listed, found...) {
		if m != "" && !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}

// HiddenModels is the connection's hidden_models column (nil when empty or
// unreadable).
func HiddenModels(row store.Connection) []string {
	var out []string
	_ = json.Unmarshal([]byte(row.HiddenModels), &out)
	return out
}

// ModelAliases is the connection's model_aliases column, alias → model (nil
// when empty or unreadable).
func ModelAliases(row store.Connection) map[string]string {
	var out map[string]string
	_ = json.Unmarshal([]byte(row.ModelAliases), &out)
	if len(out) == 0 {
		return nil
	}
	return out
}

func setOf(list []string) map[string]struct{} {
	m := make(map[string]struct{}, len(list))
	for _, v := range list {
		m[v] = struct{}{}
	}
	return m
}

// Serves reports whether the connection serves model as a bare name.
func (c *Conn) Serves(model string) bool {
	if c.modelSet == nil {
		return slices.Contains(c.Models, model)
	}
	_, ok := c.modelSet[model]
	return ok
}

// Hides reports whether the user hid model on this connection.
func (c *Conn) Hides(model string) bool {
	_, ok := c.hidden[model]
	return ok
}

// Upstream is the model a request naming name sends on this connection: an
// alias's model, else name itself; ok is false when that model is hidden here.
func (c *Conn) Upstream(name string) (model string, ok bool) {
	model = name
	if t, isAlias := c.Aliases[name]; isAlias {
		model = t
	}
	return model, !c.Hides(model)
}

// Limits are what a connection declares for the concurrency gate and the
// request queue (guide §4–§5), read once when the registry loads.
type Limits struct {
	// MaxConcurrent is the connection's cap on requests in flight: the lower
	// positive value of the max_concurrent column and
	// rateLimitOverrides.maxConcurrent (0 = no cap).
	MaxConcurrent int
	// ModelConcurrency caps requests in flight per exact upstream model id
	// (rateLimitOverrides.modelConcurrency); absent models have no cap.
	ModelConcurrency map[string]int
	// Queue are the per-connection queue overrides (maxWaitMs,
	// executionMaxWaitMs, requestsPerMinute, minTimeMs).
	Queue queue.Overrides
	// Protection is rateLimitProtection: true turns the queue on explicitly;
	// false and nil are the same (the auto-enable safety net still applies).
	Protection bool
}

// ModelCap is the cap of one upstream model (0 = none).
func (l Limits) ModelCap(model string) int { return l.ModelConcurrency[model] }

func parseLimits(raw string, column int, protection *bool) Limits {
	var o struct {
		MaxConcurrent    *int           `json:"maxConcurrent"`
		ModelConcurrency map[string]int `json:"modelConcurrency"`
	}
	l := Limits{MaxConcurrent: max(column, 0), Protection: protection != nil && *protection}
	_ = json.Unmarshal([]byte(raw), &o)
	_ = json.Unmarshal([]byte(raw), &l.Queue)
	if o.MaxConcurrent != nil && *o.MaxConcurrent > 0 && (l.MaxConcurrent == 0 || *o.MaxConcurrent < l.MaxConcurrent) {
		l.MaxConcurrent = *o.MaxConcurrent
	}
	for m, n := range o.ModelConcurrency {
		if n > 0 {
			if l.ModelConcurrency == nil {
				l.ModelConcurrency = map[string]int{}
			}
			l.ModelConcurrency[m] = n
		}
	}
	return l
}

// Protected reports whether the connection's requests go through the request
// queue: explicitly (rateLimitProtection true), or as an active API-key
// provider connection while autoEnableApiKeyProviders is on (guide §5).
func (c *Conn) Protected(autoEnableAPIKeyProviders bool) bool {
	return c.Limits.Protection || (autoEnableAPIKeyProviders && c.Active && c.Provider.Category == providers.CategoryAPIKey)
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

// PrefillMode says how an upstream continues a trailing assistant message
// (a stream continuation's prefill), declared per connection.
type PrefillMode string

// The prefill modes a connection may declare.
const (
	// PrefillNone: the endpoint answers a trailing assistant message with a
	// new turn; it never continues a stream.
	PrefillNone PrefillMode = "none"
	// PrefillTrailing: a trailing assistant message is continued as it is
	// (Anthropic Messages, llama.cpp's server).
	PrefillTrailing PrefillMode = "trailing"
	// PrefillVLLM: continued with continue_final_message (vLLM's server).
	PrefillVLLM PrefillMode = "vllm"
	// PrefillDeepSeek: continued with "prefix": true on the message
	// (DeepSeek's chat prefix completion).
	PrefillDeepSeek PrefillMode = "deepseek"
)

// PrefillOf reads providerSpecificData.assistantPrefill ("" when absent or
// not a known mode).
func PrefillOf(providerSpecificData string) PrefillMode {
	var d struct {
		AssistantPrefill string `json:"assistantPrefill"`
	}
	_ = json.Unmarshal([]byte(providerSpecificData), &d)
	switch m := PrefillMode(strings.TrimSpace(d.AssistantPrefill)); m {
	case PrefillNone, PrefillTrailing, PrefillVLLM, PrefillDeepSeek:
		return m
	}
	return ""
}

// Prefills reports whether the connection can continue a stream of model
// from a trailing assistant message: its declared mode, else its provider's
// (Anthropic Messages can, OpenAI Chat cannot).
func (c *Conn) Prefills(model string) bool {
	if c.Prefill != "" {
		return c.Prefill != PrefillNone
	}
	return c.Provider.Prefills(model)
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
	return CooldownFromFields(row.CooldownFields())
}

// CooldownFromFields reads stored resilience columns (CooldownFields' inverse;
// the in-memory failure streak is zero).
func CooldownFromFields(row store.CooldownFields) cooldown.State {
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
	case "banned", "expired", "credits_exhausted", "key_rejected", "endpoint_not_found":
		// key_rejected: the upstream answered 401/403 to the credential check;
		// endpoint_not_found: its base URL answered 404 to it.
		st.Terminal = row.TestStatus
	}
	return st
}

// AdoptCooldowns takes the persisted cooldown columns of rows into the
// matching connections whose in-memory state differs, and returns those
// connections: another instance sharing the database cooled, cleared or
// terminated them. The in-memory-only failure streak is kept. Nothing is
// written back.
func (r *Registry) AdoptCooldowns(rows []store.Connection) []*Conn {
	var changed []*Conn
	for _, row := range rows {
		c, ok := r.Get(row.ID)
		if !ok {
			continue
		}
		next := CooldownFromRow(row)
		c.mu.Lock()
		if CooldownFields(c.cd) != CooldownFields(next) {
			next.FailStreak = c.cd.FailStreak
			c.cd = next
			changed = append(changed, c)
		}
		c.mu.Unlock()
	}
	return changed
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

// Unloadable lists the connections loaded switched off because their
// stored credential does not open (LoadError set).
func (r *Registry) Unloadable() []*Conn {
	var out []*Conn
	for _, c := range r.All() {
		if c.LoadError != "" {
			out = append(out, c)
		}
	}
	return out
}

// Get returns one connection.
func (r *Registry) Get(id string) (*Conn, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	c, ok := r.byID[id]
	return c, ok
}
