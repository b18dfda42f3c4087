package config

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"omniroute/backend/resilience/breaker"
	"omniroute/backend/resilience/cooldown"
)

// Resilience is the `GET/PATCH /api/resilience` document. Env variables supply
// its defaults, persisted values win over env, per-connection overrides win over both.
type Resilience struct {
	RequestQueue               RequestQueue       `json:"requestQueue"`
	ConnectionCooldown         ConnectionCooldown `json:"connectionCooldown"`
	ProviderBreaker            ProviderBreaker    `json:"providerBreaker"`
	ProviderCooldown           ProviderCooldown   `json:"providerCooldown"`
	ComboCooldownWait          ComboCooldownWait  `json:"comboCooldownWait"`
	QuotaShareConcurrencyLimit Toggle             `json:"quotaShareConcurrencyLimit"`
	StreamStallCooldown        Toggle             `json:"streamStallCooldown"`
	StreamRecovery             StreamRecovery     `json:"streamRecovery"`
	ModelLockout               ModelLockout       `json:"modelLockout"`
	Failover                   Failover           `json:"failover"`
}

// Failover tunes how the attempt loop rescues a request (in-place retry of
// the transient, repeated-failure backoff, quota cooldowns, stream continuation).
type Failover struct {
	// RetryMaxHintMs is the longest upstream Retry-After a 429 may carry and still
	// be retried on the same target after waiting it out (0 turns that off).
	RetryMaxHintMs int64 `json:"retryMaxHintMs"`
	// RetriesPerTarget bounds in-place retries of a transient failure (429 with a
	// short hint, 5xx or reset before the first byte) for plain models; combos use
	// their own maxRetriesPerTarget.
	RetriesPerTarget int `json:"retriesPerTarget"`
	// FailureStreak consecutive 5xx / transport failures on one connection, across
	// its models, cool it with the exponential ladder (0 turns it off).
	FailureStreak int `json:"failureStreak"`
	// QuotaCooldownMs cools a connection whose quota is exhausted when the
	// upstream announced no reset.
	QuotaCooldownMs int64 `json:"quotaCooldownMs"`
	// StreamContinuation lets a broken committed stream be finished by another
	// target that accepts an assistant prefill.
	StreamContinuation bool `json:"streamContinuation"`
}

// MaxRetryHintMs is the largest accepted failover.retryMaxHintMs: a longer wait
// belongs to comboCooldownWait or the client, not to an in-place retry.
const MaxRetryHintMs = 60_000

// Toggle is a section with only an on/off switch.
type Toggle struct {
	Enabled bool `json:"enabled"`
}

// RequestQueue is the per-connection admission queue (guide §5).
type RequestQueue struct {
	AutoEnableAPIKeyProviders bool  `json:"autoEnableApiKeyProviders"`
	MaxWaitMs                 int64 `json:"maxWaitMs"`
	ExecutionMaxWaitMs        int64 `json:"executionMaxWaitMs"`
	MaxQueueDepth             int   `json:"maxQueueDepth"`
}

// CooldownProfile tunes the connection cooldown of one auth type (guide §2).
type CooldownProfile struct {
	BaseCooldownMs        int64 `json:"baseCooldownMs"`
	UseUpstreamRetryHints bool  `json:"useUpstreamRetryHints"`
	MaxBackoffSteps       int   `json:"maxBackoffSteps"`
	MaxHintCooldownMs     int64 `json:"maxHintCooldownMs"`
}

// ConnectionCooldown holds the OAuth and API-key cooldown profiles.
type ConnectionCooldown struct {
	OAuth  CooldownProfile `json:"oauth"`
	APIKey CooldownProfile `json:"apikey"`
}

// BreakerProfile tunes the provider breaker of one provider category (guide §1).
type BreakerProfile struct {
	FailureThreshold     int   `json:"failureThreshold"`
	DegradationThreshold int   `json:"degradationThreshold"`
	ResetTimeoutMs       int64 `json:"resetTimeoutMs"`
	// MaxBackoffMultiplier caps the OPEN hold's growth over failed probes
	// (hold × min(2^(cycles−1), this)) and scales a DEGRADED breaker's quiet
	// window (guide §1); 1–64, default 1 (no growth). The probe interval
	// (15 s) still lets a probe through sooner.
	MaxBackoffMultiplier int `json:"maxBackoffMultiplier"`
	// OpenByKindMs is the OPEN hold per kind of the failure that opened the
	// breaker (the guide's cooldownByKind); 0 uses ResetTimeoutMs.
	OpenByKindMs BreakerKindHolds `json:"openByKindMs"`
}

