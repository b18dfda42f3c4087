package store

import "database/sql"

// Connection is one row of provider_connections: an account or key of a provider.
// Secret columns hold AES-GCM ciphertext (see package secrets), never plaintext.
type Connection struct {
	ID                  string `gorm:"column:id;primaryKey"`
	Provider            string `gorm:"column:provider"`
	Name                string `gorm:"column:name"`
	AuthType            string `gorm:"column:auth_type"`
	BaseURL             string `gorm:"column:base_url"`
	Prefix              string `gorm:"column:prefix"`
	Priority            int    `gorm:"column:priority"`
	IsActive            bool   `gorm:"column:is_active"`
	MaxConcurrent       *int   `gorm:"column:max_concurrent"`
	RateLimitProtection *bool  `gorm:"column:rate_limit_protection"`
	APIKeyEnc           string `gorm:"column:api_key_enc"`
	AccessTokenEnc      string `gorm:"column:access_token_enc"`
	RefreshTokenEnc     string `gorm:"column:refresh_token_enc"`
	ExpiresAt           int64  `gorm:"column:expires_at"`
	Models              string `gorm:"column:models"`
	// DiscoveredModels is the JSON list the upstream's GET /models answered (or
	// the catalogue default when that failed); the connection serves Models ∪ DiscoveredModels.
	DiscoveredModels  string `gorm:"column:discovered_models"`
	ModelsSource      string `gorm:"column:models_source"`
	ModelsRefreshedAt int64  `gorm:"column:models_refreshed_at"`
	ModelsError       string `gorm:"column:models_error"`
	// HiddenModels is the JSON list of models the user hid on this connection:
	// never in /v1/models, never routed to here. ModelAliases is a JSON object
	// alias → model: the alias is listed and routes to that model here.
	HiddenModels         string `gorm:"column:hidden_models"`
	ModelAliases         string `gorm:"column:model_aliases"`
	ProviderSpecificData string `gorm:"column:provider_specific_data"`
	RateLimitOverrides   string `gorm:"column:rate_limit_overrides"`
	RateLimitedUntil     int64  `gorm:"column:rate_limited_until"`
	TestStatus           string `gorm:"column:test_status"`
	LastError            string `gorm:"column:last_error"`
	LastErrorType        string `gorm:"column:last_error_type"`
	LastErrorAt          int64  `gorm:"column:last_error_at"`
	ErrorCode            string `gorm:"column:error_code"`
	BackoffLevel         int    `gorm:"column:backoff_level"`
	RejectStreak         int    `gorm:"column:reject_streak"`
	ExpiredRetries       int    `gorm:"column:expired_retries"`
	CreatedAt            int64  `gorm:"column:created_at;autoCreateTime:milli"`
	UpdatedAt            int64  `gorm:"column:updated_at;autoUpdateTime:milli"`
}

// TableName names the table.
func (Connection) TableName() string { return "provider_connections" }

// CooldownFields are the per-connection resilience columns written on every state change.
type CooldownFields struct {
	RateLimitedUntil int64
	TestStatus       string
	LastError        string
	LastErrorType    string
	LastErrorAt      int64
	ErrorCode        string
	BackoffLevel     int
	RejectStreak     int
	ExpiredRetries   int
}

// CooldownFields returns the connection's resilience columns.
func (c Connection) CooldownFields() CooldownFields {
	return CooldownFields{RateLimitedUntil: c.RateLimitedUntil, TestStatus: c.TestStatus, LastError: c.LastError,
		LastErrorType: c.LastErrorType, LastErrorAt: c.LastErrorAt, ErrorCode: c.ErrorCode, BackoffLevel: c.BackoffLevel,
		RejectStreak: c.RejectStreak, ExpiredRetries: c.ExpiredRetries}
}

// APIKey is a client key: only its SHA-256 is used for lookup; the value itself
// is kept encrypted so the default key can be shown again to its owner.
type APIKey struct {
	ID                 string `gorm:"column:id;primaryKey"`
	Name               string `gorm:"column:name"`
	KeyHash            string `gorm:"column:key_hash"`
	KeyEnc             string `gorm:"column:key_enc"`
	KeyPrefix          string `gorm:"column:key_prefix"`
	Scopes             string `gorm:"column:scopes"`
	AllowedConnections string `gorm:"column:allowed_connections"`
	AllowedModels      string `gorm:"column:allowed_models"`
	IsDefault          bool   `gorm:"column:is_default"`
	// Budget and Limits are the key's spend budget and rate limits as JSON
	// ("" for none; see backend/budget).
	Budget string `gorm:"column:budget"`
	Limits string `gorm:"column:limits"`
	// Private keys' requests are never body-captured (backend/capture).
	Private bool `gorm:"column:private"`
	// OwnerUserID is the user the key belongs to ("" for none).
	OwnerUserID string `gorm:"column:owner_user_id"`
	CreatedAt   int64  `gorm:"column:created_at;autoCreateTime:milli"`
	LastUsedAt  int64  `gorm:"column:last_used_at"`
	// ExpiresAt is when the key stops working (unix ms; 0: never).
	ExpiresAt int64 `gorm:"column:expires_at"`
	// PrevKeyHash is the hash of the secret a rotation replaced, accepted
	// until PrevValidUntil (unix ms, the grace period's end); RotatedAt is
	// when the key was last rotated (0: never).
	PrevKeyHash    string `gorm:"column:prev_key_hash"`
	PrevValidUntil int64  `gorm:"column:prev_valid_until"`
	RotatedAt      int64  `gorm:"column:rotated_at"`
}

