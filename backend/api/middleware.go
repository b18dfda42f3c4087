package api

import (
	"context"
	"errors"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"omniroute/backend/errs"
	"omniroute/backend/httpx"
)

// hostAllowed accepts loopback names and addresses and configured extra hosts:
// a foreign Host header is a DNS-rebinding attempt.
func (a *API) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if host == "127.0.0.1" || host == "::1" { // what every local client sends: no address to parse
		return true
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || host == "wails.localhost" {
		return true
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return true
	}
	for _, h := range a.allowedHosts {
		if h == host {
			return true
		}
	}
	return false
}

// originAllowed accepts requests without an Origin and same-machine origins.
func (a *API) originAllowed(origin string) bool {
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	switch u.Scheme {
	case "http", "https":
		return a.hostAllowed(u.Host)
	case "wails":
		return true // the desktop window's own origin
	}
	return false
}

// crossOriginBrowser reports a request a browser sent for a page of another
// origin: Sec-Fetch-Site says so ("cross-site", or "same-site", which is any
// other port of the same host), or, from a browser that does not send it, an
// Origin other than the request's own scheme and Host (an opaque "null"
// origin included). The desktop window's wails: origin is its own. Requests
// with neither header (CLIs, SDKs, agents) are not browser-originated.
func crossOriginBrowser(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		return true
	case "same-origin", "none":
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	u, err := url.Parse(origin)
	if err != nil {
		return true
	}
	switch u.Scheme {
	case "wails":
		return false
	case "http":
		return r.TLS != nil || !strings.EqualFold(u.Host, r.Host)
	case "https":
		return r.TLS == nil || !strings.EqualFold(u.Host, r.Host)
	}
	return true
}

// CSRFHeader is the header the dashboard sends with every management
// request. A page of another origin cannot set it without a CORS preflight,
// which the gateway never grants: its presence proves the request came from
// the gateway's own pages (or from a non-browser client).
const CSRFHeader = "X-OmniRoute-CSRF"

// ownOrigin reports whether origin is exactly the gateway's own
// scheme://host:port as this request reached it (another port of the same
// host is another origin).
func ownOrigin(r *http.Request, origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return false
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return strings.EqualFold(u.Scheme, scheme) && strings.EqualFold(u.Host, r.Host)
}

// sameOriginWrite reports whether a write carried by the session cookie
// comes from the gateway's own pages: the browser says so (Sec-Fetch-Site
// same-origin, or none for a user's own action), or it carries the CSRF
// header, or its Origin is exactly the gateway's. A browser that says
// cross-site or same-site (another port, another subdomain) is refused
// whatever else the request carries.
func sameOriginWrite(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "none":
		return true
	case "cross-site", "same-site":
		return false
	}
	if r.Header.Get(CSRFHeader) != "" {
		return true
	}
	origin := r.Header.Get("Origin")
	return origin != "" && ownOrigin(r, origin)
}

// hasBody reports whether the request carries a body (a chunked one counts).
func hasBody(r *http.Request) bool {
	return r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0
}

// isJSONType reports whether a Content-Type header names application/json.
func isJSONType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// errContentTypeRequired refuses a body that is not declared JSON.
func errContentTypeRequired() error {
	return errs.New(errs.Unsupported, "CONTENT_TYPE_REQUIRED", "send Content-Type: application/json")
}

// cookieWriteRefusal is why a write authenticated by the session cookie is
// refused (nil: accepted): one a page of another origin may have sent (a
// cross-site request forgery: SameSite ignores ports), or a body not
// declared application/json (what a form or a no-cors fetch sends).
func cookieWriteRefusal(r *http.Request) error {
	if !isStateChanging(r.Method) {
		return nil
	}
	if !sameOriginWrite(r) {
		return errs.New(errs.Permission, "CSRF_REFUSED",
			"a signed-in browser's change must come from the gateway's own dashboard (same origin, or the %s header)", CSRFHeader)
	}
	if hasBody(r) && !isJSONType(r.Header.Get("Content-Type")) {
		return errContentTypeRequired()
	}
	return nil
}

func isStateChanging(m string) bool {
	return m != http.MethodGet && m != http.MethodHead && m != http.MethodOptions
}