// BreakerKindHolds is a breaker's OPEN hold per failure kind, in ms; 0 (the
// default) means "resetTimeoutMs".
type BreakerKindHolds struct {
	ServerMs    int64 `json:"serverMs"`
	TransportMs int64 `json:"transportMs"`
	TimeoutMs   int64 `json:"timeoutMs"`
}

// ProviderBreaker holds the breaker profiles per category.
type ProviderBreaker struct {
	OAuth  BreakerProfile `json:"oauth"`
	APIKey BreakerProfile `json:"apikey"`
	Local  BreakerProfile `json:"local"`
}

// WindowProfile tunes the optional provider cooldown window gate.
type WindowProfile struct {
	FailureThreshold int   `json:"failureThreshold"`
	FailureWindowMs  int64 `json:"failureWindowMs"`
	CooldownMs       int64 `json:"cooldownMs"`
}

// ProviderCooldown is the opt-in provider cooldown window gate.
type ProviderCooldown struct {
	Enabled bool          `json:"enabled"`
	OAuth   WindowProfile `json:"oauth"`
	APIKey  WindowProfile `json:"apikey"`
	Local   WindowProfile `json:"local"`
}

// ComboCooldownWait bounds waiting out a short transient cooldown in combos.
type ComboCooldownWait struct {
	Enabled     bool  `json:"enabled"`
	MaxWaitMs   int64 `json:"maxWaitMs"`
	MaxAttempts int   `json:"maxAttempts"`
	BudgetMs    int64 `json:"budgetMs"`
}

// ThroughputWatchdog is the opt-in slow-stream guard (guide §6).
type ThroughputWatchdog struct {
	Enabled            bool  `json:"enabled"`
	WarmupMs           int64 `json:"warmupMs"`
	WindowMs           int64 `json:"windowMs"`
	MinBytesPerSecond  int64 `json:"minBytesPerSecond"`
	MinMeasurableBytes int64 `json:"minMeasurableBytes"`
}

// StreamRecovery groups stream recovery guards.
type StreamRecovery struct {
	ThroughputWatchdog ThroughputWatchdog `json:"throughputWatchdog"`
}

// ModelLockout tunes model lockouts (guide §3).
type ModelLockout struct {
	Enabled               bool  `json:"enabled"`
	ErrorCodes            []int `json:"errorCodes"`
	BaseCooldownMs        int64 `json:"baseCooldownMs"`
	MaxCooldownMs         int64 `json:"maxCooldownMs"`
	MaxBackoffSteps       int   `json:"maxBackoffSteps"`
	UseExponentialBackoff bool  `json:"useExponentialBackoff"`
}

func cooldownProfile(category string) CooldownProfile {
	s := cooldown.DefaultSettings(category)
	return CooldownProfile{BaseCooldownMs: s.BaseCooldown.Milliseconds(), UseUpstreamRetryHints: s.UseUpstreamRetryHints,
		MaxBackoffSteps: s.MaxBackoffSteps, MaxHintCooldownMs: s.MaxHintCooldown.Milliseconds()}
}

func breakerProfile(p breaker.Profile) BreakerProfile {
	return BreakerProfile{FailureThreshold: p.FailureThreshold, DegradationThreshold: p.DegradationThreshold, ResetTimeoutMs: p.ResetTimeout.Milliseconds(),
		MaxBackoffMultiplier: p.MaxBackoffMultiplier,
		OpenByKindMs: BreakerKindHolds{ServerMs: p.OpenByKind.Server.Milliseconds(), TransportMs: p.OpenByKind.Transport.Milliseconds(),
			TimeoutMs: p.OpenByKind.Timeout.Milliseconds()}}
}

func windowProfile(p breaker.WindowProfile) WindowProfile {
	return WindowProfile{FailureThreshold: p.FailureThreshold, FailureWindowMs: p.Window.Milliseconds(), CooldownMs: p.Cooldown.Milliseconds()}
}

