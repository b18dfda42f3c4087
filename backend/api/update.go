package api

import (
	"context"
	"net/http"

	"github.com/gorilla/mux"

	"omniroute/backend/config"
	"omniroute/backend/errs"
	"omniroute/backend/httpx"
	"omniroute/backend/update"
)

// updateRoutes serves the opt-in release check: GET the status (checked
// again when older than a day), POST a check now. Nothing is downloaded.
func (a *API) updateRoutes(m *mux.Router) {
	m.HandleFunc("/update", a.management(a.updateStatus)).Methods(http.MethodGet)
	m.HandleFunc("/update/check", a.management(a.updateCheck)).Methods(http.MethodPost)
}

func (a *API) updateURL() (enabled bool, url string) {
	g := a.Settings.GeneralRef()
	url = g.UpdateURL
	if url == "" {
		url = config.DefaultUpdateURL
	}
	return g.UpdateCheck, url
}

// UpdateStatus is the release check's status as GET /api/update reports it
// (checked first when on and a day old); ok is false when this build has no
// check. The tray asks it to show "version X is available".
func (a *API) UpdateStatus(ctx context.Context) (st update.Status, ok bool) {
	if a.Updates == nil {
		return update.Status{}, false
	}
	enabled, url := a.updateURL()
	return a.Updates.Status(ctx, enabled, url), true
}

func (a *API) updateStatus(w http.ResponseWriter, r *http.Request) {
	if a.Updates == nil {
		httpx.WriteError(w, errs.New(errs.NotFound, "UPDATE_CHECK_UNAVAILABLE", "this build has no update check"))
		return
	}
	enabled, url := a.updateURL()
	httpx.WriteJSON(w, http.StatusOK, a.Updates.Status(r.Context(), enabled, url))
}

func (a *API) updateCheck(w http.ResponseWriter, r *http.Request) {
	enabled, url := a.updateURL()
	switch {
	case a.Updates == nil:
		httpx.WriteError(w, errs.New(errs.NotFound, "UPDATE_CHECK_UNAVAILABLE", "this build has no update check"))
		return
	case !enabled:
		httpx.WriteError(w, errs.New(errs.Conflict, "UPDATE_CHECK_OFF",
			"the update check is off: turn it on in settings (updateCheck: true) first"))
		return
	}
	httpx.WriteJSON(w, http.StatusOK, a.Updates.Check(r.Context(), url))
}
