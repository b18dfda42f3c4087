package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
	"golang.org/x/sync/singleflight"

	"omniroute/backend/clock"
	"omniroute/backend/providers"
	"omniroute/backend/routing"
	"omniroute/backend/store"
)

// Defaults of the refresher.
const (
	// DefaultLead refreshes a token this long before it expires.
	DefaultLead = 5 * time.Minute
	// earlyRetry spaces refresh attempts that failed while the old token was still valid.
	earlyRetry = 30 * time.Second
	// exchangeTimeout bounds one call to a token endpoint.
	exchangeTimeout = 30 * time.Second
	// defaultLifetime is assumed when a token endpoint states no expiry.
	defaultLifetime = time.Hour
)

// TokenStore is the part of the store a refresh reads and writes.
type TokenStore interface {
	Connection(id string) (store.Connection, error)
	SaveTokens(id, accessEnc, refreshEnc string, expiresAt, now int64) error
}

// Box seals and opens stored secrets.
type Box interface {
	Seal(plaintext string) (string, error)
	Open(sealed string) (string, error)
}

// RefreshError is a failed refresh. It never holds a token.
type RefreshError struct {
	// Status is the token endpoint's HTTP status (0: not reached).
	Status int
	// Code is the endpoint's OAuth error code (e.g. invalid_grant), when given.
	Code string
	msg  string
}

func (e *RefreshError) Error() string { return e.msg }

// Refresher keeps OAuth access tokens fresh.
type Refresher struct {
	store   TokenStore
	box     Box
	client  *http.Client
	clk     clock.Clock
	lead    time.Duration
	group   singleflight.Group
	onFresh func(connID string)

	mu       sync.Mutex
	failedAt map[string]time.Time // early refresh failures (token still valid)
}

// RefresherDeps are a refresher's collaborators.
type RefresherDeps struct {
	Store  TokenStore
	Box    Box
	Client *http.Client
	Clock  clock.Clock
	// Lead is how long before expiry a token is refreshed (DefaultLead when 0).
	Lead time.Duration
	// OnRefresh hears about each persisted refresh (optional).
	OnRefresh func(connID string)
}

// NewRefresher wires a refresher.
func NewRefresher(d RefresherDeps) *Refresher {
	if d.Lead <= 0 {
		d.Lead = DefaultLead
	}
	return &Refresher{store: d.Store, box: d.Box, client: d.Client, clk: d.Clock, lead: d.Lead, onFresh: d.OnRefresh,
		failedAt: map[string]time.Time{}}
}

// Fresh returns the access token to send for conn now. A token within the
// lead time of its expiry is refreshed first (once, however many requests ask
// at the same time). If that refresh fails while the old token is still valid
// the old one is used; once it has expired the failure is returned.
func (r *Refresher) Fresh(ctx context.Context, conn *routing.Conn) (string, error) {
	tok, exp := conn.Credential()
	now := r.clk.Now()
	if exp.IsZero() || now.Before(exp.Add(-r.lead)) || conn.Provider.OAuth == nil || !conn.HasRefresh {
		return tok, nil
	}
	valid := now.Before(exp)
	if valid && r.recentlyFailed(conn.ID, now) {
		return tok, nil
	}
	fresh, err := r.refresh(ctx, conn, tok)
	if err != nil {
		if valid {
			r.markFailed(conn.ID, now)
			return tok, nil
		}
		return "", err
	}
	return fresh, nil
}

// Refresh refreshes after the upstream refused stale (a 401). Concurrent
// callers share one refresh; a caller whose stale token was already replaced
// gets the new one without another exchange.
func (r *Refresher) Refresh(ctx context.Context, conn *routing.Conn, stale string) (string, error) {
	if conn.Provider.OAuth == nil || !conn.HasRefresh {
		return "", &RefreshError{msg: "the connection has no refresh token; import the login again"}
	}
	return r.refresh(ctx, conn, stale)
}

func (r *Refresher) recentlyFailed(id string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.failedAt[id]
	return ok && now.Sub(t) < earlyRetry
}

func (r *Refresher) markFailed(id string, now time.Time) {
	r.mu.Lock()
	r.failedAt[id] = now
	r.mu.Unlock()
}