// DefaultResilience returns the guide's defaults with env overrides applied.
func DefaultResilience(getenv func(string) string) Resilience {
	bp := breaker.ProfilesFromEnv(getenv)
	wp := breaker.WindowProfilesFromEnv(getenv)
	r := Resilience{
		RequestQueue:       RequestQueue{AutoEnableAPIKeyProviders: true, MaxWaitMs: 30_000, ExecutionMaxWaitMs: 600_000, MaxQueueDepth: 0},
		ConnectionCooldown: ConnectionCooldown{OAuth: cooldownProfile("oauth"), APIKey: cooldownProfile("apikey")},
		ProviderBreaker: ProviderBreaker{OAuth: breakerProfile(bp["oauth"]), APIKey: breakerProfile(bp["apikey"]),
			Local: breakerProfile(bp["local"])},
		ProviderCooldown: ProviderCooldown{Enabled: envBool(getenv("PROVIDER_COOLDOWN_ENABLED"), false),
			OAuth: windowProfile(wp["oauth"]), APIKey: windowProfile(wp["apikey"]), Local: windowProfile(wp["local"])},
		ComboCooldownWait:          ComboCooldownWait{Enabled: true, MaxWaitMs: 65_000, MaxAttempts: 2, BudgetMs: 120_000},
		QuotaShareConcurrencyLimit: Toggle{Enabled: true},
		StreamStallCooldown:        Toggle{Enabled: false},
		StreamRecovery: StreamRecovery{ThroughputWatchdog: ThroughputWatchdog{
			Enabled: envBool(getenv("STREAM_THROUGHPUT_WATCHDOG_ENABLED"), false), WarmupMs: 10_000, WindowMs: 20_000,
			MinBytesPerSecond: 8, MinMeasurableBytes: 64}},
		ModelLockout: ModelLockout{Enabled: false, ErrorCodes: []int{403, 404, 429, 502, 503, 504}, BaseCooldownMs: 120_000,
			MaxCooldownMs: 1_800_000, MaxBackoffSteps: 10, UseExponentialBackoff: true},
		Failover: Failover{RetryMaxHintMs: 5_000, RetriesPerTarget: 1, FailureStreak: cooldown.DefaultFailureStreak,
			QuotaCooldownMs: cooldown.DefaultQuotaCooldown.Milliseconds(), StreamContinuation: true},
	}
	if v, ok := envInt(getenv("RATE_LIMIT_MAX_WAIT_MS")); ok {
		r.RequestQueue.MaxWaitMs = v
	}
	if v, ok := envInt(getenv("RATE_LIMIT_EXECUTION_MAX_WAIT_MS")); ok {
		r.RequestQueue.ExecutionMaxWaitMs = v
	}
	if v, ok := envInt(getenv("RATE_LIMIT_MAX_QUEUE_DEPTH")); ok {
		r.RequestQueue.MaxQueueDepth = int(v)
	}
	r.clamp()
	return r
}

func envBool(v string, def bool) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "on", "yes":
		return true
	case "0", "false", "off", "no":
		return false
	}
	return def
}

func envInt(v string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	return n, err == nil && n >= 0
}

const day = 24 * 3600 * 1000

func clamp64(v, lo, hi int64) int64 { return min(max(v, lo), hi) }

