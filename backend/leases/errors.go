package leases

import (
	"fmt"
	"net/http"
	"time"

	"omniroute/backend/errs"
)

// ErrorType is the envelope type of every lease error.
const ErrorType = "lease_error"

// Error is a lease failure with a stable UPPER_SNAKE code and its HTTP status.
// It converts itself to *errs.Error (type "lease_error") through errors.As, so
// httpx.WriteError and errs.As write it with the right status and envelope.
type Error struct {
	// Code is the stable wire code (LEASE_…).
	Code string
	// Status is the HTTP status the code maps to.
	Status int
	// Message is the human sentence sent to the client.
	Message string
	// kind tells apart errors that share a wire code (ErrKeyMismatch is sent
	// as LEASE_FENCE_STALE but is not ErrFenceStale for errors.Is).
	kind string
}

func newError(kind, code string, status int, msg string) *Error {
	return &Error{Code: code, Status: status, Message: msg, kind: kind}
}

// Lease errors. Compare with errors.Is: a copy made by WithMessage still matches.
var (
	// ErrAuthenticationRequired: no client key was sent (401).
	ErrAuthenticationRequired = newError("auth_required", "LEASE_AUTHENTICATION_REQUIRED", http.StatusUnauthorized,
		"authentication required: send Authorization: Bearer <client key>")
	// ErrAPIKeyInvalid: the client key is unknown (401).
	ErrAPIKeyInvalid = newError("key_invalid", "LEASE_API_KEY_INVALID", http.StatusUnauthorized, "the API key is not valid")
	// ErrContentTypeRequired: the body is not application/json (415).
	ErrContentTypeRequired = newError("content_type", "LEASE_CONTENT_TYPE_REQUIRED", http.StatusUnsupportedMediaType,
		"send Content-Type: application/json")
	// ErrActionInvalid: the body is not a valid lifecycle action (400).
	ErrActionInvalid = newError("action_invalid", "LEASE_ACTION_INVALID", http.StatusBadRequest,
		`invalid lease lifecycle action: send {"action":"acquire","model":…} or {"action":"renew"|"status"|"release","generation":N}`)
	// ErrContextInvalid: the lease owner header is missing or malformed (400).
	ErrContextInvalid = newError("context_invalid", "LEASE_CONTEXT_INVALID", http.StatusBadRequest,
		"X-OmniRoute-Lease-Owner must be vlo_ followed by 43 base64url characters")
	// ErrModelInvalid: the model is empty, too long or served by nothing (400).
	ErrModelInvalid = newError("model_invalid", "LEASE_MODEL_INVALID", http.StatusBadRequest, "the model is unavailable")
	// ErrScopeRequired: the key lacks the lease:exclusive scope (403).
	ErrScopeRequired = newError("scope_required", "LEASE_SCOPE_REQUIRED", http.StatusForbidden,
		"this API key needs the lease:exclusive scope")
	// ErrKeyConfigurationInvalid: the key has no explicit allowedConnections (403).
	ErrKeyConfigurationInvalid = newError("key_configuration", "LEASE_KEY_CONFIGURATION_INVALID", http.StatusForbidden,
		"exclusive lease keys need an explicit, non-empty allowedConnections list")
	// ErrNoEligibleConnection: none of the key's connections can serve the model now (409).
	ErrNoEligibleConnection = newError("no_eligible", "LEASE_NO_ELIGIBLE_CONNECTION", http.StatusConflict,
		"no eligible connection satisfies the managed key policy for this model")
	// ErrFenceStale: the generation is not the active lease's (409).
	ErrFenceStale = newError("fence_stale", "LEASE_FENCE_STALE", http.StatusConflict, "the lease generation is stale")
	// ErrKeyMismatch: the owner's active lease belongs to another API key. It is
	// sent as LEASE_FENCE_STALE (409), like the reference: the fence binds the
	// key id, and a 409 tells another key nothing about the lease.
	ErrKeyMismatch = newError("key_mismatch", "LEASE_FENCE_STALE", http.StatusConflict,
		"the lease generation is stale for this API key")
	// ErrLeaseRequired: the owner holds no active lease (409).
	ErrLeaseRequired = newError("required", "LEASE_REQUIRED", http.StatusConflict,
		"no active lease for this owner; acquire one first")
	// ErrConnectionMismatch: the request would be dispatched to a connection the lease does not hold (409).
	ErrConnectionMismatch = newError("connection_mismatch", "LEASE_CONNECTION_MISMATCH", http.StatusConflict,
		"the lease holds a different connection")
	// ErrCapacityUnavailable matches every *CapacityError under errors.Is (429).
	ErrCapacityUnavailable = newError("capacity", "LEASE_CAPACITY_UNAVAILABLE", http.StatusTooManyRequests,
		"exclusive managed session capacity is temporarily unavailable")
	// ErrLeaseNotFound: no active lease has this id (operator release, 404).
	ErrLeaseNotFound = newError("not_found", "LEASE_NOT_FOUND", http.StatusNotFound, "no active lease has this id")
	// ErrServiceUnavailable: the lease store failed (503).
	ErrServiceUnavailable = newError("unavailable", "LEASE_SERVICE_UNAVAILABLE", http.StatusServiceUnavailable,
		"the lease service is unavailable")
)