// refresh runs one single-flight refresh per connection. The exchange is not
// tied to the first caller's context: one client going away must not fail
// the refresh every other request waits for.
func (r *Refresher) refresh(ctx context.Context, conn *routing.Conn, stale string) (string, error) {
	ch := r.group.DoChan(conn.ID, func() (any, error) {
		cur, exp := conn.Credential()
		now := r.clk.Now()
		if cur != stale && (exp.IsZero() || now.Before(exp.Add(-r.lead))) {
			return cur, nil // refreshed by a flight that just ended
		}
		row, err := r.store.Connection(conn.ID)
		if err != nil {
			return nil, err
		}
		if access, err := r.box.Open(row.AccessTokenEnc); err == nil && access != stale && row.ExpiresAt > 0 &&
			now.Before(time.UnixMilli(row.ExpiresAt).Add(-r.lead)) {
			conn.SetCredential(access, time.UnixMilli(row.ExpiresAt)) // persisted by someone else
			return access, nil
		}
		refresh, err := r.box.Open(row.RefreshTokenEnc)
		if err != nil || refresh == "" {
			return nil, &RefreshError{msg: "the connection has no refresh token; import the login again"}
		}
		xctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), exchangeTimeout)
		defer cancel()
		var t token
		if own := conn.Provider.TokenRefresher(); own != nil {
			t, err = r.exchangeOwn(xctx, own, *conn.Provider.OAuth, refresh)
		} else {
			t, err = r.exchange(xctx, *conn.Provider.OAuth, refresh)
		}
		if err != nil {
			return nil, err
		}
		if t.refresh == "" {
			t.refresh = refresh // the endpoint kept the old refresh token valid
		}
		now = r.clk.Now()
		expires := t.expiresAt(now)
		accessEnc, err := r.box.Seal(t.access)
		if err != nil {
			return nil, err
		}
		refreshEnc, err := r.box.Seal(t.refresh)
		if err != nil {
			return nil, err
		}
		if err := r.store.SaveTokens(conn.ID, accessEnc, refreshEnc, expires.UnixMilli(), now.UnixMilli()); err != nil {
			return nil, err
		}
		conn.SetCredential(t.access, expires)
		if t.endpoint != "" {
			conn.SetEndpoint(t.endpoint)
		}
		r.mu.Lock()
		delete(r.failedAt, conn.ID)
		r.mu.Unlock()
		if r.onFresh != nil {
			r.onFresh(conn.ID)
		}
		return t.access, nil
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return "", res.Err
		}
		return res.Val.(string), nil
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
}

// token is a token endpoint's answer.
type token struct {
	access, refresh string
	expiresIn       time.Duration
	// expires is an absolute expiry (a module's own refresh); zero: use expiresIn.
	expires time.Time
	// endpoint is the base URL the exchange named (a module's own refresh).
	endpoint string
}

func (t token) expiresAt(now time.Time) time.Time {
	if !t.expires.IsZero() {
		return t.expires
	}
	if t.expiresIn > 0 {
		return now.Add(t.expiresIn)
	}
	if exp := providers.JWTClaims(t.access).Get("exp").Int(); exp > 0 {
		return time.Unix(exp, 0)
	}
	return now.Add(defaultLifetime)
}

// exchange posts the refresh_token grant to the provider's token endpoint.
func (r *Refresher) exchange(ctx context.Context, o providers.OAuth, refresh string) (token, error) {
	if o.TokenURL == "" {
		return token{}, &RefreshError{msg: "no token endpoint is configured for this provider"}
	}
	fields := map[string]string{"grant_type": "refresh_token", "refresh_token": refresh, "client_id": o.ClientID}
	if o.ClientSecret != "" {
		fields["client_secret"] = o.ClientSecret
	}
	if o.Scope != "" {
		fields["scope"] = o.Scope
	}
	var body, ctype string
	if o.Form {
		v := url.Values{}
		for k, x := range fields {
			v.Set(k, x)
		}
		body, ctype = v.Encode(), "application/x-www-form-urlencoded"
	} else {
		b, _ := marshalFields(fields)
		body, ctype = string(b), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.TokenURL, strings.NewReader(body))
	if err != nil {
		return token{}, &RefreshError{msg: "the token endpoint URL is invalid"}
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Accept", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return token{}, &RefreshError{msg: "the token endpoint is unreachable"}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		code := gjson.GetBytes(raw, "error").String()
		if gjson.GetBytes(raw, "error").IsObject() {
			code = gjson.GetBytes(raw, "error.type").String()
		}
		return token{}, &RefreshError{Status: resp.StatusCode, Code: providers.SafeOAuthCode(code),
			msg: fmt.Sprintf("the token endpoint refused the refresh (HTTP %d%s)", resp.StatusCode, providers.CodeSuffix(providers.SafeOAuthCode(code)))}
	}
	t := token{access: gjson.GetBytes(raw, "access_token").String(), refresh: gjson.GetBytes(raw, "refresh_token").String(),
		expiresIn: time.Duration(gjson.GetBytes(raw, "expires_in").Float() * float64(time.Second))}
	if t.access == "" {
		return token{}, &RefreshError{Status: resp.StatusCode, msg: "the token endpoint answered without an access token"}
	}
	return t, nil
}

// exchangeOwn is a provider module's own refresh (Module.Refresh): its
// refusal becomes a RefreshError like the OAuth grant's.
func (r *Refresher) exchangeOwn(ctx context.Context, own providers.Refresher, o providers.OAuth, refresh string) (token, error) {
	t, err := own(ctx, providers.LoginCall{OAuth: o, Client: r.client, Now: r.clk.Now()}, refresh)
	if err != nil {
		var te *providers.TokenError
		if errors.As(err, &te) {
			return token{}, &RefreshError{Status: te.Status, Code: te.Code, msg: te.Message}
		}
		return token{}, &RefreshError{msg: "the token refresh failed"}
	}
	return token{access: t.Access, refresh: t.Refresh, expires: t.ExpiresAt, endpoint: t.Endpoint}, nil
}

// IsRefreshError reports whether err came from a refresh.
func IsRefreshError(err error) bool {
	var re *RefreshError
	return errors.As(err, &re)
}

func marshalFields(m map[string]string) ([]byte, error) { return json.Marshal(m) }
