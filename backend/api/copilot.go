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

// GitHub Copilot device login through the management API: POST
// /api/providers/login/copilot starts one (the user code and verification
// URL to show), GET /api/providers/login/copilot/{flowId} polls it until the
// user approved on GitHub, then creates (or updates) the github-copilot
// connection. The device code never leaves the gateway.

// maxDeviceFlows bounds the device logins pending at once.
const maxDeviceFlows = 8

// deviceLoginTimeout bounds one poll's calls to GitHub (token, exchange, user, discovery).
const deviceLoginTimeout = 30 * time.Second

// deviceFlows are the device logins in progress, by flow id.
type deviceFlows struct {
	mu sync.Mutex
	m  map[string]*deviceFlow
}

// deviceFlow is one device login: its device code (a secret), when GitHub
// may be asked next, and once settled, its outcome (kept until the code's
// expiry so repeated polls read the same answer).
type deviceFlow struct {
	dev      oauth.Device
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

func (a *API) copilotProvider() (providers.Provider, error) {
	p, ok := a.Catalog.Lookup("github-copilot")
	if !ok || p.OAuth == nil || !p.OAuth.Copilot {
		return providers.Provider{}, errs.New(errs.NotFound, "UNKNOWN_PROVIDER", "GitHub Copilot is not in the catalogue")
	}
	return p, nil
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

// startCopilotLogin is POST /api/providers/login/copilot.
func (a *API) startCopilotLogin(w http.ResponseWriter, r *http.Request) {
	p, err := a.copilotProvider()
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
	dev, err := oauth.StartDevice(ctx, a.HTTPClient, *p.OAuth, now)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	id := secrets.RandomID()
	a.flows.mu.Lock()
	if a.flows.m == nil {
		a.flows.m = map[string]*deviceFlow{}
	}
	a.flows.m[id] = &deviceFlow{dev: dev, interval: dev.Interval, next: now.Add(dev.Interval), status: flowPending}
	a.flows.mu.Unlock()
	httpx.WriteJSON(w, http.StatusCreated, map[string]any{"flowId": id, "userCode": dev.UserCode, "verificationUri": dev.VerificationURI,
		"expiresAt": dev.ExpiresAt.UTC().Format(time.RFC3339), "interval": int(dev.Interval / time.Second)})
}

// pollCopilotLogin is GET /api/providers/login/copilot/{flowId}: at most one
// call to GitHub per polling interval (a faster poller reads "pending"), the
// connection created when GitHub hands over the token.
func (a *API) pollCopilotLogin(w http.ResponseWriter, r *http.Request) {
	p, err := a.copilotProvider()
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	id := mux.Vars(r)["flowId"]
	now := a.Clock.Now()
	a.flows.mu.Lock()
	a.flows.prune(now)
	fl, ok := a.flows.m[id]
	if !ok {
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

	// Not tied to this request: GitHub hands a device login's token over
	// once, so a poller going away must not lose it half way.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), deviceLoginTimeout)
	defer cancel()
	status, result, perr := flowPending, map[string]any(nil), (*errs.Error)(nil)
	tok, err := oauth.PollDevice(ctx, a.HTTPClient, *p.OAuth, deviceCode)
	var de *oauth.DeviceError
	switch {
	case errors.As(err, &de):
		interval = oauth.NextInterval(interval, de)
		switch de.Code {
		case oauth.DevicePending, oauth.DeviceSlowDown:
		case oauth.DeviceExpired:
			status, perr = flowExpired, errs.New(errs.Invalid, "DEVICE_CODE_EXPIRED", "the code expired before it was entered; start the login again")
		case oauth.DeviceDenied:
			status, perr = flowDenied, errs.New(errs.Permission, "DEVICE_LOGIN_DENIED", "the login was cancelled on GitHub")
		default:
			status, perr = flowFailed, errs.New(errs.Upstream, "DEVICE_LOGIN_FAILED", "GitHub ended the device login: %s", de.Code)
		}
	case err != nil:
		// GitHub unreachable, or this request went away: try again at the next poll.
	default:
		result, perr = a.finishCopilotLogin(ctx, p, tok)
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

// finishCopilotLogin turns an approved device login into the connection:
// the first Copilot token exchange (which proves the seat), the connection
// stored and loaded, its models discovered.
func (a *API) finishCopilotLogin(ctx context.Context, p providers.Provider, githubToken string) (map[string]any, *errs.Error) {
	login, err := oauth.CopilotLogin(ctx, a.HTTPClient, *p.OAuth, githubToken, a.Clock.Now())
	if err != nil {
		return nil, errs.As(err)
	}
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
		a.Events.Publish("subscription", map[string]any{"id": row.ID, "login": oauth.SourceCopilot, "created": res.Created})
	}
	return map[string]any{"connection": a.connectionJSON(row), "created": res.Created}, nil
}
