package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"
	"golang.org/x/crypto/bcrypt"

	"omniroute/backend/errs"
	"omniroute/backend/httpx"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
)

// Password bounds: bcrypt reads at most 72 bytes.
const (
	minPasswordLen = 10
	maxPasswordLen = 72
)

func (a *API) peopleRoutes(m *mux.Router) {
	m.HandleFunc("/auth", a.authInfo).Methods(http.MethodGet)
	m.HandleFunc("/login", a.login).Methods(http.MethodPost)
	m.HandleFunc("/logout", a.logout).Methods(http.MethodPost)
	m.HandleFunc("/oidc/login", a.oidcLogin).Methods(http.MethodGet)
	m.HandleFunc("/oidc/callback", a.oidcCallback).Methods(http.MethodGet)
	m.HandleFunc("/session", a.management(a.sessionInfo)).Methods(http.MethodGet)
	m.HandleFunc("/users", a.management(a.listUsers)).Methods(http.MethodGet)
	m.HandleFunc("/users", a.management(a.createUser)).Methods(http.MethodPost)
	m.HandleFunc("/users/{id}", a.management(a.updateUser)).Methods(http.MethodPatch)
	m.HandleFunc("/users/{id}", a.management(a.deleteUser)).Methods(http.MethodDelete)
	m.HandleFunc("/tokens", a.management(a.listTokens)).Methods(http.MethodGet)
	m.HandleFunc("/tokens", a.management(a.createToken)).Methods(http.MethodPost)
	m.HandleFunc("/tokens/{id}", a.management(a.deleteToken)).Methods(http.MethodDelete)
	m.HandleFunc("/audit", a.management(a.listAudit)).Methods(http.MethodGet)
}

// authInfo tells the dashboard how to sign in: whether users exist (then it
// shows the sign-in form) and whether single sign-on is configured.
func (a *API) authInfo(w http.ResponseWriter, r *http.Request) {
	n, err := a.Store.UserCount()
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"users": n > 0, "sso": a.SSO != nil, "team": a.Store.Shared()})
}

func userJSON(u store.User) map[string]any {
	return map[string]any{"id": u.ID, "email": u.Email, "name": u.Name, "role": u.Role,
		"hasPassword": u.PasswordHash != "", "sso": u.SSOSubject != "",
		"createdAt": rfc3339(u.CreatedAt), "lastLoginAt": rfc3339(u.LastLoginAt)}
}

// sessionInfo is who the request acts as, and the least role each
// management route needs (the dashboard hides or disables what the role may
// not send from this table, never a list of its own).
func (a *API) sessionInfo(w http.ResponseWriter, r *http.Request) {
	p, _ := principalFrom(r.Context())
	out := map[string]any{"kind": p.Kind, "name": p.Name, "role": p.Role, "routes": managementRouteRoles()}
	if p.UserID != "" {
		out["userId"] = p.UserID
	}
	httpx.WriteJSON(w, http.StatusOK, out)
}

// startSession stores a new session for u and sets its cookie.
func (a *API) startSession(w http.ResponseWriter, r *http.Request, u *store.User) error {
	now := a.Clock.Now()
	value := secrets.RandomToken(32)
	ss := store.UserSession{IDHash: secrets.Hash(value), UserID: u.ID, CreatedAt: now.UnixMilli(),
		ExpiresAt: now.Add(sessionTTL).UnixMilli()}
	if err := a.Store.CreateSession(&ss); err != nil {
		return err
	}
	_ = a.Store.DeleteExpiredSessions(now.UnixMilli()) // housekeeping; a failure leaves rows that never match
	u.LastLoginAt = now.UnixMilli()
	_ = a.Store.SaveUser(u)
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: value, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: a.secureRequest(r), MaxAge: int(sessionTTL / time.Second)})
	return nil
}

