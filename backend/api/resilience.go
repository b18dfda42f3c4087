package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"omniroute/backend/connprobe"
	"omniroute/backend/errs"
	"omniroute/backend/health"
	"omniroute/backend/httpx"
	"omniroute/backend/resilience/cooldown"
	"omniroute/backend/routing"
)

// resilienceRoutes mounts the resilience management routes.
func (a *API) resilienceRoutes(m *mux.Router) {
	m.HandleFunc("/resilience", a.management(a.getResilience)).Methods(http.MethodGet)
	m.HandleFunc("/resilience", a.management(a.patchResilience)).Methods(http.MethodPatch)
	m.HandleFunc("/resilience/reset", a.management(a.resetBreakers)).Methods(http.MethodPost)
	m.HandleFunc("/resilience/cooldowns", a.management(a.listCooldowns)).Methods(http.MethodGet)
	m.HandleFunc("/resilience/cooldowns", a.management(a.clearCooldowns)).Methods(http.MethodPost)
	m.HandleFunc("/rate-limits", a.management(a.listRateLimits)).Methods(http.MethodGet)
	m.HandleFunc("/rate-limits", a.management(a.setRateLimit)).Methods(http.MethodPost)
}

func (a *API) getResilience(w http.ResponseWriter, r *http.Request) {
	httpx.WriteJSON(w, http.StatusOK, a.Settings.Resilience())
}

func (a *API) patchResilience(w http.ResponseWriter, r *http.Request) {
	body, err := httpx.ReadBody(r, managementBodyLimit)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	res, err := a.Settings.PatchResilience(body)
	if err != nil {
		httpx.WriteError(w, settingsError(err))
		return
	}
	httpx.WriteJSON(w, http.StatusOK, res)
}

// connectionStatus names why a connection is in or out of routing.
func connectionStatus(st cooldown.State, now time.Time) (string, time.Duration) {
	ok, reason, remaining := cooldown.Eligible(st, now)
	switch {
	case ok:
		return "healthy", 0
	case reason == cooldown.ReasonCooldown:
		return "cooling_down", remaining
	default:
		return "terminal", 0
	}
}

func (a *API) listCooldowns(w http.ResponseWriter, r *http.Request) {
	provider := strings.ToLower(r.URL.Query().Get("provider"))
	now := a.Clock.Now()
	locks := a.lockoutsByConnection(now)
	model := map[string]health.ConnHealth{}
	for _, ch := range health.Compute(a.HealthInput()).Connections {
		model[ch.ID] = ch
	}
	out := []map[string]any{}
	for _, c := range a.Engine.Registry().All() {
		if provider != "" && c.Provider.ID != provider && c.BreakerKey != provider {
			continue
		}
		st := c.Cooldown()
		status, remaining := connectionStatus(st, now)
		lk := locks[c.ID]
		if lk == nil {
			lk = []map[string]any{}
		} else if status == "healthy" {
			status = "model_locked"
		}
		if status == "healthy" && !c.Active {
			status = "unavailable"
		}
		ch := model[c.ID]
		switch {
		case ch.State == health.BreakerOpen && (status == "healthy" || status == "model_locked"):
			// The health model's word: an OPEN provider breaker takes it out of routing.
			status = "breaker_open"
			remaining = ch.Until.Sub(now)
		case ch.State == health.Leased && !ch.Serving && (status == "healthy" || status == "model_locked"):
			// Held by a key's exclusive lease: not serving for anyone else.
			status = "leased"
			remaining = ch.Until.Sub(now)
		case ch.State == health.KeyRejected:
			status = "key_rejected"
		case ch.State == health.EndpointNotFound:
			status = "endpoint_not_found"
		case ch.State == health.Unreachable:
			// Not healthy once a cooldown ran out: nothing has answered.
			status, remaining = "unreachable", 0
		}
		f := routing.CooldownFields(st)
		f.TestStatus = connprobe.TestStatus(f.TestStatus, c.Reach())
		item := map[string]any{"id": c.ID, "provider": c.Provider.ID, "name": c.Name, "authType": c.AuthType,
			"status": status, "testStatus": f.TestStatus, "rateLimitedUntil": rfc3339(f.RateLimitedUntil),
			"cooldownRemainingMs": remaining.Milliseconds(), "backoffLevel": st.BackoffLevel, "errorCode": st.ErrorCode,
			"lastErrorType": st.LastErrorType, "lastError": st.LastError, "lastErrorAt": rfc3339(f.LastErrorAt), "lockouts": lk, "health": ch}
		if ip := a.Engine.Egress(c.ID); ip != "" {
			item["egressIp"] = ip // last known, for the egress-bucket lock
		}
		out = append(out, item)
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"connections": out, "generatedAt": now.UTC().Format(time.RFC3339Nano)})
}

type clearInput struct {
	ConnectionIDs []string `json:"connectionIds"`
	All           bool     `json:"all"`
	Provider      string   `json:"provider"`
}

