package api

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"omniroute/backend/errs"
	"omniroute/backend/httpx"
	"omniroute/backend/oauth"
	"omniroute/backend/providers"
	"omniroute/backend/secrets"
)

// A provider's device sign-in (providers.LoginFlow) through the management
// API: GET /api/providers/login lists the providers that have one, POST
// /api/providers/login/{provider} starts one (the user code and
// verification URL to show), GET /api/providers/login/{provider}/{fid}
// polls it until the user approved on the provider's site, then creates (or
// updates) the provider's connection. The device code never leaves the
// gateway. {provider} is a catalogue id or alias.

// maxDeviceFlows bounds the device logins pending at once.
const maxDeviceFlows = 8

// deviceLoginTimeout bounds one poll's calls to the provider (token, exchange, user, discovery).
const deviceLoginTimeout = 30 * time.Second

// deviceFlows are the device logins in progress, by flow id.
type deviceFlows struct {
	mu sync.Mutex
	m  map[string]*deviceFlow
}

// deviceFlow is one device login: its provider, its device code (a secret),
// when the provider may be asked next, and once settled, its outcome (kept until the code's
// expiry so repeated polls read the same answer).
type deviceFlow struct {
	provider string
	dev      providers.Device
	interval time.Duration
	next     time.Time
	polling  bool
	status   string // pending, complete, expired, denied, failed
	err      *errs.Error
	result   map[string]any
}

// Device login states as polls report them.
const (
	flowPending  = "pending"
	flowComplete = "complete"
	flowExpired  = "expired"
	flowDenied   = "denied"
	flowFailed   = "failed"
)

// loginProvider is the catalogue row {provider} names, with its sign-in flow.
func (a *API) loginProvider(r *http.Request) (providers.Provider, *providers.LoginFlow, error) {
	name := mux.Vars(r)["provider"]
	p, ok := a.Catalog.Lookup(name)
	if !ok || p.LoginFlow() == nil || p.OAuth == nil {
		return providers.Provider{}, nil, errs.New(errs.NotFound, "UNKNOWN_PROVIDER", "%q is not a provider with a sign-in flow in the catalogue", truncate(name, 40)).WithParam("provider")
	}
	return p, p.LoginFlow(), nil
}

// loginCall is what the provider's login hooks are called with.
func (a *API) loginCall(p providers.Provider) providers.LoginCall {
	return providers.LoginCall{OAuth: *p.OAuth, Client: a.HTTPClient, Now: a.Clock.Now()}
}

// listLogins is GET /api/providers/login: the providers with a sign-in
// flow and what the dashboard's login panel shows of each.
func (a *API) listLogins(w http.ResponseWriter, r *http.Request) {
	out := []map[string]any{}
	for _, p := range a.Catalog.LoginProviders() {
		l := p.LoginFlow()
		out = append(out, map[string]any{"id": p.ID, "name": p.Name, "kind": "device", "command": l.Command, "site": l.Site, "hint": l.Hint})
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"providers": out})
}

// maxSettledFlows bounds the settled logins kept for their pollers.
const maxSettledFlows = 64

// prune drops the flows whose device code expired (a settled flow is kept
// as long, so its poller reads the outcome, unless more than
// maxSettledFlows are) and returns how many are still pending. Called with
// mu held.
func (f *deviceFlows) prune(now time.Time) int {
	pending, settled := 0, 0
	for id, fl := range f.m {
		switch {
		case !now.Before(fl.dev.ExpiresAt):
			delete(f.m, id)
		case fl.status == flowPending:
			pending++
		default:
			settled++
		}
	}
	if settled > maxSettledFlows {
		for id, fl := range f.m {
			if fl.status != flowPending {
				delete(f.m, id)
			}
		}
	}
	return pending
}

// startLogin is POST /api/providers/login/{provider}.
func (a *API) startLogin(w http.ResponseWriter, r *http.Request) {
	p, flow, err := a.loginProvider(r)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	now := a.Clock.Now()
	a.flows.mu.Lock()
	busy := a.flows.prune(now) >= maxDeviceFlows
	a.flows.mu.Unlock()
	if busy {
		httpx.WriteError(w, errs.New(errs.RateLimited, "TOO_MANY_LOGINS", "%d device logins are already in progress; finish or let one expire", maxDeviceFlows).
			WithRetryAfter(time.Minute))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), deviceLoginTimeout)
	defer cancel()
	x := a.loginCall(p)
	x.Now = now
	dev, err := flow.Start(ctx, x)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	if !providers.SafeVerificationURI(dev.VerificationURI) {
		// It becomes a link in the dashboard: a javascript: or data: URL
		// would run in the gateway's origin.
		httpx.WriteError(w, errs.New(errs.Upstream, "DEVICE_CODE_FAILED", "%s named a verification page that is not an https URL", flow.Site))
		return
	}
	id := secrets.RandomID()
	a.flows.mu.Lock()
	if a.flows.m == nil {
		a.flows.m = map[string]*deviceFlow{}
	}
	a.flows.m[id] = &deviceFlow{provider: p.ID, dev: dev, interval: dev.Interval, next: now.Add(dev.Interval), status: flowPending}
	a.flows.mu.Unlock()
	httpx.WriteJSON(w, http.StatusCreated, map[string]any{"flowId": id, "userCode": dev.UserCode, "verificationUri": dev.VerificationURI,
		"expiresAt": dev.ExpiresAt.UTC().Format(time.RFC3339), "interval": int(dev.Interval / time.Second)})
}

