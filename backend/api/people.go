package api

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"omniroute/backend/errs"
	"omniroute/backend/httpx"
	credredact "omniroute/backend/redact"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
)

// Roles, from least to most allowed. admin: everything; operator: the
// resilience actions (reset breakers, clear cooldowns, release leases, pause,
// test a connection) and every read without secrets; viewer: the reads
// without secrets. rolePublic marks a route that takes no management
// credential (its own, or none).
const (
	RoleViewer   = "viewer"
	RoleOperator = "operator"
	RoleAdmin    = "admin"
	rolePublic   = "public"
)

func roleRank(role string) int {
	switch role {
	case RoleViewer:
		return 1
	case RoleOperator:
		return 2
	case RoleAdmin:
		return 3
	}
	return 0
}

func validRole(role string) bool { return roleRank(role) > 0 }

// routeRoles is the least role each route under /api (and /metrics) needs,
// by "METHOD path-template". A management route missing here needs admin
// (and TestEveryRouteHasARole fails).
var routeRoles = map[string]string{
	"GET /api/monitoring/health":                rolePublic, // anonymous allowed; full answer with any management credential
	"POST /api/v1/session-leases":               rolePublic, // a client key with the lease:exclusive scope
	"GET /api/auth":                             rolePublic,
	"POST /api/login":                           rolePublic,
	"POST /api/logout":                          rolePublic,
	"GET /api/oidc/login":                       rolePublic,
	"GET /api/oidc/callback":                    rolePublic,
	"GET /api/session":                          RoleViewer,
	"GET /api/words":                            RoleViewer,
	"DELETE /api/monitoring/health":             RoleOperator,
	"GET /api/providers":                        RoleViewer,
	"POST /api/providers":                       RoleAdmin,
	"GET /api/providers/catalog":                RoleViewer,
	"GET /api/providers/import":                 RoleViewer, // which CLI logins can be imported
	"POST /api/providers/import":                RoleAdmin,
	"GET /api/providers/{id}":                   RoleViewer,
	"PUT /api/providers/{id}":                   RoleAdmin,
	"PATCH /api/providers/{id}":                 RoleAdmin,
	"DELETE /api/providers/{id}":                RoleAdmin,
	"POST /api/providers/{id}/test":             RoleOperator,
	"POST /api/providers/{id}/models/refresh":   RoleOperator,
	"GET /api/pricing":                          RoleViewer,
	"GET /api/keys":                             RoleViewer,
	"POST /api/keys":                            RoleAdmin,
	"GET /api/keys/default":                     RoleAdmin, // reveals the key
	"PATCH /api/keys/{id}":                      RoleAdmin,
	"PUT /api/keys/{id}":                        RoleAdmin,
	"DELETE /api/keys/{id}":                     RoleAdmin,
	"POST /api/keys/{id}/rotate":                RoleAdmin, // reveals the new secret
	"GET /api/settings":                         RoleViewer,
	"PATCH /api/settings":                       RoleAdmin,
	"GET /api/rules":                            RoleViewer,
	"POST /api/rules/preview":                   RoleViewer, // computes, changes nothing
	"GET /api/feature-flags":                    RoleViewer,
	"GET /api/logs":                             RoleViewer,
	"GET /api/logs/export":                      RoleViewer,
	"GET /api/providers/login":                  RoleViewer, // which providers have a sign-in flow
	"POST /api/providers/login/{provider}":      RoleAdmin,  // adds a credential
	"GET /api/providers/login/{provider}/{fid}": RoleAdmin,
	"POST /api/backup":                          RoleAdmin, // every credential, sealed with the caller's passphrase
	"POST /api/restore":                         RoleAdmin, // replaces the configuration
	"GET /api/capture":                          RoleViewer,
	"PATCH /api/capture":                        RoleAdmin,
	"PUT /api/capture":                          RoleAdmin,
	"GET /api/logs/{requestId}/bodies":          RoleAdmin, // people's prompts and answers
	"POST /api/playground/key":                  RoleAdmin,
	"POST /api/playground/":                     RoleAdmin, // inference with the playground's key
	"GET /api/events":                           RoleViewer,
	"GET /api/gateway":                          RoleViewer,
	"PATCH /api/gateway":                        RoleOperator, // pause, resume
	"GET /api/resilience":                       RoleViewer,
	"PATCH /api/resilience":                     RoleAdmin,
	"POST /api/resilience/reset":                RoleOperator,
	"GET /api/resilience/cooldowns":             RoleViewer,
	"POST /api/resilience/cooldowns":            RoleOperator,
	"GET /api/rate-limits":                      RoleViewer,
	"POST /api/rate-limits":                     RoleAdmin,
	"GET /api/resilience/model-cooldowns":       RoleViewer,
	"DELETE /api/resilience/model-cooldowns":    RoleOperator,
	"GET /api/combos":                           RoleViewer,
	"POST /api/combos":                          RoleAdmin,
	"GET /api/combos/strategies":                RoleViewer,
	"GET /api/combos/{id}":                      RoleViewer,
	"PUT /api/combos/{id}":                      RoleAdmin,
	"PATCH /api/combos/{id}":                    RoleAdmin,
	"DELETE /api/combos/{id}":                   RoleAdmin,
	"GET /api/routing/explain":                  RoleViewer,
	"GET /api/usage":                            RoleViewer,
	"GET /api/usage.csv":                        RoleViewer,
	"GET /api/usage/timeline":                   RoleViewer,
	"GET /api/resilience/leases":                RoleViewer,
	"DELETE /api/resilience/leases/{id}":        RoleOperator,
	"GET /api/agents":                           RoleViewer,
	"POST /api/agents/{id}/setup":               RoleAdmin, // writes the default key into the agent's config
	"POST /api/agents/{id}/undo":                RoleAdmin,
	"GET /api/agents/{id}/instructions":         RoleAdmin, // show the default key
	"GET /api/agents/{id}/models":               RoleViewer,
	"GET /api/agents/{id}/choices":              RoleViewer,
	"GET /api/instances":                        RoleViewer,
	"GET /api/update":                           RoleViewer,
	"POST /api/update/check":                    RoleOperator,
	"GET /api/users":                            RoleAdmin,
	"POST /api/users":                           RoleAdmin,
	"PATCH /api/users/{id}":                     RoleAdmin,
	"DELETE /api/users/{id}":                    RoleAdmin,
	"GET /api/tokens":                           RoleAdmin,
	"POST /api/tokens":                          RoleAdmin,
	"DELETE /api/tokens/{id}":                   RoleAdmin,
	"GET /api/audit":                            RoleOperator,
	"GET /metrics":                              RoleViewer,
}