// TableName names the table.
func (APIKey) TableName() string { return "api_keys" }

// KeyValue is one persisted setting.
type KeyValue struct {
	Namespace string `gorm:"column:namespace;primaryKey"`
	Key       string `gorm:"column:key;primaryKey"`
	Value     string `gorm:"column:value"`
	UpdatedAt int64  `gorm:"column:updated_at;autoUpdateTime:milli"`
}

// TableName names the table.
func (KeyValue) TableName() string { return "key_value" }

// BreakerRow is the persisted state of one provider circuit breaker.
type BreakerRow struct {
	Provider             string `gorm:"column:provider;primaryKey"`
	State                string `gorm:"column:state"`
	Failures             int    `gorm:"column:failures"`
	ConsecutiveSuccesses int    `gorm:"column:consecutive_successes"`
	OpenCycles           int    `gorm:"column:open_cycles"`
	LastFailureAt        int64  `gorm:"column:last_failure_at"`
	OpenedAt             int64  `gorm:"column:opened_at"`
	StateChangedAt       int64  `gorm:"column:state_changed_at"`
	UpdatedAt            int64  `gorm:"column:updated_at;autoUpdateTime:milli"`
}

// TableName names the table.
func (BreakerRow) TableName() string { return "domain_circuit_breakers" }

// RequestLog is one served client request with its attempts.
type RequestLog struct {
	ID               int64  `gorm:"column:id;primaryKey;autoIncrement"`
	RequestID        string `gorm:"column:request_id"`
	CreatedAt        int64  `gorm:"column:created_at;autoCreateTime:milli"`
	APIKeyID         string `gorm:"column:api_key_id"`
	ClientFormat     string `gorm:"column:client_format"`
	Model            string `gorm:"column:model"`
	Provider         string `gorm:"column:provider"`
	ConnectionID     string `gorm:"column:connection_id"`
	Status           int    `gorm:"column:status"`
	Stream           bool   `gorm:"column:stream"`
	AttemptCount     int    `gorm:"column:attempt_count"`
	Attempts         string `gorm:"column:attempts"`
	LatencyMs        int64  `gorm:"column:latency_ms"`
	ErrorCode        string `gorm:"column:error_code"`
	PromptTokens     int    `gorm:"column:prompt_tokens"`
	CompletionTokens int    `gorm:"column:completion_tokens"`
	// QueueMs is the time spent in the concurrency gate and request queue
	// before dispatch (LatencyMs includes it).
	QueueMs int64 `gorm:"column:queue_ms"`
	// QueueReason says what the request waited for, or the admission code
	// that refused it ("" when it went straight through).
	QueueReason  string `gorm:"column:queue_reason"`
	CachedTokens int    `gorm:"column:cached_tokens"`
	// CostUSD is what the answer cost at its connection's prices (0 on a
	// flat-rate connection); NULL when its price is unknown or nothing was
	// served.
	CostUSD sql.NullFloat64 `gorm:"column:cost_usd"`
	// SavedUSD is what a flat-rate connection's answer would have cost at API
	// prices (0 on a metered connection).
	SavedUSD float64 `gorm:"column:saved_usd"`
}

// TableName names the table.
func (RequestLog) TableName() string { return "request_logs" }

// Combo is a named model group routed by a strategy.
type Combo struct {
	ID        string `gorm:"column:id;primaryKey"`
	Name      string `gorm:"column:name"`
	Strategy  string `gorm:"column:strategy"`
	Targets   string `gorm:"column:targets"`
	Config    string `gorm:"column:config"`
	CreatedAt int64  `gorm:"column:created_at;autoCreateTime:milli"`
	UpdatedAt int64  `gorm:"column:updated_at;autoUpdateTime:milli"`
}

// TableName names the table.
func (Combo) TableName() string { return "combos" }

// RequestBodies are one request's captured bodies (backend/capture), redacted
// and capped: the client's request and answer, and what went to and came
// from the upstream (its last attempt). Truncated counts the bytes cut.
type RequestBodies struct {
	RequestID        string `gorm:"column:request_id;primaryKey"`
	CreatedAt        int64  `gorm:"column:created_at"`
	APIKeyID         string `gorm:"column:api_key_id"`
	Model            string `gorm:"column:model"`
	ClientFormat     string `gorm:"column:client_format"`
	UpstreamFormat   string `gorm:"column:upstream_format"`
	Stream           bool   `gorm:"column:stream"`
	ClientRequest    string `gorm:"column:client_request"`
	UpstreamRequest  string `gorm:"column:upstream_request"`
	UpstreamResponse string `gorm:"column:upstream_response"`
	ClientResponse   string `gorm:"column:client_response"`
	Bytes            int64  `gorm:"column:bytes"`
	Truncated        int64  `gorm:"column:truncated"`
}

// TableName names the table.
func (RequestBodies) TableName() string { return "request_bodies" }
