package leases

import (
	"time"

	"omniroute/backend/secrets"
)

// Headers an inference request or a lifecycle call carries for its lease.
const (
	HeaderOwner      = "X-OmniRoute-Lease-Owner"
	HeaderGeneration = "X-OmniRoute-Lease-Generation"
)

// Scope is the API key scope that enables exclusive leases.
const Scope = "lease:exclusive"

// Release reasons written to release_reason.
const (
	ReasonOwnerExit       = "OWNER_EXIT"
	ReasonClientCancelled = "CLIENT_CANCELLED"
	ReasonOperator        = "OPERATOR_RELEASE"
)

// ownerPrefix starts every owner token; ownerBodyLen base64url characters follow.
const (
	ownerPrefix  = "vlo_"
	ownerBodyLen = 43
)

// ValidOwner reports whether tok is exactly "vlo_" followed by 43 base64url
// characters (A–Z, a–z, 0–9, '-', '_'), nothing else: no padding, no spaces.
func ValidOwner(tok string) bool {
	if len(tok) != len(ownerPrefix)+ownerBodyLen || tok[:len(ownerPrefix)] != ownerPrefix {
		return false
	}
	for i := len(ownerPrefix); i < len(tok); i++ {
		c := tok[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}

// OwnerHash validates an owner token and returns its hex SHA-256, the only form
// ever stored or compared. A malformed token is ErrContextInvalid.
func OwnerHash(tok string) (string, error) {
	if !ValidOwner(tok) {
		return "", ErrContextInvalid
	}
	return secrets.Hash(tok), nil
}

// Lease lifetime bounds.
const (
	// DefaultTTL is the lifetime when the caller names none.
	DefaultTTL = 120 * time.Second
	// MinTTL and MaxTTL clamp a requested lifetime.
	MinTTL = time.Second
	MaxTTL = 30 * time.Minute
)

// ClampTTL returns the lease lifetime for a requested one: DefaultTTL for 0,
// otherwise d at millisecond precision clamped to MinTTL–MaxTTL.
func ClampTTL(d time.Duration) time.Duration {
	if d == 0 {
		return DefaultTTL
	}
	d = d.Truncate(time.Millisecond)
	return min(max(d, MinTTL), MaxTTL)
}

// TTLFromMs converts a client's ttlMs to a clamped lifetime without overflow.
func TTLFromMs(ms int64) time.Duration {
	if ms > MaxTTL.Milliseconds() {
		return MaxTTL
	}
	if ms < MinTTL.Milliseconds() {
		return MinTTL
	}
	return time.Duration(ms) * time.Millisecond
}