// clearCooldowns clears transient cooldowns by ids, by provider or all; terminal
// states are reported as skipped and never cleared here.
func (a *API) clearCooldowns(w http.ResponseWriter, r *http.Request) {
	var in clearInput
	if err := a.decode(r, &in); err != nil {
		httpx.WriteError(w, err)
		return
	}
	if !in.All && len(in.ConnectionIDs) == 0 {
		httpx.WriteError(w, errs.New(errs.Invalid, "SELECTION_REQUIRED", "send {\"connectionIds\":[...]} or {\"all\":true}"))
		return
	}
	var targets []*routing.Conn
	if in.All {
		for _, c := range a.Engine.Registry().All() {
			if in.Provider == "" || strings.EqualFold(c.Provider.ID, in.Provider) || c.BreakerKey == in.Provider {
				targets = append(targets, c)
			}
		}
	} else {
		for _, id := range in.ConnectionIDs {
			c, ok := a.Engine.Registry().Get(id)
			if !ok {
				httpx.WriteError(w, errs.New(errs.NotFound, "CONNECTION_NOT_FOUND", "connection %q not found", truncate(id, 40)).WithParam("connectionIds"))
				return
			}
			targets = append(targets, c)
		}
	}
	cleared, unchanged, skipped, err := a.clearConns(targets)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	lockoutsCleared, windows := 0, 0
	seen := map[string]bool{}
	for _, c := range targets {
		lockoutsCleared += a.Engine.ClearConnectionLocks(c.ID)
		if !seen[c.BreakerKey] { // the provider window gate that keeps these connections out
			seen[c.BreakerKey] = true
			windows += a.Engine.ResetProviderCooldowns(c.BreakerKey)
		}
	}
	if lockoutsCleared > 0 && a.Events != nil {
		a.Events.Publish("lockout", map[string]any{"action": "cleared", "removed": lockoutsCleared})
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "cleared": cleared, "unchanged": unchanged,
		"skippedTerminal": len(skipped), "skippedTerminalIds": skipped, "lockoutsCleared": lockoutsCleared,
		"providerCooldownsCleared": windows})
}

// clearConns clears the transient cooldown of each target; terminal states are
// skipped and reported, never cleared.
func (a *API) clearConns(targets []*routing.Conn) (cleared, unchanged int, skipped []string, err error) {
	skipped = []string{}
	for _, c := range targets {
		st := c.Cooldown()
		if cooldown.TerminalOf(st) != "" {
			skipped = append(skipped, c.ID)
			continue
		}
		next, changed := cooldown.Clear(st)
		if !changed {
			unchanged++
			continue
		}
		if err := a.Engine.SetCooldown(c, next); err != nil {
			return cleared, unchanged, skipped, err
		}
		cleared++
	}
	return cleared, unchanged, skipped, nil
}

// ClearAllCooldowns clears every connection's transient cooldown (the tray's action).
func (a *API) ClearAllCooldowns() (int, error) {
	n, _, _, err := a.clearConns(a.Engine.Registry().All())
	a.Engine.ResetProviderCooldowns("")
	return n, err
}

// listRateLimits is GET /api/rate-limits: per connection, whether its request
// queue is on (explicitly or by the API-key safety net), its caps, and the
// live gate and queue counters.
func (a *API) listRateLimits(w http.ResponseWriter, r *http.Request) {
	rows, err := a.Store.Connections()
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	auto := a.Settings.Resilience().RequestQueue.AutoEnableAPIKeyProviders
	out := []map[string]any{}
	for _, row := range rows {
		item := map[string]any{"connectionId": row.ID, "provider": row.Provider, "name": row.Name,
			"enabled": row.RateLimitProtection != nil && *row.RateLimitProtection}
		for k, v := range a.liveLimits(row.ID, auto) {
			item[k] = v
		}
		out = append(out, item)
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"connections": out, "autoEnableApiKeyProviders": auto})
}

// liveLimits is a connection's effective protection, caps and live counters.
func (a *API) liveLimits(id string, auto bool) map[string]any {
	c, ok := a.Engine.Registry().Get(id)
	if !ok {
		return map[string]any{"effective": false, "inFlight": 0, "waiting": 0, "queued": 0, "maxConcurrent": 0, "modelConcurrency": map[string]int{}}
	}
	st := a.Gateway.Admission(c)
	mc := c.Limits.ModelConcurrency
	if mc == nil {
		mc = map[string]int{}
	}
	out := map[string]any{"effective": c.Protected(auto), "inFlight": st.InFlight, "waiting": st.Waiting, "queued": st.Queued,
		"maxConcurrent": c.Limits.MaxConcurrent, "modelConcurrency": mc, "pausedUntil": nil}
	if st.PausedUntil.After(a.Clock.Now()) {
		out["pausedUntil"] = st.PausedUntil.UTC().Format(time.RFC3339Nano)
	}
	return out
}

// setRateLimit is POST /api/rate-limits {connectionId, enabled}: the one write
// path of a connection's explicit rateLimitProtection (PUT /api/providers/{id}
// never changes it).
func (a *API) setRateLimit(w http.ResponseWriter, r *http.Request) {
	var in struct {
		ConnectionID *string `json:"connectionId"`
		Enabled      *bool   `json:"enabled"`
	}
	if err := a.decode(r, &in); err != nil {
		httpx.WriteError(w, err)
		return
	}
	if in.ConnectionID == nil || strings.TrimSpace(*in.ConnectionID) == "" || in.Enabled == nil {
		httpx.WriteError(w, errs.New(errs.Invalid, "INVALID_BODY", "send {\"connectionId\":\"…\",\"enabled\":true|false}"))
		return
	}
	if err := a.Store.SetRateLimitProtection(*in.ConnectionID, *in.Enabled); err != nil {
		httpx.WriteError(w, notFound(err, "connection"))
		return
	}
	if err := a.Reload(); err != nil {
		httpx.WriteError(w, err)
		return
	}
	auto := a.Settings.Resilience().RequestQueue.AutoEnableAPIKeyProviders
	out := map[string]any{"ok": true, "connectionId": *in.ConnectionID, "enabled": *in.Enabled}
	for k, v := range a.liveLimits(*in.ConnectionID, auto) {
		out[k] = v
	}
	if a.Events != nil {
		a.Events.Publish("rate-limits", map[string]any{"connectionId": *in.ConnectionID, "enabled": *in.Enabled, "effective": out["effective"]})
	}
	httpx.WriteJSON(w, http.StatusOK, out)
}