// Error returns "CODE: message".
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// HTTPStatus is the status the error is sent with.
func (e *Error) HTTPStatus() int { return e.Status }

// Is matches another *Error of the same kind, so a WithMessage copy still
// matches its sentinel.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.kind == e.kind
}

// WithMessage returns a copy with another message.
func (e *Error) WithMessage(format string, args ...any) *Error {
	c := *e
	c.Message = fmt.Sprintf(format, args...)
	return &c
}

// Errs converts the error to the gateway's error value.
func (e *Error) Errs() *errs.Error {
	return &errs.Error{Class: classOf(e.Status), Code: e.Code, Message: e.Message, Type: ErrorType}
}

// As lets errors.As (and so errs.As and httpx.WriteError) see a lease error as *errs.Error.
func (e *Error) As(target any) bool {
	if t, ok := target.(**errs.Error); ok {
		*t = e.Errs()
		return true
	}
	return false
}

func classOf(status int) errs.Class {
	switch status {
	case http.StatusBadRequest:
		return errs.Invalid
	case http.StatusUnauthorized:
		return errs.Auth
	case http.StatusForbidden:
		return errs.Permission
	case http.StatusNotFound:
		return errs.NotFound
	case http.StatusConflict:
		return errs.Conflict
	case http.StatusUnsupportedMediaType:
		return errs.Unsupported
	case http.StatusTooManyRequests:
		return errs.RateLimited
	case http.StatusServiceUnavailable:
		return errs.Unavailable
	default:
		return errs.Internal
	}
}

// Retry-After bounds of a capacity error.
const (
	MinRetryAfter = time.Second
	MaxRetryAfter = time.Hour
)

// CapacityError says every eligible connection is held by another owner's
// active lease (429 LEASE_CAPACITY_UNAVAILABLE, state WAITING_FOR_CAPACITY).
type CapacityError struct {
	// EligibleCount is how many connections could serve the request.
	EligibleCount int
	// FreeCount is how many of them were free (0 when this error is returned).
	FreeCount int
	// RetryAfter is the time until the earliest of their leases expires, whole
	// seconds, clamped to 1 s – 1 h.
	RetryAfter time.Duration
}

// Error describes the capacity shortage.
func (e *CapacityError) Error() string {
	return fmt.Sprintf("%s: %d eligible connection(s), none free; retry in %ds",
		ErrCapacityUnavailable.Code, e.EligibleCount, e.RetryAfterSeconds())
}

// Is matches ErrCapacityUnavailable.
func (e *CapacityError) Is(target error) bool { return ErrCapacityUnavailable.Is(target) }

// RetryAfterSeconds is RetryAfter in whole seconds (1–3600).
func (e *CapacityError) RetryAfterSeconds() int { return int(clampRetry(e.RetryAfter) / time.Second) }

// Top is the body beside the error object, exactly as the API documents it:
// state, reason, retryAfter, eligibleCount, freeCount.
func (e *CapacityError) Top() map[string]any {
	return map[string]any{"state": "WAITING_FOR_CAPACITY", "reason": "NO_FREE_ELIGIBLE_CONNECTION",
		"retryAfter": e.RetryAfterSeconds(), "eligibleCount": e.EligibleCount, "freeCount": e.FreeCount}
}

// Errs converts the error to the gateway's error value: a 429 lease_error with
// Retry-After and the documented top-level fields.
func (e *CapacityError) Errs() *errs.Error {
	x := ErrCapacityUnavailable.Errs()
	x.RetryAfter = time.Duration(e.RetryAfterSeconds()) * time.Second
	x.Top = e.Top()
	return x
}

// As lets errors.As (and so errs.As and httpx.WriteError) see it as *errs.Error.
func (e *CapacityError) As(target any) bool {
	if t, ok := target.(**errs.Error); ok {
		*t = e.Errs()
		return true
	}
	return false
}

// clampRetry rounds d up to whole seconds within MinRetryAfter–MaxRetryAfter.
func clampRetry(d time.Duration) time.Duration {
	if r := d % time.Second; r != 0 {
		d += time.Second - r
	}
	return min(max(d, MinRetryAfter), MaxRetryAfter)
}
