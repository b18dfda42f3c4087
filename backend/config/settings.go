package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"

	"omniroute/backend/forwarded"
	"omniroute/backend/resilience/rules"
)

// General are the persisted general settings (`GET/PATCH /api/settings`).
type General struct {
	RequireAPIKey        bool  `json:"requireApiKey"`
	SessionAffinityTTLMs int64 `json:"sessionAffinityTtlMs"`
	MaxBodyBytes         int64 `json:"maxBodyBytes"`
	// MaxAttempts caps the upstream attempts of one client request.
	MaxAttempts int `json:"maxAttempts"`
	// FirstByteTimeoutMs bounds the wait for an upstream's response headers and first
	// stream event; a timeout before anything reached the client fails over.
	FirstByteTimeoutMs int64 `json:"firstByteTimeoutMs"`
	// StreamFirstByteTimeoutMs bounds the wait for a STREAMING request's
	// response headers (a stream's headers come at once; only its first
	// token may take long), so an upstream that never answers is left in
	// well under a minute; after the headers firstByteTimeoutMs (from the
	// attempt's start) still bounds the first progress frame. A local
	// connection (a server that loads the model before answering) keeps
	// firstByteTimeoutMs for its headers too.
	StreamFirstByteTimeoutMs int64 `json:"streamFirstByteTimeoutMs"`
	// StreamIdleTimeoutMs is the content-stall budget: a stream with no model
	// output (text, tool call or reasoning) for this long is stalled; heartbeats
	// and metadata do not count.
	StreamIdleTimeoutMs int64 `json:"streamIdleTimeoutMs"`
	// FirstTokenTimeoutMs limits the wait for the first text or tool-call output
	// of a stream (0 = off, so long reasoning turns are never cut).
	FirstTokenTimeoutMs int64 `json:"firstTokenTimeoutMs"`
	// AttemptDeadlineMs is the absolute ceiling of one streaming attempt (0 = off).
	AttemptDeadlineMs int64 `json:"attemptDeadlineMs"`
	// MaxInFlight caps concurrent inference requests; past it the gateway sheds
	// load with 503 instead of queueing without bound (memory stays flat).
	MaxInFlight int `json:"maxInFlight"`
	// RetryBudgetMs stops starting new attempts this long after a request began.
	RetryBudgetMs int64 `json:"retryBudgetMs"`
	// RequestLogRetention is how many request log rows are kept.
	RequestLogRetention int `json:"requestLogRetention"`
	// AgentModelMap routes the model names agents ask for on their own to the
	// user's choice when no connection serves them.
	AgentModelMap AgentModelMap `json:"agentModelMap"`
	// BodyReadTimeoutMs bounds the time a client may take to send its request
	// body; past it the request is answered 408 and the connection closed, so
	// slow senders cannot pile up.
	BodyReadTimeoutMs int64 `json:"bodyReadTimeoutMs"`
	// ClientWriteTimeoutMs bounds one write to a client (a stream chunk, an
	// answer): a client that stopped reading for this long is dropped and its
	// attempt cancelled, freeing its in-flight slot and upstream connection.
	ClientWriteTimeoutMs int64 `json:"clientWriteTimeoutMs"`
	// BodyBudgetBytes is the memory all in-flight request bodies may hold
	// together; past it new requests get 503 until bodies are released. It is
	// never less than MaxBodyBytes in effect, so one largest body always fits.
	BodyBudgetBytes int64 `json:"bodyBudgetBytes"`
	// ProviderErrorRules are the operator's provider error rules (guide §7,
	// #11104): tried before the built-in ones, with full error text and their
	// declared scope honoured. A PATCH replaces the whole list.
	ProviderErrorRules []rules.Rule `json:"providerErrorRules"`
	// FeatureFlags are switches an operator flips live (no restart).
	FeatureFlags FeatureFlags `json:"featureFlags"`
	// UpdateCheck opts in to reading the signed release manifest at UpdateURL
	// (at most daily) to say when a newer version exists; nothing is ever
	// downloaded. Off by default.
	UpdateCheck bool   `json:"updateCheck"`
	UpdateURL   string `json:"updateUrl"`
	// MuteNotifications turns the desktop app's notifications off (a
	// connection out of service, a key rejected, a quota exhausted, all
	// serving again).
	MuteNotifications bool `json:"muteNotifications"`
	// PricingFile is the absolute path of the user's pricing file (JSON of
	// the shipped catalogue's shape), whose prices win over the shipped
	// ones; read when set and at start, reloaded when it changes ("" none).
	PricingFile string `json:"pricingFile"`
	// Team are the team server's settings (several instances on one
	// PostgreSQL); a desktop install ignores them.
	Team Team `json:"team"`
	// TrustedProxies are the reverse proxies (IP addresses, CIDR prefixes)
	// whose X-Forwarded-For and X-Forwarded-Proto are believed: the audit's
	// and the failed-auth throttle's source address, and the session
	// cookie's Secure flag behind a TLS-terminating proxy. Empty (the
	// default): the headers are never believed.
	TrustedProxies []string `json:"trustedProxies"`
}

