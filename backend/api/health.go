package api

import (
	"net/http"
	"runtime"
	"time"

	"omniroute/backend/errs"
	"omniroute/backend/httpx"
	"omniroute/backend/resilience/cooldown"
)

// Health is the overall status the dashboard and the tray show.
type Health struct {
	Status          string
	CircuitBreakers map[string]int
	ProviderHealth  map[string]any
	CoolingDown     int
	Terminal        int
	Total           int
	SoonestRetryMs  int64
	ActiveAvailable int
	Lockouts        int
	Leases          int
}

// ComputeHealth derives healthy / degraded / unhealthy from live state:
// unhealthy when a breaker is open or no active connection can serve,
// degraded when something is cooling or a breaker is degraded or probing.
func (a *API) ComputeHealth() Health {
	now := a.Clock.Now()
	h := Health{ProviderHealth: map[string]any{}}
	open, half, degraded, closed, total := a.Engine.Breakers().Counts()
	h.CircuitBreakers = map[string]int{"open": open, "halfOpen": half, "degraded": degraded, "closed": closed, "total": total}
	for _, s := range a.Engine.Breakers().Snapshots() {
		var last any
		if !s.LastFailureAt.IsZero() {
			last = s.LastFailureAt.UTC().Format(time.RFC3339)
		}
		h.ProviderHealth[s.Provider] = map[string]any{"state": s.State, "failures": s.Failures,
			"lastFailure": last, "retryAfterMs": s.RetryAfter.Milliseconds()}
	}
	h.Lockouts = len(a.Engine.ModelLocks())
	if a.Leases != nil {
		h.Leases = a.Leases.CountActive()
	}
	active := 0
	for _, c := range a.Engine.Registry().All() {
		h.Total++
		ok, reason, remaining := cooldown.Eligible(c.Cooldown(), now)
		switch {
		case ok:
			if c.Active {
				h.ActiveAvailable++
			}
		case reason == "connection_cooldown":
			h.CoolingDown++
			if h.SoonestRetryMs == 0 || remaining.Milliseconds() < h.SoonestRetryMs {
				h.SoonestRetryMs = remaining.Milliseconds()
			}
		default:
			h.Terminal++
		}
		if c.Active {
			active++
		}
	}
	switch {
	case open > 0 || (active > 0 && h.ActiveAvailable == 0):
		h.Status = "unhealthy"
	case h.CoolingDown > 0 || degraded > 0 || half > 0 || h.Terminal > 0 || h.Lockouts > 0:
		h.Status = "degraded"
	default:
		h.Status = "healthy"
	}
	return h
}

func (a *API) health(w http.ResponseWriter, r *http.Request) {
	h := a.ComputeHealth()
	out := map[string]any{"status": h.Status, "setupComplete": h.Total > 0}
	if !a.isManagement(r) {
		httpx.WriteJSON(w, http.StatusOK, out)
		return
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	out["version"] = a.Version
	out["endpoint"] = a.BaseURL + "/v1"
	out["paused"] = a.Paused()
	out["uptime"] = int64(a.Clock.Now().Sub(a.StartedAt).Seconds())
	out["memoryUsage"] = map[string]any{"heapAlloc": ms.HeapAlloc, "sys": ms.Sys, "goroutines": runtime.NumGoroutine()}
	out["circuitBreakers"] = h.CircuitBreakers
	out["providerHealth"] = h.ProviderHealth
	out["connectionHealth"] = map[string]any{"coolingDown": h.CoolingDown, "terminal": h.Terminal,
		"total": h.Total, "soonestRetryAfterMs": h.SoonestRetryMs}
	lockouts := []map[string]any{}
	for _, e := range a.Engine.ModelLocks() {
		lockouts = append(lockouts, a.lockoutJSON(e, a.Clock.Now()))
	}
	out["lockouts"] = lockouts
	out["leases"] = map[string]any{"active": a.Leases.CountActive()}
	out["subscriptions"] = a.subscriptionHealth()
	httpx.WriteJSON(w, http.StatusOK, out)
}

// resetBreakers closes every provider breaker.
func (a *API) resetBreakers(w http.ResponseWriter, r *http.Request) {
	n := a.Engine.Breakers().ResetAll()
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "resetCount": n})
}

func errInvalidQuery(param, msg string) error {
	return errs.New(errs.Invalid, "INVALID_QUERY", "%s", msg).WithParam(param)
}
