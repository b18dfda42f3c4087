package config

import (
	"encoding/json"
	"fmt"
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
	// StreamIdleTimeoutMs ends a stream that sends nothing for this long.
	StreamIdleTimeoutMs int64 `json:"streamIdleTimeoutMs"`
	// RequestLogRetention is how many request log rows are kept.
	RequestLogRetention int `json:"requestLogRetention"`
}

// DefaultGeneral returns the defaults.
func DefaultGeneral() General {
	return General{
		RequireAPIKey:        true,
		SessionAffinityTTLMs: 30 * 60 * 1000,
		MaxBodyBytes:         32 << 20,
		MaxAttempts:          6,
		FirstByteTimeoutMs:   120_000,
		StreamIdleTimeoutMs:  300_000,
		RequestLogRetention:  10_000,
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
	case g.RequestLogRetention < 100 || g.RequestLogRetention > 10_000_000:
		return &FieldError{"requestLogRetention", "must be between 100 and 10000000"}
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
	dec := json.NewDecoder(bytesReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var ute *json.UnmarshalTypeError
		if asType(err, &ute) {
			return &FieldError{ute.Field, fmt.Sprintf("must be a %s", ute.Type.String())}
		}
		return &FieldError{"", err.Error()}
	}
	return nil
}
