package api

import (
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"omniroute/backend/errs"
	"omniroute/backend/gateway"
	"omniroute/backend/httpx"
	"omniroute/backend/keyring"
	"omniroute/backend/leases"
	"omniroute/backend/routing"
	"omniroute/backend/store"
)

// The lease service is what the attempt loop fences with and routing reads.
var (
	_ gateway.LeaseFence = (*leases.Service)(nil)
	_ routing.LeaseView  = (*leases.Service)(nil)
)

// leaseBodyLimit bounds a lease lifecycle request body.
const leaseBodyLimit = 64 << 10

// ownerHashPrefixLen is how much of an owner hash the dashboard sees.
const ownerHashPrefixLen = 12

// leaseHandlers serves the lease routes over one lease service.
type leaseHandlers struct {
	a   *API
	svc *leases.Service
}

// leaseRoutes mounts every lease route on the /api subrouter m: the client
// lifecycle route POST /api/v1/session-leases and the management routes
// GET /api/resilience/leases and DELETE /api/resilience/leases/{id}.
func (a *API) leaseRoutes(m *mux.Router, svc *leases.Service) {
	a.leaseClientRoutes(m, svc)
	h := leaseHandlers{a: a, svc: svc}
	m.HandleFunc("/resilience/leases", a.management(h.list)).Methods(http.MethodGet)
	m.HandleFunc("/resilience/leases/{id}", a.management(h.operatorRelease)).Methods(http.MethodDelete)
}

// leaseClientRoutes mounts the client lifecycle route POST <r>/v1/session-leases
// (on the /api subrouter: /api/v1/session-leases). It authenticates the client
// key itself, so that failures carry the LEASE_… codes.
func (a *API) leaseClientRoutes(r *mux.Router, svc *leases.Service) {
	h := leaseHandlers{a: a, svc: svc}
	r.HandleFunc("/v1/session-leases", h.lifecycle).Methods(http.MethodPost)
}

// parseLeaseRequest strictly decodes a lifecycle body and validates it
// (leases.ParseRequest).
func parseLeaseRequest(body []byte) (leases.Request, error) {
	var in leases.Input
	if err := httpx.DecodeJSON(body, &in); err != nil {
		return leases.Request{}, leases.ErrActionInvalid.WithMessage("invalid lease lifecycle action: %s", errs.As(err).Message)
	}
	return leases.ParseRequest(in)
}

// isJSONContentType accepts application/json with optional parameters.
func isJSONContentType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// lifecycle serves POST /api/v1/session-leases: acquire, renew, status, release.
// The owner token is read from X-OmniRoute-Lease-Owner and never logged or echoed.
func (h leaseHandlers) lifecycle(w http.ResponseWriter, r *http.Request) {
	a := h.a
	if a.paused.Load() {
		httpx.WriteError(w, errs.New(errs.Unavailable, "GATEWAY_PAUSED", "the gateway is paused; resume it from the tray or the dashboard"))
		return
	}
	value := clientKey(r)
	if value == "" {
		httpx.WriteError(w, leases.ErrAuthenticationRequired)
		return
	}
	if e := a.authPrecheck(r, authRouteClient); e != nil {
		httpx.WriteError(w, e)
		return
	}
	info, ok := a.Keys.Lookup(value)
	if !ok {
		if e := a.authFailure(r, authRouteClient, nil); e != nil {
			httpx.WriteError(w, e)
			return
		}
		httpx.WriteError(w, leases.ErrAPIKeyInvalid)
		return
	}
	if e := info.Refusal(a.Clock.Now().UnixMilli()); e != nil {
		httpx.WriteError(w, e)
		return
	}
	if a.KeysFresh != nil {
		if err := a.KeysFresh(); err != nil {
			httpx.WriteError(w, err)
			return
		}
	}
	if !isJSONContentType(r.Header.Get("Content-Type")) {
		httpx.WriteError(w, leases.ErrContentTypeRequired)
		return
	}
	body, release, err := httpx.ReadBodyLimited(w, r, httpx.BodyLimits{Max: leaseBodyLimit,
		Timeout: time.Duration(a.Settings.General().BodyReadTimeoutMs) * time.Millisecond})
	release()
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	in, err := parseLeaseRequest(body)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	owner := r.Header.Get(leases.HeaderOwner)
	if err := leases.Admit(info.Scopes, info.Access.AllowedConnections, owner); err != nil {
		httpx.WriteError(w, err)
		return
	}
	switch in.Action {
	case leases.ActionAcquire:
		var eligible []string
		var err error
		if in.Model == "" {
			eligible, err = h.eligibleWithoutModel(*info)
		} else {
			eligible, err = h.eligible(*info, in.Model)
		}
		if err != nil {
			httpx.WriteError(w, err)
			return
		}
		l, err := h.svc.Acquire(info.ID, owner, in.Model, eligible, in.TTL)
		if err != nil {
			h.fail(w, err)
			return
		}
		h.publish("acquired", l)
		httpx.WriteJSON(w, http.StatusOK, leaseStateJSON(l))
	case leases.ActionRenew:
		l, err := h.svc.Renew(info.ID, owner, in.Generation, in.TTL)
		if err != nil {
			h.fail(w, err)
			return
		}
		httpx.WriteJSON(w, http.StatusOK, leaseStateJSON(l))
	case leases.ActionStatus:
		l, err := h.svc.Current(info.ID, owner, in.Generation)
		if err != nil {
			h.fail(w, err)
			return
		}
		out := leaseStateJSON(l)
		name, provider := h.connection(l.ConnectionID)
		out["connection"] = map[string]any{"displayName": name, "provider": provider}
		httpx.WriteJSON(w, http.StatusOK, out)
	case leases.ActionRelease:
		l, err := h.svc.Release(info.ID, owner, in.Generation, in.Reason)
		if errors.Is(err, leases.ErrReleaseQueued) {
			// The database did not answer: applied when it does.
			httpx.WriteJSON(w, http.StatusAccepted, map[string]any{"state": "RELEASE_QUEUED", "generation": l.Generation})
			return
		}
		if err != nil {
			h.fail(w, err)
			return
		}
		h.publish("released", l)
		httpx.WriteJSON(w, http.StatusOK, map[string]any{"state": store.LeaseReleased, "generation": l.Generation})
	}
}