// Team limit modes.
const (
	// TeamLimitsShared holds a connection's maxConcurrent,
	// modelConcurrency, requestsPerMinute / minTimeMs and queue depth, and
	// a client key's RPM / TPM limits, across every instance (the default).
	TeamLimitsShared = "shared"
	// TeamLimitsInstance applies them in each instance alone: with N
	// instances a connection may see N times its limits.
	TeamLimitsInstance = "instance"
)

// Team are the settings of a team server.
type Team struct {
	// Limits is TeamLimitsShared or TeamLimitsInstance.
	Limits string `json:"limits"`
	// SlotLeaseMs is how long a shared concurrency slot outlives an instance
	// that stopped renewing it (died, frozen, cut from the database).
	SlotLeaseMs int64 `json:"slotLeaseMs"`
	// MaxStalenessMs bounds how long an instance that cannot reach the
	// database keeps honouring client keys it has not seen revalidated: past
	// it their new requests are refused with 503 DATABASE_UNAVAILABLE.
	MaxStalenessMs int64 `json:"maxStalenessMs"`
}

// DefaultUpdateURL is where the signed release manifest is published.
const DefaultUpdateURL = "https://omniroute.io/desktop/latest.json"

// AgentModelMap maps the model families coding agents ask for by default
// (Claude Code's opus / sonnet / haiku and small-fast model, Codex's gpt-5*
// codex default) to a model or combo. It applies only to names no connection
// serves; an empty target means the automatic default (the first healthy
// combo, else the first served model).
type AgentModelMap struct {
	Enabled bool   `json:"enabled"`
	Opus    string `json:"opus"`
	Sonnet  string `json:"sonnet"`
	// Haiku also receives Claude Code's small-fast (background) requests:
	// point it at a cheaper model.
	Haiku string `json:"haiku"`
	Codex string `json:"codex"`
}

// Target returns the map's target for a family and whether the map is on.
func (m AgentModelMap) Target(family string) (string, bool) {
	switch family {
	case "opus":
		return m.Opus, m.Enabled
	case "sonnet":
		return m.Sonnet, m.Enabled
	case "haiku":
		return m.Haiku, m.Enabled
	case "codex":
		return m.Codex, m.Enabled
	}
	return "", m.Enabled
}

// Entries lists the map's targets by JSON field name, in display order.
func (m AgentModelMap) Entries() [][2]string {
	return [][2]string{{"opus", m.Opus}, {"sonnet", m.Sonnet}, {"haiku", m.Haiku}, {"codex", m.Codex}}
}

// FeatureFlags are live switches; nil means "the env default".
type FeatureFlags struct {
	// EmergencyFallback: when every target of a request failed or was
	// excluded, try EmergencyFallbackModel once before answering the error.
	// Default from OMNIROUTE_EMERGENCY_FALLBACK.
	EmergencyFallback *bool `json:"emergencyFallback"`
	// EmergencyFallbackModel is the last-resort model (e.g. a local
	// "ollama/llama3.2"); "" disables the fallback even when the flag is on.
	EmergencyFallbackModel string `json:"emergencyFallbackModel"`
}