// managementRouteRoles is routeRoles without the public routes: what
// GET /api/session gives the dashboard ("METHOD path-template" → least role;
// a route missing needs admin).
func managementRouteRoles() map[string]string {
	out := make(map[string]string, len(routeRoles))
	for k, role := range routeRoles {
		if role != rolePublic {
			out[k] = role
		}
	}
	return out
}

// readOnlyWrites are POST routes that change nothing (not audited): a rule
// preview, and the playground's inference (a request, not a change; its
// prompt is no audit material).
var readOnlyWrites = map[string]bool{"POST /api/rules/preview": true, "POST /api/playground/": true}

// routeKey is "METHOD path-template" of the matched route.
func routeKey(r *http.Request) string {
	tmpl := r.URL.Path
	if cur := mux.CurrentRoute(r); cur != nil {
		if t, err := cur.GetPathTemplate(); err == nil {
			tmpl = t
		}
	}
	return r.Method + " " + tmpl
}

// requiredRole is the least role the request's route needs (admin for a route
// without a rule).
func requiredRole(r *http.Request) string {
	if role, ok := routeRoles[routeKey(r)]; ok {
		return role
	}
	return RoleAdmin
}

// Principal kinds.
const (
	kindInstanceToken = "management-token" // the data directory's management.token
	kindToken         = "token"            // a stored, named management token
	kindUser          = "user"             // a signed-in person
)

// principal is who a management request acts as.
type principal struct {
	Kind   string
	Name   string // the user's email, the token's name
	Role   string
	UserID string
	// Owner is the person a stored token answers to (its creator's user id;
	// "" for the instance's own token and tokens minted with it).
	Owner string
}

// ownerID is the person p acts for: a signed-in user, or a token's creator.
func (p principal) ownerID() string {
	if p.Kind == kindUser {
		return p.UserID
	}
	return p.Owner
}

// actor is how the audit log names p.
func (p principal) actor() string {
	if p.Kind == kindToken {
		return "token:" + p.Name
	}
	return p.Name
}

type principalKey struct{}

func principalFrom(ctx context.Context) (principal, bool) {
	p, ok := ctx.Value(principalKey{}).(principal)
	return p, ok
}

// SessionCookie names the dashboard's session cookie.
const SessionCookie = "omniroute_session"

