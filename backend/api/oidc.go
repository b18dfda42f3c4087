package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"omniroute/backend/errs"
	"omniroute/backend/httpx"
	"omniroute/backend/secrets"
	"omniroute/backend/sso"
	"omniroute/backend/store"
)

// oidcCookie carries a sign-in between /api/oidc/login and the callback,
// sealed with the instances' common key (the callback may reach another
// instance). SameSite=Lax: the callback is a top-level navigation from the
// identity provider's site, which a Strict cookie would not follow.
const (
	oidcCookie    = "omniroute_oidc"
	oidcCookieTTL = 10 * time.Minute
)

// pendingLogin is the sealed cookie's content.
type pendingLogin struct {
	sso.Pending
	Expires int64 `json:"e"`
}

func errSSONotConfigured() error {
	return errs.New(errs.NotFound, "OIDC_NOT_CONFIGURED", "single sign-on is not configured (OMNIROUTE_OIDC_ISSUER)")
}

// oidcLogin starts a sign-in: redirect to the provider with state, nonce and
// the PKCE challenge, keeping them in a sealed cookie.
func (a *API) oidcLogin(w http.ResponseWriter, r *http.Request) {
	if a.SSO == nil {
		httpx.WriteError(w, errSSONotConfigured())
		return
	}
	authURL, pend, err := a.SSO.Begin(r.Context(), secrets.RandomToken(24), secrets.RandomToken(24))
	if err != nil {
		httpx.WriteError(w, errs.New(errs.Upstream, "OIDC_DISCOVERY_FAILED", "%s", err.Error()))
		return
	}
	b, _ := json.Marshal(pendingLogin{Pending: pend, Expires: a.Clock.Now().Add(oidcCookieTTL).UnixMilli()})
	sealed, err := a.Box.Seal(string(b))
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: oidcCookie, Value: sealed, Path: "/api/oidc/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: a.secureRequest(r), MaxAge: int(oidcCookieTTL / time.Second)})
	http.Redirect(w, r, authURL, http.StatusFound)
}

