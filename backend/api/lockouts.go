package api

import (
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"omniroute/backend/errs"
	"omniroute/backend/httpx"
	"omniroute/backend/routing"
)

func (a *API) lockoutRoutes(m *mux.Router) {
	m.HandleFunc("/resilience/model-cooldowns", a.management(a.listModelCooldowns)).Methods(http.MethodGet)
	m.HandleFunc("/resilience/model-cooldowns", a.management(a.clearModelCooldowns)).Methods(http.MethodDelete)
}

// lockoutJSON renders one lockout for the dashboard and the health payload.
func (a *API) lockoutJSON(m routing.ModelLock, now time.Time) map[string]any {
	e := m.Entry
	name := ""
	if c, ok := a.Engine.Registry().Get(e.ConnectionID); ok {
		name = c.Name
	}
	return map[string]any{"provider": e.Provider, "connectionId": e.ConnectionID, "connectionName": name, "model": e.Model,
		"scope": e.Scope, "reason": e.Reason, "status": e.Status, "failureCount": e.FailureCount,
		"remainingMs": e.Remaining(now).Milliseconds(), "expiresAt": e.ExpiresAt.UTC().Format(time.RFC3339Nano), "layer": m.Layer}
}

// lockoutsByConnection groups the active lockouts per connection id.
func (a *API) lockoutsByConnection(now time.Time) map[string][]map[string]any {
	out := map[string][]map[string]any{}
	for _, e := range a.Engine.ModelLocks() {
		out[e.ConnectionID] = append(out[e.ConnectionID], a.lockoutJSON(e, now))
	}
	return out
}

func (a *API) listModelCooldowns(w http.ResponseWriter, r *http.Request) {
	now := a.Clock.Now()
	items := []map[string]any{}
	for _, e := range a.Engine.ModelLocks() {
		items = append(items, a.lockoutJSON(e, now))
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"items": items})
}

// clearModelCooldowns reactivates one model ({provider, connectionId, model}) or all ({all:true}).
func (a *API) clearModelCooldowns(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Provider     string `json:"provider"`
		ConnectionID string `json:"connectionId"`
		Connection   string `json:"connection"` // the guide's older field name
		Model        string `json:"model"`
		All          bool   `json:"all"`
	}
	if err := a.decode(r, &in); err != nil {
		httpx.WriteError(w, err)
		return
	}
	if in.ConnectionID == "" {
		in.ConnectionID = in.Connection
	}
	var removed int
	switch {
	case in.All:
		removed = a.Engine.ClearAllModelLocks()
	case in.ConnectionID != "" || in.Model != "":
		removed = a.Engine.ClearModelLocks(in.Provider, in.ConnectionID, in.Model)
	default:
		httpx.WriteError(w, errs.New(errs.Invalid, "SELECTION_REQUIRED", "send {\"provider\",\"connectionId\",\"model\"} or {\"all\":true}"))
		return
	}
	if removed > 0 && a.Events != nil {
		a.Events.Publish("lockout", map[string]any{"action": "cleared", "provider": in.Provider, "connectionId": in.ConnectionID,
			"model": in.Model, "removed": removed})
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "removed": removed})
}