// DefaultGeneral returns the defaults.
func DefaultGeneral() General {
	return General{
		RequireAPIKey:        true,
		SessionAffinityTTLMs: 30 * 60 * 1000,
		MaxBodyBytes:         32 << 20,
		MaxAttempts:          6,
		FirstByteTimeoutMs:   120_000,
		// A stream's headers: issue 40 (docs/FAILOVER.md "Streams").
		StreamFirstByteTimeoutMs: 30_000,
		StreamIdleTimeoutMs:      120_000,
		FirstTokenTimeoutMs:      0,
		AttemptDeadlineMs:        30 * 60 * 1000,
		RequestLogRetention:      10_000,
		RetryBudgetMs:            180_000,
		MaxInFlight:              2048,
		AgentModelMap:            AgentModelMap{Enabled: true},
		BodyReadTimeoutMs:        30_000,
		ClientWriteTimeoutMs:     30_000,
		BodyBudgetBytes:          256 << 20,
		ProviderErrorRules:       []rules.Rule{},
		TrustedProxies:           []string{},
		UpdateURL:                DefaultUpdateURL,
		Team:                     Team{Limits: TeamLimitsShared, SlotLeaseMs: 10_000, MaxStalenessMs: 60_000},
	}
}

// FieldError names an invalid settings field.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Validate reports the first out-of-range field.
func (g General) Validate() error {
	switch {
	case g.SessionAffinityTTLMs < 0 || g.SessionAffinityTTLMs > 7*24*3600*1000:
		return &FieldError{"sessionAffinityTtlMs", "must be between 0 (off) and 604800000 (7 days)"}
	case g.MaxBodyBytes < 1024 || g.MaxBodyBytes > 512<<20:
		return &FieldError{"maxBodyBytes", "must be between 1024 and 536870912"}
	case g.MaxAttempts < 1 || g.MaxAttempts > 50:
		return &FieldError{"maxAttempts", "must be between 1 and 50"}
	case g.FirstByteTimeoutMs < 1000 || g.FirstByteTimeoutMs > 3600_000:
		return &FieldError{"firstByteTimeoutMs", "must be between 1000 and 3600000"}
	case g.StreamFirstByteTimeoutMs < 1000 || g.StreamFirstByteTimeoutMs > 3600_000:
		return &FieldError{"streamFirstByteTimeoutMs", "must be between 1000 and 3600000"}
	case g.StreamIdleTimeoutMs < 1000 || g.StreamIdleTimeoutMs > 3600_000:
		return &FieldError{"streamIdleTimeoutMs", "must be between 1000 and 3600000"}
	case g.FirstTokenTimeoutMs < 0 || g.FirstTokenTimeoutMs > 3600_000:
		return &FieldError{"firstTokenTimeoutMs", "must be between 0 (off) and 3600000"}
	case g.AttemptDeadlineMs < 0 || g.AttemptDeadlineMs > 24*3600_000:
		return &FieldError{"attemptDeadlineMs", "must be between 0 (off) and 86400000"}
	case g.MaxInFlight < 1 || g.MaxInFlight > 1_000_000:
		return &FieldError{"maxInFlight", "must be between 1 and 1000000"}
	case g.RetryBudgetMs < 1000 || g.RetryBudgetMs > 3600_000:
		return &FieldError{"retryBudgetMs", "must be between 1000 and 3600000"}
	case g.RequestLogRetention < 100 || g.RequestLogRetention > 10_000_000:
		return &FieldError{"requestLogRetention", "must be between 100 and 10000000"}
	case g.BodyReadTimeoutMs < 1000 || g.BodyReadTimeoutMs > 600_000:
		return &FieldError{"bodyReadTimeoutMs", "must be between 1000 and 600000"}
	case g.ClientWriteTimeoutMs < 1000 || g.ClientWriteTimeoutMs > 600_000:
		return &FieldError{"clientWriteTimeoutMs", "must be between 1000 and 600000"}
	case g.BodyBudgetBytes < 1<<20 || g.BodyBudgetBytes > 16<<30:
		return &FieldError{"bodyBudgetBytes", "must be between 1048576 and 17179869184"}
	case !validUpdateURL(g.UpdateURL):
		return &FieldError{"updateUrl", "must be an https URL (or http on a loopback address)"}
	case len(g.PricingFile) > 4096 || strings.ContainsRune(g.PricingFile, 0):
		return &FieldError{"pricingFile", "must be a path of at most 4096 characters"}
	case g.PricingFile != "" && !filepath.IsAbs(g.PricingFile):
		return &FieldError{"pricingFile", "must be an absolute path (or \"\" for none)"}
	case g.Team.Limits != TeamLimitsShared && g.Team.Limits != TeamLimitsInstance:
		return &FieldError{"team.limits", `must be "shared" (limits hold across the instances) or "instance" (each instance alone)`}
	case g.Team.SlotLeaseMs < 2000 || g.Team.SlotLeaseMs > 120_000:
		return &FieldError{"team.slotLeaseMs", "must be between 2000 and 120000"}
	case g.Team.MaxStalenessMs < 1000 || g.Team.MaxStalenessMs > 86_400_000:
		return &FieldError{"team.maxStalenessMs", "must be between 1000 and 86400000"}
	case len(g.FeatureFlags.EmergencyFallbackModel) > 200:
		return &FieldError{"featureFlags.emergencyFallbackModel", "must be at most 200 characters"}
	}
	for _, e := range g.AgentModelMap.Entries() {
		if len(e[1]) > 200 || strings.IndexFunc(e[1], func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
			return &FieldError{"agentModelMap." + e[0], "must be a model or combo name of at most 200 characters without spaces (empty: automatic)"}
		}
	}
	if _, err := forwarded.Parse(g.TrustedProxies); err != nil {
		return &FieldError{"trustedProxies", err.Error()}
	}
	if err := rules.Validate(g.ProviderErrorRules); err != nil {
		var fe *rules.FieldError
		if errors.As(err, &fe) {
			return &FieldError{fe.Field, fe.Message}
		}
		return &FieldError{"providerErrorRules", err.Error()}
	}
	return nil
}

