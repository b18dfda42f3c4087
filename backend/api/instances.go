package api

import (
	"net/http"

	"github.com/gorilla/mux"

	"omniroute/backend/errs"
	"omniroute/backend/httpx"
	"omniroute/backend/instances"
)

// InstanceHeader names the instance that answered, on every response of a
// team server (instances sharing one PostgreSQL database).
const InstanceHeader = "X-OmniRoute-Instance"

func (a *API) instanceRoutes(m *mux.Router) {
	m.HandleFunc("/instances", a.management(a.listInstances)).Methods(http.MethodGet)
}

// listInstances is GET /api/instances: the gateway instances sharing this
// database, from their heartbeat rows (just this one on SQLite).
func (a *API) listInstances(w http.ResponseWriter, r *http.Request) {
	if a.Instances == nil {
		httpx.WriteJSON(w, http.StatusOK, map[string]any{"shared": false, "self": "", "instances": []instances.Info{}})
		return
	}
	list, err := a.Instances.List()
	if err != nil {
		a.log.Warn("list instances", "error", err.Error())
		httpx.WriteError(w, errs.New(errs.Unavailable, "DATABASE_UNAVAILABLE", "the instance list cannot be read from the database right now"))
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"shared": a.Store.Shared(), "self": a.Instances.Name(), "instances": list})
}

// withInstance sets InstanceHeader on every response when the store is
// shared (a desktop's single instance adds nothing).
func (a *API) withInstance(next http.Handler) http.Handler {
	if a.Instances == nil || !a.Store.Shared() {
		return next
	}
	name := a.Instances.Name()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(InstanceHeader, name)
		next.ServeHTTP(w, r)
	})
}