// eligible lists the key's allowed connections that serve the model and
// are not excluded right now, in routing order (leases.Eligible). An unknown
// or disallowed model is LEASE_MODEL_INVALID.
func (h leaseHandlers) eligible(info keyring.Info, model string) ([]string, error) {
	cands, err := h.a.Engine.Registry().Resolve(model, routing.Access{AllowedModels: info.Access.AllowedModels})
	if err != nil {
		return nil, leases.ErrModelInvalid.WithMessage("%s", errs.As(err).Message)
	}
	return leases.Eligible(info.Access.AllowedConnections, cands,
		func(c routing.Candidate) string { return c.Conn.ID },
		func(c routing.Candidate) bool { return h.a.Engine.Check(c) != nil }), nil
}

// eligibleWithoutModel is eligible for an acquire without a model
// (leases.EligibleWithoutModel): the key's one connection when it exists, is
// active and is not excluded right now.
func (h leaseHandlers) eligibleWithoutModel(info keyring.Info) ([]string, error) {
	return leases.EligibleWithoutModel(info.Access.AllowedConnections, func(id string) bool {
		c, ok := h.a.Engine.Registry().Get(id)
		return ok && c.Active && h.a.Engine.Check(routing.Candidate{Conn: c}) == nil
	})
}

// fail writes a lease error as is; anything else is a store failure, logged
// (never with the owner token) and sent as 503 LEASE_SERVICE_UNAVAILABLE.
func (h leaseHandlers) fail(w http.ResponseWriter, err error) {
	var le *leases.Error
	var ce *leases.CapacityError
	if !errors.As(err, &le) && !errors.As(err, &ce) {
		if h.a.log != nil {
			h.a.log.Warn("lease operation failed", slog.String("error", err.Error()))
		}
		err = leases.ErrServiceUnavailable
	}
	httpx.WriteError(w, err)
}

// connection names a connection for display: its name and provider id.
func (h leaseHandlers) connection(id string) (name, provider string) {
	if c, ok := h.a.Engine.Registry().Get(id); ok {
		return c.Name, c.Provider.ID
	}
	return "", ""
}

// publish tells the dashboard a lease changed (no owner data).
func (h leaseHandlers) publish(action string, l store.Lease) {
	if h.a.Events == nil {
		return
	}
	h.a.Events.Publish("lease", map[string]any{"action": action, "id": l.ID, "connectionId": l.ConnectionID,
		"generation": l.Generation, "active": h.svc.CountActive()})
}

// leaseStateJSON is the lifecycle response: state, generation, connectionId and times.
func leaseStateJSON(l store.Lease) map[string]any {
	return map[string]any{"state": l.State, "generation": l.Generation, "connectionId": l.ConnectionID,
		"acquiredAt": rfc3339(l.AcquiredAt), "renewedAt": rfc3339(l.RenewedAt), "expiresAt": rfc3339(l.ExpiresAt)}
}

// list serves GET /api/resilience/leases: the active leases for the dashboard,
// with only a prefix of each owner hash (never the token or the full hash).
func (h leaseHandlers) list(w http.ResponseWriter, r *http.Request) {
	rows, err := h.svc.Active()
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	keyNames := map[string]string{}
	if keys, err := h.a.Store.APIKeys(); err == nil {
		for _, k := range keys {
			keyNames[k.ID] = k.Name
		}
	}
	now := h.a.Clock.Now()
	items := make([]map[string]any, 0, len(rows))
	for _, l := range rows {
		name, provider := h.connection(l.ConnectionID)
		items = append(items, map[string]any{
			"id": l.ID, "ownerHashPrefix": truncate(l.OwnerHash, ownerHashPrefixLen), "keyId": l.APIKeyID,
			"keyName": keyNames[l.APIKeyID], "connectionId": l.ConnectionID, "connectionName": name, "provider": provider,
			"model": l.Model, "generation": l.Generation, "state": l.State, "acquiredAt": rfc3339(l.AcquiredAt),
			"renewedAt": rfc3339(l.RenewedAt), "expiresAt": rfc3339(l.ExpiresAt),
			"remainingMs": max(0, l.ExpiresAt-now.UnixMilli()),
		})
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"leases": items, "generatedAt": now.UTC().Format(time.RFC3339Nano)})
}

// operatorRelease serves DELETE /api/resilience/leases/{id}: the operator ends
// a lease (reason OPERATOR_RELEASE); an unknown or ended lease is 404.
func (h leaseHandlers) operatorRelease(w http.ResponseWriter, r *http.Request) {
	l, err := h.svc.ReleaseByID(mux.Vars(r)["id"], leases.ReasonOperator)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	h.publish("operator_released", l)
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"ok": true})
}