// PatchJSON applies a partial JSON object to s, rejecting unknown fields and wrong
// types, and validates the result. s is unchanged on error.
func PatchJSON[T interface{ Validate() error }](s T, patch []byte) (T, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(patch, &probe); err != nil {
		return s, &FieldError{"", "body must be a JSON object"}
	}
	out := s
	// Decode over a copy; json.Unmarshal only touches the fields present.
	if err := strictUnmarshal(patch, &out); err != nil {
		return s, err
	}
	if err := out.Validate(); err != nil {
		return s, err
	}
	return out, nil
}

func strictUnmarshal(data []byte, v any) error {
	var generic any
	if json.Unmarshal(data, &generic) == nil {
		if f := unknownField(generic, reflect.TypeOf(v), ""); f != "" {
			return &FieldError{f, "is not a known setting"}
		}
	}
	dec := json.NewDecoder(bytesReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var ute *json.UnmarshalTypeError
		if asType(err, &ute) {
			return &FieldError{ute.Field, "must be " + jsonKind(ute.Type)}
		}
		return &FieldError{"", "invalid settings document"}
	}
	return nil
}

// jsonKind names a Go type the way a JSON user thinks of it.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	default:
		return "an object"
	}
}

// unknownField returns the dotted path of the first key in v that t has no
// JSON field for, so a typo gets a 400 naming it.
func unknownField(v any, t reflect.Type, prefix string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if arr, ok := v.([]any); ok && t.Kind() == reflect.Slice {
		for i, el := range arr {
			if p := unknownField(el, t.Elem(), fmt.Sprintf("%s[%d]", prefix, i)); p != "" {
				return p
			}
		}
		return ""
	}
	obj, ok := v.(map[string]any)
	if !ok || t.Kind() != reflect.Struct {
		return ""
	}
	fields := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		fields[strings.ToLower(name)] = f.Type
	}
	for k, sub := range obj {
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		ft, ok := fields[strings.ToLower(k)]
		if !ok {
			return path
		}
		if p := unknownField(sub, ft, path); p != "" {
			return p
		}
	}
	return ""
}

// validUpdateURL accepts an https URL, or http to a loopback host (a mirror on
// this machine, the tests); "" falls back to DefaultUpdateURL.
func validUpdateURL(s string) bool {
	if s == "" {
		return true
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || len(s) > 2048 {
		return false
	}
	if u.Scheme == "https" {
		return true
	}
	h := u.Hostname()
	ip := net.ParseIP(h)
	return u.Scheme == "http" && (h == "localhost" || ip != nil && ip.IsLoopback())
}