// guard applies the Host allowlist, the cross-origin rule and panic recovery to
// every route, before any authentication.
func (a *API) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A keep-alive connection may carry the write deadline of its previous
		// request (handlers bound their writes to slow readers): start clean.
		_ = httpx.SetWriteDeadline(w, time.Time{})
		e := a.edge(w, r)
		w = e
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				a.log.Error("handler panic", slog.String("path", r.URL.Path), slog.Any("panic", p))
				writeEdgeError(w, r, errs.New(errs.Internal, "INTERNAL_ERROR", "internal error"))
			}
		}()
		if a.refused(w, r) {
			return
		}
		next.ServeHTTP(w, r)
		a.releaseEdge(e, r)
	})
}

// refused answers a request from a foreign Host (DNS rebinding) or a
// cross-origin state change, and reports whether it did. Out of line: its
// frame is gone before the request runs (a streaming request's stack stays
// small).
//
//go:noinline
func (a *API) refused(w http.ResponseWriter, r *http.Request) bool {
	if !a.hostAllowed(r.Host) {
		writeEdgeError(w, r, errs.New(errs.Permission, "HOST_NOT_ALLOWED",
			"Host %q is not allowed; use 127.0.0.1 or localhost (or add it to OMNIROUTE_ALLOWED_HOSTS)", truncate(r.Host, 80)))
		return true
	}
	if isStateChanging(r.Method) && !a.originAllowed(r.Header.Get("Origin")) {
		writeEdgeError(w, r, errs.New(errs.Permission, "ORIGIN_NOT_ALLOWED", "cross-origin requests may not change state"))
		return true
	}
	return false
}

func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// isManagement reports whether the request carries a valid management
// credential of any role (a token, or a session cookie).
func (a *API) isManagement(r *http.Request) bool {
	_, err := a.authenticate(r)
	return err == nil
}

// managementTokenOf is the token the request presents ("" for none; the
// event stream also takes it as ?token=, since EventSource cannot set headers).
func managementTokenOf(r *http.Request) string {
	tok := bearer(r)
	if tok == "" && r.URL.Path == "/api/events" {
		tok = r.URL.Query().Get("token")
	}
	return tok
}

// management requires a management credential (a token or a signed-in
// user's session) whose role reaches the route's (routeRoles), and records
// every write in the audit log.
func (a *API) management(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		presented := managementTokenOf(r) != ""
		if !presented {
			if c, err := r.Cookie(SessionCookie); err == nil && c.Value != "" {
				presented = true
			}
		}
		if presented {
			if e := a.authPrecheck(r, authRouteManagement); e != nil {
				httpx.WriteError(w, e) // a throttled remote source: its credential is not checked
				return
			}
		}
		p, err := a.authenticate(r)
		if err != nil {
			if !errors.Is(err, errNoCredential) && !errors.Is(err, errWrongCredential) {
				httpx.WriteError(w, err)
				return
			}
			e := errs.New(errs.Auth, "MANAGEMENT_AUTH_REQUIRED",
				"the management API needs Authorization: Bearer <token> or a signed-in session; run `omniroute token` to print the token")
			if presented { // a wrong credential, not a missing one
				e = a.authFailure(r, authRouteManagement, e)
			}
			httpx.WriteError(w, e)
			return
		}
		if p.Kind == kindUser {
			if err := cookieWriteRefusal(r); err != nil {
				a.auditRefusal(r, p, err)
				httpx.WriteError(w, err)
				return
			}
		}
		if !authorize(w, r, p) {
			if isStateChanging(r.Method) {
				a.auditRefusal(r, p, errs.New(errs.Permission, "ROLE_FORBIDDEN", "role"))
			}
			return
		}
		if !bodyReadByHandler[routeKey(r)] && !a.readManagementBody(w, r) {
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), principalKey{}, p))
		if isStateChanging(r.Method) && !readOnlyWrites[routeKey(r)] {
			// A write may change people (a role, a revocation, a sign-out):
			// this instance forgets its cached checks at once, the others
			// when the change feed tells them.
			defer a.ForgetPeople()
			a.audited(w, r, p, next)
			return
		}
		next(w, r)
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
