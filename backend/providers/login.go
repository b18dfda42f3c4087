package providers

import (
	"context"
	"net/url"
	"strings"
	"time"
)

// LoginFlow is a provider's own device-code sign-in (RFC 8628): the user
// enters a code on the provider's page, the gateway polls until the login
// is approved, then turns the grant into the tokens a connection stores.
// The management API (POST /api/providers/login/{provider}), `omniroute
// login <provider>` and the dashboard's login panel drive it without naming
// the provider.
type LoginFlow struct {
	// Command is the short word `omniroute login <word>` is documented with
	// (the row's id and aliases are taken too); the dashboard's panel is
	// named after it.
	Command string
	// Site names where the user approves the login ("GitHub"), for messages.
	Site string
	// Hint is one sentence the login panel shows under its title.
	Hint string
	// Start asks the provider for a device code.
	Start func(ctx context.Context, x LoginCall) (Device, error)
	// Poll asks once whether the user approved the device code: the grant
	// (a secret), or a *DeviceError saying why there is none yet.
	Poll func(ctx context.Context, x LoginCall, deviceCode string) (string, error)
	// Finish turns an approved grant into the connection's tokens (an error
	// is the API's: a stable code mapped to HTTP at the edge).
	Finish func(ctx context.Context, x LoginCall, grant string) (Tokens, error)
}

// LoginCall is what a login or refresh hook is called with: the row's OAuth
// endpoints (environment overrides applied), the HTTP client and the time.
type LoginCall struct {
	OAuth  OAuth
	Client Doer
	Now    time.Time
}

// Refresher is a module's own token refresh: the stored refresh credential
// buys a fresh access token (nil: the OAuth refresh_token grant at
// OAuth.TokenURL). A refusal is a *TokenError.
type Refresher func(ctx context.Context, x LoginCall, refresh string) (Tokens, error)

// Tokens are what a sign-in or a refresh gives a connection. Access and
// Refresh are secrets.
type Tokens struct {
	Access, Refresh string
	// ExpiresAt is when Access stops working (zero: unknown).
	ExpiresAt time.Time
	// Endpoint is the base URL the exchange named for this account ("" : the row's).
	Endpoint string
	// AccountID and Username name the account (sign-in only; "" : unknown).
	AccountID, Username string
}

// TokenError is a refused token exchange. It never holds a token.
type TokenError struct {
	// Status is the endpoint's HTTP status (0: not reached).
	Status int
	// Code is the endpoint's error code, when it gives one.
	Code    string
	Message string
}

func (e *TokenError) Error() string { return e.Message }

// Device is a started device login. DeviceCode is a secret (it redeems the
// login): never logged or returned by the API.
type Device struct {
	DeviceCode      string
	UserCode        string
	VerificationURI string
	ExpiresAt       time.Time
	Interval        time.Duration
}

// Device poll outcomes other than a grant, as RFC 8628 names them.
const (
	DevicePending  = "authorization_pending"
	DeviceSlowDown = "slow_down"
	DeviceExpired  = "expired_token"
	DeviceDenied   = "access_denied"
)

// slowDownStep is what a slow_down answer adds to the polling interval (RFC 8628 §3.5).
const slowDownStep = 5 * time.Second

// DeviceError is a device poll that gave no grant: Code is the provider's
// error (DevicePending, DeviceSlowDown, DeviceExpired, DeviceDenied or
// another), Interval the new polling interval it asked for (slow_down), if any.
type DeviceError struct {
	Code     string
	Interval time.Duration
}

func (e *DeviceError) Error() string { return "device login: " + e.Code }

// Terminal reports whether polling again cannot succeed.
func (e *DeviceError) Terminal() bool { return e.Code != DevicePending && e.Code != DeviceSlowDown }

// NextInterval is the polling interval after a poll answered e.
func NextInterval(cur time.Duration, e *DeviceError) time.Duration {
	if e == nil || e.Code != DeviceSlowDown {
		return cur
	}
	if e.Interval > cur {
		return e.Interval
	}
	return cur + slowDownStep
}

// SafeVerificationURI reports whether a device login's verification page
// may be shown as a link: an absolute https URL (plain http only for a
// loopback host, a local test double), without credentials.
func SafeVerificationURI(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || len(s) > 2048 {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return true
	case "http":
		h := u.Hostname()
		return h == "127.0.0.1" || h == "localhost" || h == "::1"
	}
	return false
}

// LoginFlow is the row's module's sign-in flow (nil: none).
func (p Provider) LoginFlow() *LoginFlow {
	if p.Module == nil {
		return nil
	}
	return p.Module.Login
}

// TokenRefresher is the row's module's own refresh (nil: the OAuth grant).
func (p Provider) TokenRefresher() Refresher {
	if p.Module == nil {
		return nil
	}
	return p.Module.Refresh
}

// LoginProviders are the catalogue's rows with a sign-in flow, in id order.
func (c *Catalog) LoginProviders() []Provider {
	var out []Provider
	for _, p := range c.All() {
		if p.LoginFlow() != nil && p.OAuth != nil {
			out = append(out, p)
		}
	}
	return out
}

// SafeOAuthCode keeps an OAuth error code only if it looks like one (never
// echo a body): at most 64 letters, digits, '_', '-' or '.'.
func SafeOAuthCode(c string) string {
	if len(c) > 64 {
		return ""
	}
	for _, r := range c {
		if !(r == '_' || r == '-' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return ""
		}
	}
	return c
}

// CodeSuffix is ": code" for a message, or "" without one.
func CodeSuffix(c string) string {
	if c == "" {
		return ""
	}
	return ": " + c
}
