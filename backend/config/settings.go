package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

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
	// ProviderErrorRules are the operator's provider error rules (guide §7,
	// #11104): tried before the built-in ones, with full error text and their
	// declared scope honoured. A PATCH replaces the whole list.
	ProviderErrorRules []rules.Rule `json:"providerErrorRules"`
	// FeatureFlags are switches an operator flips live (no restart).
	FeatureFlags FeatureFlags `json:"featureFlags"`
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
		StreamIdleTimeoutMs:  120_000,
		FirstTokenTimeoutMs:  0,
		AttemptDeadlineMs:    30 * 60 * 1000,
		RequestLogRetention:  10_000,
		RetryBudgetMs:        180_000,
		MaxInFlight:          2048,
		ProviderErrorRules:   []rules.Rule{},
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
	case len(g.FeatureFlags.EmergencyFallbackModel) > 200:
		return &FieldError{"featureFlags.emergencyFallbackModel", "must be at most 200 characters"}
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
