package api

import (
	"log/slog"
	"net"
	"net/http"
	"time"

	"omniroute/backend/auththrottle"
	"omniroute/backend/errs"
	"omniroute/backend/forwarded"
	"omniroute/backend/httpx"
)

// Failed authentication is throttled per source address (auththrottle): a
// wrong credential (a client key or management token that is sent and does
// not match; a missing one is no guess and is not counted) takes a token of
// its source. While a source's bucket is empty, each wrong credential of it
// is answered 429 AUTH_RATE_LIMITED with Retry-After (the time until the next
// token) instead of 401; a remote source's credentials are then not checked
// at all, valid ones included, so a remote guesser gets auththrottle.Burst
// guesses and then one per auththrottle.Refill instead of thousands a
// second. A loopback source is always checked (see authPrecheck).

// sourceOf is the request's source address: the peer's IP, without its
// port, or behind a trusted proxy (the trustedProxies setting) the client's
// address from X-Forwarded-For (forwarded.Proxies.ClientAddr).
func (a *API) sourceOf(r *http.Request) string {
	return a.proxies().ClientAddr(r)
}

// secureRequest reports whether the client reached the gateway over TLS,
// itself or through a trusted TLS-terminating proxy (X-Forwarded-Proto:
// https): cookies set on it get Secure.
func (a *API) secureRequest(r *http.Request) bool {
	return a.proxies().HTTPS(r)
}

// proxies are the trusted proxies of the current settings (none without
// settings); the list was validated when saved.
func (a *API) proxies() forwarded.Proxies {
	if a.Settings == nil {
		return forwarded.Proxies{}
	}
	p, _ := forwarded.Parse(a.Settings.GeneralRef().TrustedProxies) // the settings read, not copied (every client request asks)
	return p
}

// Labels of omniroute_auth_failures_total.
const (
	authRouteClient     = "client"
	authRouteManagement = "management"
	authRefused         = "refused"   // a wrong credential, answered 401
	authThrottledResult = "throttled" // answered 429: the source failed too often
)

// authPrecheck is the 429 for a request from a throttled remote source,
// answered without checking its credential (nil: check it). A loopback
// source is always checked: every local client shares 127.0.0.1, so refusing
// its valid credentials would let any local process lock every agent out.
func (a *API) authPrecheck(r *http.Request, route string) *errs.Error {
	src := a.sourceOf(r)
	if isLoopback(src) {
		return nil
	}
	return a.throttledError(a.auth.Wait(src), route)
}

// authFailure records a wrong credential of the request's source and returns
// the answer: the 429 when the source has no token left, else unthrottled
// (the route's own 401).
func (a *API) authFailure(r *http.Request, route string, unthrottled *errs.Error) *errs.Error {
	src := a.sourceOf(r)
	if e := a.throttledError(a.auth.Wait(src), route); e != nil {
		return e
	}
	a.countAuth(route, authRefused)
	if a.auth.Fail(src) && a.log != nil {
		a.log.Warn("failed authentication throttled", slog.String("source", src), slog.String("route", route),
			slog.Int("burst", auththrottle.Burst), slog.Duration("refill", auththrottle.Refill))
	}
	return unthrottled
}

// throttledError is 429 AUTH_RATE_LIMITED with Retry-After (header and
// envelope) for a wait, counted; nil for no wait.
func (a *API) throttledError(wait time.Duration, route string) *errs.Error {
	if wait <= 0 {
		return nil
	}
	a.countAuth(route, authThrottledResult)
	secs := httpx.RetryAfterSeconds(wait)
	e := errs.New(errs.RateLimited, "AUTH_RATE_LIMITED",
		"too many failed authentication attempts from this address; retry after %d s", secs).WithRetryAfter(wait)
	e.Details = map[string]any{"retry_after": secs}
	return e
}

func isLoopback(ip string) bool {
	addr := net.ParseIP(ip)
	return addr != nil && addr.IsLoopback()
}

func (a *API) countAuth(route, result string) {
	if a.AuthFailure != nil {
		a.AuthFailure(route, result)
	}
}