// oidcCallback finishes a sign-in: the code is exchanged and the ID token
// verified (sso.Finish); the identity becomes a user (ssoUser) with a
// session, and the browser goes to the dashboard.
func (a *API) oidcCallback(w http.ResponseWriter, r *http.Request) {
	if a.SSO == nil {
		httpx.WriteError(w, errSSONotConfigured())
		return
	}
	if e := a.authPrecheck(r, authRouteManagement); e != nil {
		httpx.WriteError(w, e)
		return
	}
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		httpx.WriteError(w, errs.New(errs.Auth, "OIDC_DENIED", "the identity provider answered %q", truncate(e, 80)))
		return
	}
	var pend pendingLogin
	if c, err := r.Cookie(oidcCookie); err == nil {
		if plain, err := a.Box.Open(c.Value); err == nil {
			_ = json.Unmarshal([]byte(plain), &pend)
		}
	}
	if pend.Expires < a.Clock.Now().UnixMilli() {
		pend = pendingLogin{} // no, a foreign or an expired sign-in: the state cannot match
	}
	http.SetCookie(w, &http.Cookie{Name: oidcCookie, Value: "", Path: "/api/oidc/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: a.secureRequest(r), MaxAge: -1})
	claims, err := a.SSO.Finish(r.Context(), pend.Pending, q.Get("state"), q.Get("code"))
	if err != nil {
		e := ssoError(err)
		if e.Class == errs.Auth {
			e = a.authFailure(r, authRouteManagement, e)
		}
		httpx.WriteError(w, e)
		return
	}
	u, err := a.ssoUser(r, claims)
	if err != nil {
		e := errs.As(err)
		if e.Class == errs.Auth {
			e = a.authFailure(r, authRouteManagement, e)
		}
		httpx.WriteError(w, e)
		return
	}
	if err := a.startSession(w, r, &u); err != nil {
		httpx.WriteError(w, err)
		return
	}
	a.recordAudit(r, principal{Kind: kindUser, Name: u.Email, Role: u.Role, UserID: u.ID}, "GET /api/oidc/callback", http.StatusFound, "")
	http.Redirect(w, r, "/dashboard/", http.StatusFound)
}

// ssoUser is the user a verified sign-in is: the one bound to its (issuer,
// subject); else, only when the provider vouches for the email
// (email_verified: true), the user with that email, bound now if they have
// neither a password nor another identity; else a new user with the role
// mapped to the email. A password account is never taken over by a sign-in
// (it is the person's own; an admin re-creates it without a password to
// move it to single sign-on), nor is an account bound to another identity.
func (a *API) ssoUser(r *http.Request, claims sso.Claims) (store.User, error) {
	u, err := a.Store.UserBySSO(claims.Issuer, claims.Subject)
	if err == nil || !errors.Is(err, store.ErrNotFound) {
		return u, err
	}
	if claims.Email == "" || !claims.EmailVerified {
		return u, ssoError(sso.ErrNoEmail)
	}
	u, err = a.Store.UserByEmail(claims.Email)
	switch {
	case errors.Is(err, store.ErrNotFound):
		role := a.SSO.RoleFor(claims.Email)
		if !validRole(role) {
			return u, errs.New(errs.Permission, "OIDC_NO_ROLE",
				"%s signed in but no role is mapped to it (OMNIROUTE_OIDC_ROLES, OMNIROUTE_OIDC_DEFAULT_ROLE); ask an admin", truncate(claims.Email, 120))
		}
		u = store.User{ID: secrets.RandomID(), Email: claims.Email, Name: truncate(claims.Name, 100), Role: role,
			SSOIssuer: claims.Issuer, SSOSubject: claims.Subject, CreatedAt: a.Clock.Now().UnixMilli()}
		if err := a.Store.CreateUser(&u); err != nil {
			return u, err
		}
		a.recordAudit(r, principal{Kind: kindUser, Name: u.Email, Role: u.Role, UserID: u.ID}, "SSO user created", http.StatusCreated,
			`{"role":"`+role+`"}`)
		return u, nil
	case err != nil:
		return u, err
	case u.SSOSubject == claims.Subject && u.SSOIssuer == "":
		u.SSOIssuer = claims.Issuer // bound before issuers were recorded (one issuer per gateway)
		return u, nil
	case u.SSOSubject != "":
		return u, errs.New(errs.Permission, "OIDC_IDENTITY_MISMATCH",
			"%s belongs to another single sign-on identity; ask an admin", truncate(claims.Email, 120))
	case u.PasswordHash != "":
		return u, errs.New(errs.Permission, "OIDC_LINK_REFUSED",
			"%s is a password account: sign in with its password (single sign-on never takes over a password account; an admin can re-create the user without a password)", truncate(claims.Email, 120))
	}
	u.SSOIssuer, u.SSOSubject = claims.Issuer, claims.Subject // an account an admin made for single sign-on
	return u, nil
}

// ssoError maps a refused sign-in to its stable code.
func ssoError(err error) *errs.Error {
	msg := err.Error()
	switch {
	case errors.Is(err, sso.ErrStateMismatch):
		return errs.New(errs.Auth, "OIDC_STATE_MISMATCH", "%s: start the sign-in again", msg)
	case errors.Is(err, sso.ErrNonceMismatch):
		return errs.New(errs.Auth, "OIDC_NONCE_MISMATCH", "%s", msg)
	case errors.Is(err, sso.ErrIDToken):
		return errs.New(errs.Auth, "OIDC_TOKEN_INVALID", "%s", truncate(msg, 300))
	case errors.Is(err, sso.ErrNoEmail):
		return errs.New(errs.Auth, "OIDC_EMAIL_REQUIRED", "%s", msg)
	case errors.Is(err, sso.ErrExchange):
		return errs.New(errs.Auth, "OIDC_EXCHANGE_FAILED", "%s", truncate(msg, 300))
	case errors.Is(err, sso.ErrDiscovery):
		return errs.New(errs.Upstream, "OIDC_DISCOVERY_FAILED", "%s", truncate(msg, 300))
	}
	return errs.As(err)
}