// sessionTTL is how long a sign-in lasts.
const sessionTTL = 12 * time.Hour

// TokenPrefix starts every stored management token (so a token is told from
// a client key at a glance).
const TokenPrefix = "omt_"

// errNoCredential: the request presents no management credential at all.
var errNoCredential = errors.New("no credential")

// errWrongCredential: the request presents one that matches nothing.
var errWrongCredential = errors.New("wrong credential")

// authenticate resolves the request's management credential: the bearer
// token (the instance's own management token, or a stored one) or else the
// session cookie.
func (a *API) authenticate(r *http.Request) (principal, error) {
	if tok := managementTokenOf(r); tok != "" {
		if subtle.ConstantTimeCompare([]byte(tok), []byte(a.token)) == 1 {
			return principal{Kind: kindInstanceToken, Name: "management token", Role: RoleAdmin}, nil
		}
		if a.Store == nil || !strings.HasPrefix(tok, TokenPrefix) {
			return principal{}, errWrongCredential
		}
		hash := secrets.Hash(tok)
		t, err := a.people.Token(a.Store, hash)
		if errors.Is(err, store.ErrNotFound) {
			return principal{}, errWrongCredential
		}
		if err != nil {
			return principal{}, err
		}
		if now := a.Clock.Now().UnixMilli(); now-t.LastUsedAt > time.Minute.Milliseconds() {
			_ = a.Store.TouchManagementToken(t.ID, now) // best effort: a read-only moment must not refuse it
			t.LastUsedAt = now
			a.people.TokenUsed(hash, t)
		}
		role, err := a.tokenRole(t)
		if err != nil {
			return principal{}, err
		}
		return principal{Kind: kindToken, Name: t.Name, Role: role, Owner: t.CreatorUserID}, nil
	}
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" || a.Store == nil {
		return principal{}, errNoCredential
	}
	u, err := a.people.SessionUser(a.Store, secrets.Hash(c.Value), a.Clock.Now().UnixMilli())
	if errors.Is(err, store.ErrNotFound) {
		return principal{}, errWrongCredential
	}
	if err != nil {
		return principal{}, err
	}
	return principal{Kind: kindUser, Name: u.Email, Role: u.Role, UserID: u.ID}, nil
}

// ForgetPeople drops the cached people checks (a team server's change feed
// saw users, sessions or tokens change on some instance).
func (a *API) ForgetPeople() { a.people.Forget() }

// tokenRole is a stored token's effective role: its own, at most its
// creator's current one. A token whose creator is gone matches nothing (the
// deletion revoked it; this covers a row that outlived it).
func (a *API) tokenRole(t store.ManagementToken) (string, error) {
	if t.CreatorUserID == "" {
		return t.Role, nil
	}
	u, err := a.people.User(a.Store, t.CreatorUserID)
	if errors.Is(err, store.ErrNotFound) {
		return "", errWrongCredential
	}
	if err != nil {
		return "", err
	}
	if roleRank(u.Role) < roleRank(t.Role) {
		return u.Role, nil
	}
	return t.Role, nil
}

// authorize answers a request whose credential does not reach its route's
// role, and reports whether it did.
func authorize(w http.ResponseWriter, r *http.Request, p principal) bool {
	need := requiredRole(r)
	if need == rolePublic || roleRank(p.Role) >= roleRank(need) {
		return true
	}
	httpx.WriteError(w, errs.New(errs.Permission, "ROLE_FORBIDDEN",
		"%s %s needs the %s role; %s has %s", r.Method, truncate(r.URL.Path, 120), need, truncate(p.actor(), 80), p.Role))
	return false
}

// statusWriter remembers the status a handler answered (for the audit log).
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// opaqueWrites are the writes whose body is never audit material: a backup's
// passphrase, a restore's file (its rows, sealed secrets, its MAC). Their
// entry's detail is only the event the handler noted (auditEvent): "backup
// made", "restore previewed", "restore applied", or "… refused" with the
// error's code.
var opaqueWrites = map[string]string{"POST /api/backup": "backup", "POST /api/restore": "restore"}

// bodyReadByHandler are the routes whose handler reads its own body, under
// its own limit (a restore's file is larger than any other management body).
var bodyReadByHandler = map[string]bool{"POST /api/restore": true}

type auditEventKey struct{}

// auditEvent lets an opaque write's handler name what happened for the
// audit log.
type auditEvent struct{ event, code string }

