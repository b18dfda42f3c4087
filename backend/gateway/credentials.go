package gateway

import (
	"context"
	"io"
	"net/http"
	"time"

	"omniroute/backend/providers"
	"omniroute/backend/routing"
)

// credentialed wraps an attempt's executor: it stamps the call with the
// attempt's first-byte deadline and, for an OAuth connection, sends the token
// Credentials says is fresh, refreshing once and trying again when the
// upstream refuses the token (401) before its time.
type credentialed struct {
	next     providers.Executor
	creds    Credentials
	conn     *routing.Conn
	deadline time.Time
}

// refreshError is a token refresh that failed (classified as an auth failure).
type refreshError struct{ err error }

func (e *refreshError) Error() string { return "token refresh failed: " + e.err.Error() }

func (e *refreshError) Unwrap() error { return e.err }

// Do implements providers.Executor.
func (x credentialed) Do(ctx context.Context, t providers.Target, c providers.Call) (*http.Response, error) {
	c.FirstByteDeadline = x.deadline
	if x.creds == nil || x.conn.AuthType != "oauth" {
		return x.next.Do(ctx, t, c)
	}
	tok, err := x.creds.Fresh(ctx, x.conn)
	if err != nil {
		return nil, &refreshError{err}
	}
	t.Secret = tok
	resp, err := x.next.Do(ctx, t, c)
	if err != nil || resp.StatusCode != http.StatusUnauthorized || !x.conn.HasRefresh {
		return resp, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	if tok, err = x.creds.Refresh(ctx, x.conn, t.Secret); err != nil {
		return nil, &refreshError{err}
	}
	t.Secret = tok
	return x.next.Do(ctx, t, c)
}
