package api

import (
	"net/http"

	"github.com/gorilla/mux"
)

// resilienceRoutes mounts the resilience management routes.
func (a *API) resilienceRoutes(m *mux.Router) {
	m.HandleFunc("/resilience/reset", a.management(a.resetBreakers)).Methods(http.MethodPost)
}
