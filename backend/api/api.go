// Package api is the HTTP edge: gorilla/mux routes for the client inference API,
// the management REST API and the dashboard, with the Host allowlist,
// cross-origin rule, authentication and the one error envelope.
package api

import (
	"context"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/mux"
	"golang.org/x/crypto/bcrypt"

	"omniroute/backend/agents"
	"omniroute/backend/auththrottle"
	"omniroute/backend/backup"
	"omniroute/backend/budget"
	"omniroute/backend/capture"
	"omniroute/backend/clock"
	"omniroute/backend/config"
	"omniroute/backend/errs"
	"omniroute/backend/events"
	"omniroute/backend/gateway"
	"omniroute/backend/httpx"
	"omniroute/backend/instances"
	"omniroute/backend/keyring"
	"omniroute/backend/leases"
	"omniroute/backend/peoplecache"
	"omniroute/backend/prefillcap"
	"omniroute/backend/pricing"
	"omniroute/backend/providers"
	"omniroute/backend/providers/discovery"
	"omniroute/backend/resilience/rules"
	"omniroute/backend/routing"
	"omniroute/backend/secrets"
	"omniroute/backend/sso"
	"omniroute/backend/store"
	"omniroute/backend/update"
)

// Deps are the API's collaborators, built by package server.
type Deps struct {
	// KeysFresh, when set (a team server), refuses client keys an instance
	// cut from its database has not seen revalidated within
	// team.maxStalenessMs (503 DATABASE_UNAVAILABLE); nil: always fresh.
	KeysFresh    func() error
	Store        *store.Store
	Box          *secrets.Box
	Catalog      *providers.Catalog
	Engine       *routing.Engine
	Gateway      *gateway.Gateway
	Settings     *config.Holder
	Keys         *keyring.Keyring
	Clock        clock.Clock
	Log          *slog.Logger
	Token        string
	AllowedHosts []string
	Dashboard    fs.FS // the built SPA (frontend/dist)
	Version      string
	BaseURL      string // the gateway's own URL as clients reach it
	StartedAt    time.Time
	HTTPClient   *http.Client // for connection tests
	// Discovery lists an upstream's models (create, Test, refresh).
	Discovery *discovery.Client
	// Executors send the credential check's one-token completion (create,
	// edit, Test); nil skips that step.
	Executors Executors
	// Prefills is what continuations and Test's prefill probe learned of
	// each model's assistant prefill (nil: not shown, not probed).
	Prefills *prefillcap.Book
	// FreshToken is a subscription connection's access token, refreshed
	// when due (the gateway's refresher), for the checks that send a
	// request with it; nil skips those.
	FreshToken func(ctx context.Context, c *routing.Conn) (string, error)
	// Quotas read a login's quota buckets during its check, by dialect (a
	// provider module's executor that is a providers.QuotaReader; nil: not read).
	Quotas map[providers.Dialect]providers.QuotaReader
	Events *events.Bus
	// Metrics serves GET /metrics (Prometheus text format).
	Metrics http.Handler
	// Leases is the exclusive session lease service.
	Leases *leases.Service
	// Agents returns the IDE-agent configurator (built per call: the default key may change).
	Agents func() *agents.Manager
	// Reload rebuilds in-memory connection state after a write.
	Reload func() error
	// Walls are the executors keeping a usage wall state per connection, by
	// dialect (shown, never edited here).
	Walls map[providers.Dialect]providers.UsageWallReader
	// HomeDir is the user's home, where `import` finds the CLIs' logins.
	HomeDir func() (string, error)
	// Rules is the restatement and provider error rules engine (Rules page, preview).
	Rules *rules.Engine
	// Instances is this instance's heartbeat and the list of instances sharing
	// the database (GET /api/instances, the X-OmniRoute-Instance header).
	Instances *instances.Registry
	// AuthFailure counts a failed authentication (route "client" or
	// "management"; result "refused" or "throttled"); nil counts nothing.
	AuthFailure func(route, result string)
	// Updates is the opt-in release check (nil: none).
	Updates *update.Checker
	// Pricing prices answers (GET /api/pricing, connection overrides) and
	// Budgets holds keys to their budgets and limits; nil: neither is shown.
	Pricing *pricing.Table
	// PricingFile loads the user's pricing file (the pricingFile setting;
	// optional).
	PricingFile *pricing.FileLoader
	Budgets     *budget.Ledger
	// Capture keeps request and response bodies on demand (GET/PATCH
	// /api/capture, GET /api/logs/{requestId}/bodies); nil: no such routes.
	Capture *capture.Service
	// Restored reloads every in-memory view (connections, combos, keys,
	// budgets, pricing, settings) after POST /api/restore wrote the database.
	Restored func() error
	// CheckRestore refuses a backup's state the gateway could not run on
	// (rows, settings, budgets); nil checks the rows only (backup.Check).
	CheckRestore func(backup.State) error
	// SSO signs people in through OpenID Connect (nil: not configured).
	SSO *sso.Client
	// PasswordCost is the bcrypt cost of new password hashes (bcrypt's
	// default when 0).
	PasswordCost int
	// BackupCost is the argon2id cost backups are sealed with
	// (backup.DefaultCost when zero; tests lower it).
	BackupCost backup.Cost
	// CachePeople caches the people checks (tokens, sessions, users) of a
	// team server's instance; the change feed forgets them (ForgetPeople).
	// False (SQLite): every check reads the database.
	CachePeople bool
}

