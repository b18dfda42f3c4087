package api

import (
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"omniroute/backend/errs"
	"omniroute/backend/forwarded"
	"omniroute/backend/httpx"
)

// Failed authentication is throttled per source address with a token bucket:
// each wrong credential (a client key or management token that is sent and
// does not match; a missing one is no guess and is not counted) takes a
// token; the bucket holds authBurst and refills one token per authRefill.
// While a source's bucket is empty, each wrong credential of it is answered
// 429 AUTH_RATE_LIMITED with Retry-After (the time until the next token)
// instead of 401; a remote source's credentials are then not checked at all,
// valid ones included, so a remote guesser gets authBurst guesses and then
// one per authRefill instead of thousands a second. A loopback source is
// always checked (see authPrecheck).
const (
	authBurst  = 30
	authRefill = time.Second
	// authMaxSources bounds the table: past it, sources whose bucket is full
	// again are forgotten, then any one.
	authMaxSources = 4096
)

// authThrottle is the per-source failure buckets, on the API's clock.
type authThrottle struct {
	now     func() time.Time
	any     atomic.Bool // some source has failed: wait has a table to read
	mu      sync.Mutex
	sources map[string]authBucket
}

// authBucket is a source's tokens at a moment (they refill from there).
type authBucket struct {
	tokens float64
	at     time.Time
	logged bool // its throttling was logged (until the bucket is full again)
}

func newAuthThrottle(now func() time.Time) *authThrottle {
	return &authThrottle{now: now, sources: map[string]authBucket{}}
}

// level is b's tokens at now, refilled and capped at authBurst.
func (b authBucket) level(now time.Time) float64 {
	d := now.Sub(b.at)
	if d < 0 { // the clock stepped back: count nothing refilled
		d = 0
	}
	return min(b.tokens+float64(d)/float64(authRefill), authBurst)
}

// wait is how long src must wait before its credentials are checked again;
// 0 means now.
func (t *authThrottle) wait(src string) time.Duration {
	if !t.any.Load() { // no failure yet: nothing to look up
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	b, ok := t.sources[src]
	if !ok {
		return 0
	}
	lvl := b.level(t.now())
	if lvl >= 1 {
		return 0
	}
	return time.Duration((1 - lvl) * float64(authRefill))
}

// fail takes one token from src's bucket; it reports whether the source is
// throttled from here on for the first time since its bucket was full (once
// per burst, so a steady guesser is logged once, not once a token).
func (t *authThrottle) fail(src string) (newlyThrottled bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	b, ok := t.sources[src]
	lvl := float64(authBurst)
	if ok {
		if lvl = b.level(now); lvl >= authBurst {
			b.logged = false
		}
	} else if len(t.sources) >= authMaxSources {
		t.prune(now)
	}
	lvl = max(lvl-1, 0)
	newlyThrottled = lvl < 1 && !b.logged
	t.sources[src] = authBucket{tokens: lvl, at: now, logged: b.logged || newlyThrottled}
	t.any.Store(true)
	return newlyThrottled
}

// prune forgets the sources whose bucket is full again, or one source when
// none is.
func (t *authThrottle) prune(now time.Time) {
	for src, b := range t.sources {
		if b.level(now) >= authBurst {
			delete(t.sources, src)
		}
	}
	if len(t.sources) < authMaxSources {
		return
	}
	for src := range t.sources {
		delete(t.sources, src)
		return
	}
}

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
	p, _ := forwarded.Parse(a.Settings.General().TrustedProxies)
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
	return a.throttledError(a.auth.wait(src), route)
}

// authFailure records a wrong credential of the request's source and returns
// the answer: the 429 when the source has no token left, else unthrottled
// (the route's own 401).
func (a *API) authFailure(r *http.Request, route string, unthrottled *errs.Error) *errs.Error {
	src := a.sourceOf(r)
	if e := a.throttledError(a.auth.wait(src), route); e != nil {
		return e
	}
	a.countAuth(route, authRefused)
	if a.auth.fail(src) && a.log != nil {
		a.log.Warn("failed authentication throttled", slog.String("source", src), slog.String("route", route),
			slog.Int("burst", authBurst), slog.Duration("refill", authRefill))
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