// pollLogin is GET /api/providers/login/{provider}/{fid}: at most one
// call to the provider per polling interval (a faster poller reads
// "pending"), the connection created when the provider hands over the grant.
func (a *API) pollLogin(w http.ResponseWriter, r *http.Request) {
	p, flow, err := a.loginProvider(r)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	id := mux.Vars(r)["fid"]
	now := a.Clock.Now()
	a.flows.mu.Lock()
	a.flows.prune(now)
	fl, ok := a.flows.m[id]
	if !ok || fl.provider != p.ID {
		a.flows.mu.Unlock()
		httpx.WriteError(w, errs.New(errs.NotFound, "LOGIN_NOT_FOUND", "no device login %q in progress (it expired or was never started)", truncate(id, 40)))
		return
	}
	if fl.status != flowPending || fl.polling || now.Before(fl.next) {
		out := fl.answer()
		a.flows.mu.Unlock()
		httpx.WriteJSON(w, http.StatusOK, out)
		return
	}
	fl.polling = true
	deviceCode, interval := fl.dev.DeviceCode, fl.interval
	a.flows.mu.Unlock()

	// Not tied to this request: a provider hands a device login's grant
	// over once, so a poller going away must not lose it half way.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), deviceLoginTimeout)
	defer cancel()
	status, result, perr := flowPending, map[string]any(nil), (*errs.Error)(nil)
	grant, err := flow.Poll(ctx, a.loginCall(p), deviceCode)
	var de *providers.DeviceError
	switch {
	case errors.As(err, &de):
		interval = providers.NextInterval(interval, de)
		switch de.Code {
		case providers.DevicePending, providers.DeviceSlowDown:
		case providers.DeviceExpired:
			status, perr = flowExpired, errs.New(errs.Invalid, "DEVICE_CODE_EXPIRED", "the code expired before it was entered; start the login again")
		case providers.DeviceDenied:
			status, perr = flowDenied, errs.New(errs.Permission, "DEVICE_LOGIN_DENIED", "the login was cancelled on %s", flow.Site)
		default:
			status, perr = flowFailed, errs.New(errs.Upstream, "DEVICE_LOGIN_FAILED", "%s ended the device login: %s", flow.Site, de.Code)
		}
	case err != nil:
		// The provider unreachable, or this request went away: try again at the next poll.
	default:
		result, perr = a.finishLogin(ctx, p, flow, grant)
		status = flowComplete
		if perr != nil {
			status = flowFailed
		}
	}
	a.flows.mu.Lock()
	fl.polling, fl.interval, fl.next = false, interval, a.Clock.Now().Add(interval)
	fl.status, fl.err, fl.result = status, perr, result
	out := fl.answer()
	a.flows.mu.Unlock()
	httpx.WriteJSON(w, http.StatusOK, out)
}

// answer is what a poll says of the flow. Called with mu held.
func (fl *deviceFlow) answer() map[string]any {
	out := map[string]any{"status": fl.status}
	switch {
	case fl.status == flowPending:
		out["userCode"], out["verificationUri"] = fl.dev.UserCode, fl.dev.VerificationURI
		out["expiresAt"], out["interval"] = fl.dev.ExpiresAt.UTC().Format(time.RFC3339), int(fl.interval/time.Second)
	case fl.err != nil:
		out["error"] = map[string]any{"code": fl.err.Code, "message": fl.err.Message}
	}
	for k, v := range fl.result {
		out[k] = v
	}
	return out
}

// finishLogin turns an approved device login into the connection: the
// module's Finish (e.g. a first token exchange), the connection stored and
// loaded, its models discovered.
func (a *API) finishLogin(ctx context.Context, p providers.Provider, flow *providers.LoginFlow, grant string) (map[string]any, *errs.Error) {
	tokens, err := flow.Finish(ctx, a.loginCall(p), grant)
	if err != nil {
		return nil, errs.As(err)
	}
	login := oauth.SignedIn(p, tokens)
	res, err := oauth.Upsert(a.Store, a.Box, a.Catalog, login, a.Clock.Now())
	if err != nil {
		return nil, errs.As(err)
	}
	if err := a.Reload(); err != nil {
		return nil, errs.As(err)
	}
	row := res.Connection
	if updated, _, err := a.refreshModels(ctx, row.ID); err == nil {
		row = updated
	}
	if a.Events != nil {
		a.Events.Publish("subscription", map[string]any{"id": row.ID, "login": login.Source, "created": res.Created})
	}
	return map[string]any{"connection": a.connectionJSON(row), "created": res.Created}, nil
}