// API serves every HTTP route.
type API struct {
	Deps
	token        string
	allowedHosts []string
	paused       atomic.Bool
	edges        sync.Pool // response writer wrappers (*edgeWriter), reused after their handler
	log          *slog.Logger
	leaseView    leaseView
	auth         *auththrottle.Throttle // failed authentication per source address
	flows        deviceFlows            // provider device sign-ins in progress (login.go)
	// dummyHash is compared against when a sign-in names no user, so that
	// an unknown email takes as long as a wrong password.
	dummyHash func() []byte
	// restoring holds the one restore running (POST /api/restore).
	restoring chan struct{}
	// muxOnly routes every request through gorilla/mux, without the exact-path
	// fast path of the inference routes (tests compare the two).
	muxOnly bool
	// people caches the people checks (nil: none, Deps.CachePeople).
	people *peoplecache.Cache
}

// New builds the API.
func New(d Deps) *API {
	now := time.Now
	if d.Clock != nil {
		now = d.Clock.Now
	}
	if d.PasswordCost == 0 {
		d.PasswordCost = bcrypt.DefaultCost
	}
	if d.BackupCost == (backup.Cost{}) {
		d.BackupCost = backup.DefaultCost()
	}
	a := &API{Deps: d, token: d.Token, allowedHosts: d.AllowedHosts, log: d.Log, auth: auththrottle.New(now), restoring: make(chan struct{}, 1)}
	if d.CachePeople {
		a.people = peoplecache.New()
	}
	a.dummyHash = sync.OnceValue(func() []byte {
		h, _ := bcrypt.GenerateFromPassword([]byte("omniroute-no-such-user"), d.PasswordCost)
		return h
	})
	return a
}

// allowedMethods lists the methods some route accepts for req's path.
func allowedMethods(router *mux.Router, req *http.Request) []string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := req.Clone(req.Context())
		probe.Method = m
		var match mux.RouteMatch
		if router.Match(probe, &match) && match.MatchErr == nil {
			out = append(out, m)
		}
	}
	return out
}

// cleanPath is p with repeated slashes and dot segments resolved, keeping a
// trailing slash (what gorilla/mux would have redirected to).
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// Handler returns the root handler. The router is built on the first
// request that needs it (lazyRouter): the three hot inference routes never
// do.
func (a *API) Handler() http.Handler {
	hot := a.hotRoutes()
	lazy := &lazyRouter{build: func() http.Handler { return a.router(hot) }}
	hot.router = lazy
	if a.muxOnly {
		return a.withInstance(a.guard(lazy))
	}
	return a.withInstance(a.guard(hot))
}

// hotRoutes makes the handlers of the three hot inference routes, served
// before the router (hotRoutes.ServeHTTP) and also registered in it.
func (a *API) hotRoutes() *hotRoutes {
	return &hotRoutes{chat: a.inference(a.Gateway.ChatCompletionsFor), messages: a.inference(a.Gateway.MessagesFor),
		responses: a.inference(a.Gateway.ResponsesFor)}
}

