package gateway

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"omniroute/backend/providers"
	"omniroute/backend/resilience/verdict"
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
func (x credentialed) Do(ctx context.Context, t *providers.Target, c providers.Call) (*http.Response, error) {
	c.FirstByteDeadline = x.deadline
	if x.creds == nil || x.conn.AuthType != "oauth" {
		return x.next.Do(ctx, t, c)
	}
	tok, err := x.creds.Fresh(ctx, x.conn)
	if err != nil {
		return nil, &refreshError{err}
	}
	own := *t // the caller's target keeps its secret
	t = &own
	t.Secret = tok
	// A token exchange may name the upstream (the endpoint it answers with).
	t.BaseURL = x.conn.Endpoint()
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
	t.BaseURL = x.conn.Endpoint()
	return x.next.Do(ctx, t, c)
}

// refreshVerdict classifies a failed token refresh: an auth failure of the
// connection, so the guide's expired rule applies (cooldown with backoff,
// terminal "expired" after EXPIRED_RETRY_MAX). A refresh cut short by the
// client or the first-byte deadline is not one: it blames nobody's credentials
// and is classified like any cancelled or timed-out attempt.
func refreshVerdict(ctx context.Context, r *http.Request, err error) (verdict.Verdict, bool) {
	var rf *refreshError
	if !errors.As(err, &rf) || ctx.Err() != nil || r.Context().Err() != nil {
		return verdict.Verdict{}, false
	}
	return verdict.Verdict{Kind: verdict.KindAuth, Scope: verdict.ScopeConnection, Failover: true, CoolConnection: true,
		SkipProviderBreaker: true, Code: "OAUTH_REFRESH_FAILED", Message: "The access token could not be refreshed: " + rf.err.Error()}, true
}