// noteAudit records, for the audit log, what an opaque write did.
func noteAudit(r *http.Request, event string) {
	if e, ok := r.Context().Value(auditEventKey{}).(*auditEvent); ok {
		e.event = event
	}
}

// noteAuditRefusal records the code of the error an opaque write answered.
func noteAuditRefusal(r *http.Request, err error) {
	var ee *errs.Error
	if e, ok := r.Context().Value(auditEventKey{}).(*auditEvent); ok && errors.As(err, &ee) {
		e.code = ee.Code
	}
}

// audited serves a management write and records it in the audit log.
func (a *API) audited(w http.ResponseWriter, r *http.Request, p principal, next http.HandlerFunc) {
	key := routeKey(r)
	kind, opaque := opaqueWrites[key]
	var body []byte
	var ev auditEvent
	if opaque {
		r = r.WithContext(context.WithValue(r.Context(), auditEventKey{}, &ev))
	} else if r.Body != nil && r.Body != http.NoBody {
		body, _ = io.ReadAll(r.Body) // already buffered by readManagementBody
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	var before map[string]any
	if !opaque && r.Method != http.MethodPost {
		before = a.auditBefore(r, key) // the target's name and old values, read before the write
	}
	sw := &statusWriter{ResponseWriter: w}
	next(sw, r)
	if sw.status == 0 {
		sw.status = http.StatusOK
	}
	if sw.status == http.StatusInsufficientStorage {
		// The disk is full: nothing changed, and an entry that still fit
		// would count as a successful write and hide the full disk from health.
		return
	}
	detail := ""
	if opaque {
		detail = opaqueDetail(kind, ev, sw.status)
	} else {
		detail = withBefore(auditDetail(mux.Vars(r), body), before)
	}
	a.recordAudit(r, p, key, sw.status, detail)
}

// opaqueDetail is an opaque write's audit detail: {event, code?}, nothing of
// its body.
func opaqueDetail(kind string, ev auditEvent, status int) string {
	if ev.event == "" {
		ev.event = kind + " made"
		if status >= 400 {
			ev.event = kind + " refused"
		}
	}
	out := map[string]any{"event": ev.event}
	if ev.code != "" && status >= 400 {
		out["code"] = ev.code
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// recordAudit appends one entry; a failure to record is logged, not answered
// (the write itself has happened).
func (a *API) recordAudit(r *http.Request, p principal, action string, status int, detail string) {
	if a.Store == nil {
		return
	}
	e := store.AuditEntry{At: a.Clock.Now().UnixMilli(), Actor: p.actor(), ActorKind: p.Kind, Role: p.Role,
		Remote: a.sourceOf(r), Action: action, Target: truncate(r.URL.Path, 300), Status: status, Detail: detail}
	if err := a.Store.AddAudit(&e); err != nil && a.log != nil {
		a.log.Warn("audit entry not recorded", "action", action, "error", err.Error())
	}
}

// auditDetailMax bounds an entry's detail.
const auditDetailMax = 4096

// auditDetail is what changed: the route's variables and the request body,
// with every secret-looking field replaced by "[redacted]".
func auditDetail(vars map[string]string, body []byte) string {
	out := map[string]any{}
	if len(vars) > 0 {
		out["vars"] = vars
	}
	if len(bytes.TrimSpace(body)) > 0 {
		var v any
		if json.Unmarshal(body, &v) == nil {
			out["body"] = redact(v)
		}
	}
	if len(out) == 0 {
		return ""
	}
	b, _ := json.Marshal(out)
	if len(b) > auditDetailMax {
		return auditShape(vars, out["body"])
	}
	return string(b)
}

// secretFields are lower-cased name parts that mark a field as secret:
// "pass" (password, passphrase, passcode), "phrase", "secret", "token",
// "key" (apiKey, privateKey, accessKey, keyId, …) and the rest.
var secretFields = []string{"pass", "phrase", "secret", "token", "key", "credential", "authorization", "cookie"}

func isSecretField(name string) bool {
	n := strings.ToLower(name)
	if n == "value" {
		return true
	}
	for _, s := range secretFields {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// redact replaces the values of secret-looking fields, at any depth.
func redact(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if isSecretField(k) {
				t[k] = "[redacted]"
			} else {
				t[k] = redact(x)
			}
		}
		return t
	case []any:
		for i, x := range t {
			t[i] = redact(x)
		}
		return t
	case string:
		if strings.Contains(t, "://") { // a URL's user:password@ or ?key=
			return credredact.URL(t)
		}
	}
	return v
}