// lazyRouter builds the router on its first request. gorilla/mux compiles a
// regexp for every route (≈ 0.7 MB of heap for the API's routes, a quarter
// of what the gateway allocates by the end of its start-up): a gateway
// that serves only the hot inference routes never pays for it, and one that
// serves the dashboard pays on the first request (a few milliseconds).
type lazyRouter struct {
	once  sync.Once
	build func() http.Handler
	h     http.Handler
}

func (l *lazyRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.once.Do(func() { l.h = l.build() })
	l.h.ServeHTTP(w, r)
}

// router builds every route; hot holds the handlers of the hot inference
// routes, registered here too (other methods and spellings of their paths,
// and muxOnly).
func (a *API) router(hot *hotRoutes) *mux.Router {
	// No path cleaning: gorilla/mux would answer a path such as //v1/models
	// or /v1/../api/keys with a bare 301 to its cleaned form (outside the
	// error envelope, and a redirected POST becomes a GET). Such a path
	// matches no route and is 404 ROUTE_NOT_FOUND, naming the clean path.
	r := mux.NewRouter().SkipClean(true)
	// gorilla/mux loses a method mismatch inside subrouters, so both handlers
	// ask the router which methods the path does accept.
	noRoute := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if allowed := allowedMethods(r, req); len(allowed) > 0 {
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			e := errs.New(errs.Invalid, "METHOD_NOT_ALLOWED",
				"method %s is not allowed on %s; use %s", req.Method, truncate(req.URL.Path, 120), strings.Join(allowed, ", "))
			if geminiShaped(req) {
				writeGeminiStatus(w, http.StatusMethodNotAllowed, e)
				return
			}
			httpx.WriteErrorStatus(w, http.StatusMethodNotAllowed, e)
			return
		}
		e := errs.New(errs.NotFound, "ROUTE_NOT_FOUND", "no route %s %s", req.Method, truncate(req.URL.Path, 120))
		if clean := cleanPath(req.URL.Path); clean != req.URL.Path {
			e.Message += " (paths are not cleaned: did you mean " + truncate(clean, 120) + "?)"
		}
		writeEdgeError(w, req, e)
	})
	r.NotFoundHandler = noRoute
	r.MethodNotAllowedHandler = noRoute

	v1 := r.PathPrefix("/v1").Subrouter()
	v1.HandleFunc("/chat/completions", hot.chat).Methods(http.MethodPost)
	v1.HandleFunc("/models", a.client(viaContext(a.Gateway.Models))).Methods(http.MethodGet)
	v1.PathPrefix("/models/").Handler(a.client(a.Gateway.ModelFor)).Methods(http.MethodGet)
	v1.HandleFunc("/messages", hot.messages).Methods(http.MethodPost)
	v1.HandleFunc("/messages/count_tokens", a.client(viaContext(a.Gateway.CountTokens))).Methods(http.MethodPost)
	v1.HandleFunc("/responses", hot.responses).Methods(http.MethodPost)
	v1.HandleFunc("/completions", a.inference(a.Gateway.CompletionsFor)).Methods(http.MethodPost)
	v1.HandleFunc("/embeddings", a.inference(a.Gateway.EmbeddingsFor)).Methods(http.MethodPost)

	// Ollama's native API, for tools that speak only Ollama (base URL
	// http://127.0.0.1:20128/ollama); the same keys, routing and failover.
	ol := r.PathPrefix("/ollama").Subrouter()
	ol.HandleFunc("/api/chat", a.inference(a.Gateway.OllamaChatFor)).Methods(http.MethodPost)
	ol.HandleFunc("/api/generate", a.inference(a.Gateway.OllamaGenerateFor)).Methods(http.MethodPost)
	ol.HandleFunc("/api/embed", a.inference(a.Gateway.OllamaEmbedFor)).Methods(http.MethodPost)
	ol.HandleFunc("/api/tags", a.client(viaContext(a.Gateway.OllamaTags))).Methods(http.MethodGet)
	ol.HandleFunc("/api/version", a.Gateway.OllamaVersion).Methods(http.MethodGet)
	ol.HandleFunc("/api/show", a.client(viaContext(a.Gateway.OllamaShow))).Methods(http.MethodPost)
	ol.HandleFunc("/api/ps", a.client(viaContext(a.Gateway.OllamaPs))).Methods(http.MethodGet)

	// Google's Gemini API, for the Gemini CLI and the @google/genai SDK
	// (GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:20128): the model and the
	// method are read from the rest of the path by the gateway.
	r.HandleFunc(gateway.GeminiPrefix, a.client(viaContext(a.Gateway.GeminiModels))).Methods(http.MethodGet)
	r.PathPrefix(gateway.GeminiPrefix+"/").Handler(a.inference(a.Gateway.GeminiFor)).Methods(http.MethodGet, http.MethodPost)
	v1.PathPrefix(strings.TrimPrefix(gateway.GeminiV1Prefix, "/v1")).Handler(a.inference(a.Gateway.GeminiFor)).Methods(http.MethodPost)

	m := r.PathPrefix("/api").Subrouter()
	m.HandleFunc("/monitoring/health", a.health).Methods(http.MethodGet)
	m.HandleFunc("/words", a.management(a.wordsRoute)).Methods(http.MethodGet)
	m.HandleFunc("/monitoring/health", a.management(a.resetBreakers)).Methods(http.MethodDelete)
	m.HandleFunc("/providers", a.management(a.listConnections)).Methods(http.MethodGet)
	m.HandleFunc("/providers", a.management(a.createConnection)).Methods(http.MethodPost)
	m.HandleFunc("/providers/catalog", a.management(a.listCatalog)).Methods(http.MethodGet)
	m.HandleFunc("/providers/import", a.management(a.listImports)).Methods(http.MethodGet)
	m.HandleFunc("/providers/import", a.management(a.importLogin)).Methods(http.MethodPost)
	m.HandleFunc("/providers/login", a.management(a.listLogins)).Methods(http.MethodGet)
	m.HandleFunc("/providers/login/{provider}", a.management(a.startLogin)).Methods(http.MethodPost)
	m.HandleFunc("/providers/login/{provider}/{fid}", a.management(a.pollLogin)).Methods(http.MethodGet)
	m.HandleFunc("/providers/{id}", a.management(a.getConnection)).Methods(http.MethodGet)
	m.HandleFunc("/providers/{id}", a.management(a.updateConnection)).Methods(http.MethodPut, http.MethodPatch)
	m.HandleFunc("/providers/{id}", a.management(a.deleteConnection)).Methods(http.MethodDelete)
	m.HandleFunc("/providers/{id}/test", a.management(a.testConnection)).Methods(http.MethodPost)
	m.HandleFunc("/providers/{id}/models/refresh", a.management(a.refreshModelsRoute)).Methods(http.MethodPost)
	m.HandleFunc("/pricing", a.management(a.listPricing)).Methods(http.MethodGet)
	m.HandleFunc("/keys", a.management(a.listKeys)).Methods(http.MethodGet)
	m.HandleFunc("/keys", a.management(a.createKey)).Methods(http.MethodPost)
	m.HandleFunc("/keys/default", a.management(a.defaultKey)).Methods(http.MethodGet)
	m.HandleFunc("/keys/{id}", a.management(a.updateKey)).Methods(http.MethodPatch, http.MethodPut)
	m.HandleFunc("/keys/{id}", a.management(a.deleteKey)).Methods(http.MethodDelete)
	m.HandleFunc("/keys/{id}/rotate", a.management(a.rotateKey)).Methods(http.MethodPost)
	m.HandleFunc("/settings", a.management(a.getSettings)).Methods(http.MethodGet)
	m.HandleFunc("/settings", a.management(a.patchSettings)).Methods(http.MethodPatch)
	m.HandleFunc("/rules", a.management(a.listRules)).Methods(http.MethodGet)
	m.HandleFunc("/rules/preview", a.management(a.previewRule)).Methods(http.MethodPost)
	m.HandleFunc("/feature-flags", a.management(a.featureFlags)).Methods(http.MethodGet)
	m.HandleFunc("/logs", a.management(a.listLogs)).Methods(http.MethodGet)
	m.HandleFunc("/logs/export", a.management(a.exportLogs)).Methods(http.MethodGet)
	if a.Capture != nil {
		m.HandleFunc("/capture", a.management(a.getCapture)).Methods(http.MethodGet)
		m.HandleFunc("/capture", a.management(a.patchCapture)).Methods(http.MethodPatch, http.MethodPut)
		m.HandleFunc("/logs/{requestId}/bodies", a.management(a.requestBodies)).Methods(http.MethodGet)
	}
	m.HandleFunc("/playground/key", a.management(a.getPlaygroundKey)).Methods(http.MethodPost)
	m.PathPrefix("/playground/").Handler(a.management(a.playground)).Methods(http.MethodPost)
	m.HandleFunc("/events", a.management(a.events)).Methods(http.MethodGet)
	m.HandleFunc("/gateway", a.management(a.gatewayState)).Methods(http.MethodGet)
	m.HandleFunc("/gateway", a.management(a.setGatewayState)).Methods(http.MethodPatch)
	a.resilienceRoutes(m)
	a.lockoutRoutes(m)
	a.comboRoutes(m)
	a.usageRoutes(m)
	a.leaseRoutes(m, a.Leases)
	a.agentRoutes(m)
	a.instanceRoutes(m)
	a.updateRoutes(m)
	a.backupRoutes(m)
	a.peopleRoutes(m)

	if a.Metrics != nil {
		r.Handle("/metrics", a.management(a.Metrics.ServeHTTP)).Methods(http.MethodGet)
	}
	a.dashboardRoutes(r)
	return r
}