func (a *API) login(w http.ResponseWriter, r *http.Request) {
	if e := a.authPrecheck(r, authRouteManagement); e != nil {
		httpx.WriteError(w, e)
		return
	}
	if !a.readManagementBody(w, r) {
		return
	}
	if !isJSONType(r.Header.Get("Content-Type")) {
		// A form or a no-cors fetch of another page cannot sign this
		// browser in to an account of its choosing.
		httpx.WriteError(w, errContentTypeRequired())
		return
	}
	var in struct {
		Email    string `json:"email"`
		Password string `json:"password"`
	}
	if err := a.decode(r, &in); err != nil {
		httpx.WriteError(w, err)
		return
	}
	if strings.TrimSpace(in.Email) == "" || in.Password == "" {
		httpx.WriteError(w, errs.New(errs.Invalid, "CREDENTIALS_REQUIRED", "send {\"email\":…,\"password\":…}"))
		return
	}
	if len(in.Password) > maxPasswordLen {
		// bcrypt reads 72 bytes: a longer one would sign in with any tail.
		httpx.WriteError(w, errs.New(errs.Invalid, "INVALID_PASSWORD", "a password is at most %d bytes", maxPasswordLen).WithParam("password"))
		return
	}
	u, err := a.Store.UserByEmail(strings.TrimSpace(in.Email))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		httpx.WriteError(w, err)
		return
	}
	hash := []byte(u.PasswordHash)
	if err != nil || len(hash) == 0 {
		hash = a.dummyHash()
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(in.Password)) != nil || err != nil || u.PasswordHash == "" {
		a.recordAudit(r, principal{Kind: kindUser, Name: truncate(strings.ToLower(strings.TrimSpace(in.Email)), 254)},
			"POST /api/login", http.StatusUnauthorized, "")
		httpx.WriteError(w, a.authFailure(r, authRouteManagement,
			errs.New(errs.Auth, "LOGIN_FAILED", "wrong email or password")))
		return
	}
	if err := a.startSession(w, r, &u); err != nil {
		httpx.WriteError(w, err)
		return
	}
	a.recordAudit(r, principal{Kind: kindUser, Name: u.Email, Role: u.Role, UserID: u.ID}, "POST /api/login", http.StatusOK, "")
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"user": userJSON(u)})
}

func (a *API) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(SessionCookie); err == nil && c.Value != "" {
		if p, err := a.authenticate(r); err == nil && p.Kind == kindUser {
			a.recordAudit(r, p, "POST /api/logout", http.StatusOK, "")
		}
		err := a.Store.DeleteSession(secrets.Hash(c.Value))
		a.ForgetPeople()
		if err != nil {
			httpx.WriteError(w, err)
			return
		}
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: a.secureRequest(r), MaxAge: -1})
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"ok": true})
}

func (a *API) listUsers(w http.ResponseWriter, r *http.Request) {
	rows, err := a.Store.Users()
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	out := make([]map[string]any, 0, len(rows))
	for _, u := range rows {
		out = append(out, userJSON(u))
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"users": out})
}

type userInput struct {
	Email    *string `json:"email"`
	Name     *string `json:"name"`
	Role     *string `json:"role"`
	Password *string `json:"password"`
}

func (in userInput) validate() error {
	if in.Email != nil {
		e := strings.TrimSpace(*in.Email)
		at := strings.IndexByte(e, '@')
		if len(e) > 254 || at < 1 || at == len(e)-1 || strings.ContainsAny(e, " \t\r\n") {
			return errs.New(errs.Invalid, "INVALID_EMAIL", "email must look like name@example.com").WithParam("email")
		}
	}
	if in.Name != nil && len(*in.Name) > 100 {
		return errs.New(errs.Invalid, "INVALID_NAME", "name must be at most 100 characters").WithParam("name")
	}
	if in.Role != nil && !validRole(*in.Role) {
		return errs.New(errs.Invalid, "INVALID_ROLE", "role must be admin, operator or viewer").WithParam("role")
	}
	if in.Password != nil && (len(*in.Password) < minPasswordLen || len(*in.Password) > maxPasswordLen) {
		return errs.New(errs.Invalid, "INVALID_PASSWORD", "password must be %d to %d bytes", minPasswordLen, maxPasswordLen).WithParam("password")
	}
	return nil
}

