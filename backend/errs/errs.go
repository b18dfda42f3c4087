// Package errs defines the gateway's error values: a stable UPPER_SNAKE code and
// a class. Only the HTTP edge (package api) maps a class to a status code.
package errs

import (
	"errors"
	"fmt"
	"time"
)

// Class groups errors by what the client should do about them.
type Class int

// Error classes.
const (
	Invalid     Class = iota + 1 // bad input: 400
	TooLarge                     // body over the limit: 413
	Unsupported                  // wrong media type: 415
	Auth                         // missing or bad credentials: 401
	Permission                   // authenticated but not allowed: 403
	NotFound                     // no such thing: 404
	Conflict                     // state conflict: 409
	RateLimited                  // try later: 429
	Unavailable                  // nothing can serve it now: 503
	Upstream                     // upstream failed: 502
	Timeout                      // upstream or queue timeout: 504
	Internal                     // a bug: 500
)

// ClientTimeout: the client was too slow sending its request (408).
const ClientTimeout = Internal + 1

// InsufficientStorage: the disk holding the database is full, so a write
// could not be saved (507).
const InsufficientStorage = Internal + 2

// Error is an error with a stable code, a class and a human message.
type Error struct {
	Class   Class
	Code    string
	Message string
	Param   string
	// Type overrides the OpenAI-style error type derived from Class (e.g. "lease_error").
	Type string
	// UpstreamCode is an upstream's own error code relayed to the client: the
	// OpenAI-format envelope carries it as "code" (Code then as
	// "omniroute_code"); logs and other envelopes keep Code.
	UpstreamCode string
	// RetryAfter, when > 0, is sent as the Retry-After header (whole seconds, at least 1).
	RetryAfter time.Duration
	// NoRetry tells the client not to retry by itself (x-should-retry:
	// false, as Anthropic's and OpenAI's SDKs read it): nothing will serve
	// the request within a minute.
	NoRetry bool
	// Details are extra JSON fields placed inside the error object (e.g. diagnostics).
	Details map[string]any
	// Top are extra JSON fields placed beside the error object (e.g. a lease state).
	Top map[string]any
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// New builds an Error.
func New(class Class, code, format string, args ...any) *Error {
	return &Error{Class: class, Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithParam names the offending request field.
func (e *Error) WithParam(p string) *Error { e.Param = p; return e }

// WithRetryAfter sets the Retry-After hint.
func (e *Error) WithRetryAfter(d time.Duration) *Error { e.RetryAfter = d; return e }

// CodeInsufficientStorage is the code of a write refused for a full disk.
const CodeInsufficientStorage = "INSUFFICIENT_STORAGE"

// storageFull is implemented by the errors of a write refused because the
// disk holding the database is full (the store's), so this package maps them
// without knowing the store.
type storageFull interface{ StorageFull() bool }

// CodeDatabaseUnavailable is the code of a change refused because the shared
// database did not answer (a team server during an outage).
const CodeDatabaseUnavailable = "DATABASE_UNAVAILABLE"

// databaseUnavailable is implemented by the store's errors for a database
// that did not answer.
type databaseUnavailable interface{ DatabaseUnavailable() bool }

// DatabaseUnavailable is the 503 of something that needs the shared database
// while it does not answer: retry after retry.
func DatabaseUnavailable(retry time.Duration) *Error {
	return New(Unavailable, CodeDatabaseUnavailable,
		"the database is unreachable, so this could not be done now; retry shortly").WithRetryAfter(retry)
}

// As extracts an *Error from err, maps a full disk to
// InsufficientStorage, or wraps err as an internal error.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var du databaseUnavailable
	if errors.As(err, &du) && du.DatabaseUnavailable() {
		return DatabaseUnavailable(5 * time.Second)
	}
	var sf storageFull
	if errors.As(err, &sf) && sf.StorageFull() {
		return New(InsufficientStorage, CodeInsufficientStorage,
			"the disk holding the database is full, so this change could not be saved; free some space on it and retry")
	}
	return &Error{Class: Internal, Code: "INTERNAL_ERROR", Message: "internal error"}
}