// Routes lists every route under /api and /metrics as "METHOD path-template",
// the keys of the role table (RouteRole).
func (a *API) Routes() []string {
	r := a.router(a.hotRoutes())
	var out []string
	_ = r.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tmpl, err := route.GetPathTemplate()
		if err != nil || !(strings.HasPrefix(tmpl, "/api/") || tmpl == "/metrics") {
			return nil
		}
		methods, err := route.GetMethods()
		if err != nil {
			return nil
		}
		for _, m := range methods {
			out = append(out, m+" "+tmpl)
		}
		return nil
	})
	return out
}

// RouteRole is the least role a route ("METHOD path-template") needs:
// "public" for one that takes no management credential; ok is false for a
// route without a rule (it needs admin).
func RouteRole(key string) (role string, ok bool) {
	role, ok = routeRoles[key]
	return role, ok
}

// hotRoutes serves the three client inference routes on an exact method and
// path before gorilla/mux: the same handlers (pause, key and scope checks
// included) behind the same guard (Host allowlist, cross-origin rule, panic
// recovery, refusal handling) and the same body limits in the gateway,
// without the router's regexp matching and the two request copies it makes
// per request to carry its route and variables, neither of which these routes
// use. Every other request, these paths under another method or spelling
// included, goes to the router as before.
type hotRoutes struct {
	router                    http.Handler
	chat, messages, responses http.HandlerFunc
}