func (a *API) hashPassword(pw string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(pw), a.PasswordCost)
	return string(h), err
}

func (a *API) createUser(w http.ResponseWriter, r *http.Request) {
	var in userInput
	if err := a.decode(r, &in); err != nil {
		httpx.WriteError(w, err)
		return
	}
	if in.Email == nil {
		httpx.WriteError(w, errs.New(errs.Invalid, "EMAIL_REQUIRED", "field \"email\" is required").WithParam("email"))
		return
	}
	if in.Role == nil {
		httpx.WriteError(w, errs.New(errs.Invalid, "ROLE_REQUIRED", "field \"role\" is required (admin, operator or viewer)").WithParam("role"))
		return
	}
	if err := in.validate(); err != nil {
		httpx.WriteError(w, err)
		return
	}
	u := store.User{ID: secrets.RandomID(), Email: strings.TrimSpace(*in.Email), Role: *in.Role, CreatedAt: a.Clock.Now().UnixMilli()}
	if in.Name != nil {
		u.Name = strings.TrimSpace(*in.Name)
	}
	if in.Password != nil {
		h, err := a.hashPassword(*in.Password)
		if err != nil {
			httpx.WriteError(w, err)
			return
		}
		u.PasswordHash = h
	}
	if err := a.Store.CreateUser(&u); err != nil {
		if errors.Is(err, store.ErrConflict) {
			err = errs.New(errs.Conflict, "USER_EXISTS", "a user with this email exists").WithParam("email")
		}
		httpx.WriteError(w, err)
		return
	}
	httpx.WriteJSON(w, http.StatusCreated, map[string]any{"user": userJSON(u)})
}

func (a *API) updateUser(w http.ResponseWriter, r *http.Request) {
	var in userInput
	if err := a.decode(r, &in); err != nil {
		httpx.WriteError(w, err)
		return
	}
	if in.Email != nil {
		httpx.WriteError(w, errs.New(errs.Invalid, "EMAIL_IMMUTABLE", "a user's email cannot change; create another user").WithParam("email"))
		return
	}
	if err := in.validate(); err != nil {
		httpx.WriteError(w, err)
		return
	}
	u, err := a.Store.User(mux.Vars(r)["id"])
	if err != nil {
		httpx.WriteError(w, notFound(err, "user"))
		return
	}
	if in.Name != nil {
		u.Name = strings.TrimSpace(*in.Name)
	}
	if in.Role != nil {
		u.Role = *in.Role
	}
	if in.Password != nil {
		h, err := a.hashPassword(*in.Password)
		if err != nil {
			httpx.WriteError(w, err)
			return
		}
		u.PasswordHash = h
	}
	if err := a.Store.SaveUser(&u); err != nil {
		httpx.WriteError(w, notFound(err, "user"))
		return
	}
	if in.Password != nil { // a new password signs the user out everywhere
		if err := a.Store.DeleteUserSessions(u.ID); err != nil {
			httpx.WriteError(w, err)
			return
		}
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"user": userJSON(u)})
}

func (a *API) deleteUser(w http.ResponseWriter, r *http.Request) {
	if err := a.Store.DeleteUser(mux.Vars(r)["id"]); err != nil {
		httpx.WriteError(w, notFound(err, "user"))
		return
	}
	if err := a.reloadKeys(); err != nil {
		httpx.WriteError(w, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"ok": true})
}

func tokenJSON(t store.ManagementToken) map[string]any {
	return map[string]any{"id": t.ID, "name": t.Name, "role": t.Role, "tokenMasked": t.TokenPrefix + "…",
		"createdBy": t.CreatedBy, "createdAt": rfc3339(t.CreatedAt), "lastUsedAt": rfc3339(t.LastUsedAt)}
}