// clamp brings every numeric field into its documented range.
func (r *Resilience) clamp() {
	q := &r.RequestQueue
	q.MaxWaitMs = clamp64(q.MaxWaitMs, 1, day)
	q.ExecutionMaxWaitMs = clamp64(q.ExecutionMaxWaitMs, 1, day)
	q.MaxQueueDepth = int(clamp64(int64(q.MaxQueueDepth), 0, 100_000))
	for _, c := range []*CooldownProfile{&r.ConnectionCooldown.OAuth, &r.ConnectionCooldown.APIKey} {
		c.BaseCooldownMs = clamp64(c.BaseCooldownMs, 100, 600_000)
		c.MaxBackoffSteps = int(clamp64(int64(c.MaxBackoffSteps), 0, 15))
		c.MaxHintCooldownMs = clamp64(c.MaxHintCooldownMs, 1000, day)
	}
	for _, b := range []*BreakerProfile{&r.ProviderBreaker.OAuth, &r.ProviderBreaker.APIKey, &r.ProviderBreaker.Local} {
		b.FailureThreshold = int(clamp64(int64(b.FailureThreshold), 1, 1000))
		b.DegradationThreshold = int(clamp64(int64(b.DegradationThreshold), 0, 1000))
		b.ResetTimeoutMs = clamp64(b.ResetTimeoutMs, 1000, 3600_000)
		b.MaxBackoffMultiplier = int(clamp64(int64(b.MaxBackoffMultiplier), 1, 64))
		for _, h := range []*int64{&b.OpenByKindMs.ServerMs, &b.OpenByKindMs.TransportMs, &b.OpenByKindMs.TimeoutMs} {
			if *h != 0 { // 0: resetTimeoutMs
				*h = clamp64(*h, 1000, 3600_000)
			}
		}
	}
	for _, w := range []*WindowProfile{&r.ProviderCooldown.OAuth, &r.ProviderCooldown.APIKey, &r.ProviderCooldown.Local} {
		w.FailureThreshold = int(clamp64(int64(w.FailureThreshold), 1, 10_000))
		w.FailureWindowMs = clamp64(w.FailureWindowMs, 1000, day)
		w.CooldownMs = clamp64(w.CooldownMs, 1000, day)
	}
	c := &r.ComboCooldownWait
	c.MaxWaitMs = clamp64(c.MaxWaitMs, 0, 3600_000)
	c.MaxAttempts = int(clamp64(int64(c.MaxAttempts), 0, 20))
	c.BudgetMs = clamp64(c.BudgetMs, 0, 3600_000)
	t := &r.StreamRecovery.ThroughputWatchdog
	t.WarmupMs = clamp64(t.WarmupMs, 0, 600_000)
	t.WindowMs = clamp64(t.WindowMs, 1000, 600_000)
	t.MinBytesPerSecond = clamp64(t.MinBytesPerSecond, 0, 1<<20)
	t.MinMeasurableBytes = clamp64(t.MinMeasurableBytes, 0, 1<<20)
	m := &r.ModelLockout
	m.BaseCooldownMs = clamp64(m.BaseCooldownMs, 1000, day)
	m.MaxCooldownMs = clamp64(m.MaxCooldownMs, 1000, day)
	m.MaxBackoffSteps = int(clamp64(int64(m.MaxBackoffSteps), 0, 20))
	f := &r.Failover
	f.RetriesPerTarget = int(clamp64(int64(f.RetriesPerTarget), 0, 5))
	f.FailureStreak = int(clamp64(int64(f.FailureStreak), 0, 100))
	f.QuotaCooldownMs = clamp64(f.QuotaCooldownMs, 1000, day)
}

// Validate rejects values no clamp can make sense of.
func (r Resilience) Validate() error {
	for name, b := range map[string]BreakerProfile{"oauth": r.ProviderBreaker.OAuth, "apikey": r.ProviderBreaker.APIKey, "local": r.ProviderBreaker.Local} {
		if b.DegradationThreshold >= b.FailureThreshold && b.DegradationThreshold != 0 {
			return &FieldError{"providerBreaker." + name + ".degradationThreshold", "must be below failureThreshold (0 derives it)"}
		}
	}
	if r.Failover.RetryMaxHintMs > MaxRetryHintMs {
		return &FieldError{"failover.retryMaxHintMs", fmt.Sprintf("must be at most %d (longer waits belong to comboCooldownWait)", MaxRetryHintMs)}
	}
	m := r.ModelLockout
	if m.MaxCooldownMs < m.BaseCooldownMs {
		return &FieldError{"modelLockout.maxCooldownMs", "must be at least baseCooldownMs"}
	}
	for _, c := range m.ErrorCodes {
		if c < 400 || c > 599 {
			return &FieldError{"modelLockout.errorCodes", fmt.Sprintf("%d is not an HTTP error status (400-599)", c)}
		}
	}
	return nil
}

// negativeField finds a negative number anywhere in a JSON patch.
func negativeField(prefix string, v any) string {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			if f := negativeField(p, x); f != "" {
				return f
			}
		}
	case []any:
		for _, x := range t {
			if f := negativeField(prefix, x); f != "" {
				return f
			}
		}
	case float64:
		if t < 0 {
			return prefix
		}
	}
	return ""
}

// mergeJSON deep-merges patch into base (objects merge, everything else replaces).
func mergeJSON(base, patch map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(patch))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range patch {
		if pm, ok := v.(map[string]any); ok {
			if bm, ok := out[k].(map[string]any); ok {
				out[k] = mergeJSON(bm, pm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// ResolveResilience computes env defaults < persisted overlay, then applies the
// env variables that the guide says win over the dashboard (RATE_LIMIT_AUTO_ENABLE).
func ResolveResilience(getenv func(string) string, overlay map[string]any) (Resilience, error) {
	r := DefaultResilience(getenv)
	if len(overlay) > 0 {
		b, _ := json.Marshal(overlay)
		if err := strictUnmarshal(b, &r); err != nil {
			return r, err
		}
	}
	if v := getenv("RATE_LIMIT_AUTO_ENABLE"); v != "" {
		r.RequestQueue.AutoEnableAPIKeyProviders = envBool(v, r.RequestQueue.AutoEnableAPIKeyProviders)
	}
	r.clamp()
	return r, r.Validate()
}