func (h *hotRoutes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		switch r.URL.Path {
		case "/v1/chat/completions":
			h.chat(w, r)
			return
		case "/v1/messages":
			h.messages(w, r)
			return
		case "/v1/responses":
			h.responses(w, r)
			return
		}
	}
	h.router.ServeHTTP(w, r)
}

// SetPaused pauses or resumes the client API (the tray's Pause/Resume Gateway).
func (a *API) SetPaused(p bool) {
	if a.paused.Swap(p) != p && a.Events != nil {
		a.Events.Publish("gateway", map[string]any{"paused": p})
	}
}

// Paused reports whether the client API is paused.
func (a *API) Paused() bool { return a.paused.Load() }

func (a *API) gatewayState(w http.ResponseWriter, r *http.Request) {
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"paused": a.Paused(), "version": a.Version})
}

func (a *API) setGatewayState(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Paused *bool `json:"paused"`
	}
	if err := a.decode(r, &in); err != nil {
		httpx.WriteError(w, err)
		return
	}
	if in.Paused == nil {
		httpx.WriteError(w, errs.New(errs.Invalid, "INVALID_BODY", "send {\"paused\":true|false}").WithParam("paused"))
		return
	}
	a.SetPaused(*in.Paused)
	a.gatewayState(w, r)
}