func (a *API) listTokens(w http.ResponseWriter, r *http.Request) {
	rows, err := a.Store.ManagementTokens()
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	out := make([]map[string]any, 0, len(rows))
	for _, t := range rows {
		out = append(out, tokenJSON(t))
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"tokens": out})
}

func (a *API) createToken(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Name *string `json:"name"`
		Role *string `json:"role"`
	}
	if err := a.decode(r, &in); err != nil {
		httpx.WriteError(w, err)
		return
	}
	if in.Name == nil || strings.TrimSpace(*in.Name) == "" || len(*in.Name) > 100 {
		httpx.WriteError(w, errs.New(errs.Invalid, "INVALID_NAME", "name must be 1 to 100 characters").WithParam("name"))
		return
	}
	if in.Role == nil || !validRole(*in.Role) {
		httpx.WriteError(w, errs.New(errs.Invalid, "INVALID_ROLE", "role must be admin, operator or viewer").WithParam("role"))
		return
	}
	p, _ := principalFrom(r.Context())
	value := TokenPrefix + secrets.RandomToken(32)
	t := store.ManagementToken{ID: secrets.RandomID(), Name: strings.TrimSpace(*in.Name), TokenHash: secrets.Hash(value),
		TokenPrefix: value[:len(TokenPrefix)+4], Role: *in.Role, CreatedBy: p.actor(), CreatorUserID: p.ownerID(),
		CreatedAt: a.Clock.Now().UnixMilli()}
	if err := a.Store.CreateManagementToken(&t); err != nil {
		httpx.WriteError(w, err)
		return
	}
	out := tokenJSON(t)
	out["token"] = value // shown once
	httpx.WriteJSON(w, http.StatusCreated, out)
}

func (a *API) deleteToken(w http.ResponseWriter, r *http.Request) {
	if err := a.Store.DeleteManagementToken(mux.Vars(r)["id"]); err != nil {
		httpx.WriteError(w, notFound(err, "token"))
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"ok": true})
}

// auditTime reads an RFC 3339 time or unix milliseconds.
func auditTime(q url.Values, name string) (int64, error) {
	v := q.Get(name)
	if v == "" {
		return 0, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t.UnixMilli(), nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
		return n, nil
	}
	return 0, errInvalidQuery(name, name+" must be an RFC 3339 time or unix milliseconds")
}

// listAudit serves GET /api/audit?actor=&action=&since=&until=&before=&limit=:
// the newest matching entries first; nextBefore pages to older ones.
func (a *API) listAudit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := store.AuditFilter{Actor: truncate(q.Get("actor"), 200), Action: truncate(q.Get("action"), 200), Limit: 50}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			httpx.WriteError(w, errInvalidQuery("limit", "limit must be 1..500"))
			return
		}
		f.Limit = n
	}
	if v := q.Get("before"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			httpx.WriteError(w, errInvalidQuery("before", "before must be an entry id"))
			return
		}
		f.Before = n
	}
	var err error
	if f.Since, err = auditTime(q, "since"); err != nil {
		httpx.WriteError(w, err)
		return
	}
	if f.Until, err = auditTime(q, "until"); err != nil {
		httpx.WriteError(w, err)
		return
	}
	rows, err := a.Store.Audit(f)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	out := make([]map[string]any, 0, len(rows))
	for _, e := range rows {
		var detail any
		if e.Detail != "" {
			detail = jsonRaw(e.Detail)
		}
		out = append(out, map[string]any{"id": e.ID, "at": rfc3339(e.At), "actor": e.Actor, "actorKind": e.ActorKind,
			"role": e.Role, "remote": e.Remote, "action": e.Action, "target": e.Target, "status": e.Status, "detail": detail})
	}
	body := map[string]any{"entries": out}
	if len(rows) == f.Limit {
		body["nextBefore"] = rows[len(rows)-1].ID
	}
	httpx.WriteJSON(w, http.StatusOK, body)
}

// jsonRaw is s as raw JSON when it is valid JSON, else as a string.
func jsonRaw(s string) any {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return s
}
