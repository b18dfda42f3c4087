package api

import (
	"errors"
	"net/http"

	"omniroute/backend/config"
	"omniroute/backend/errs"
	"omniroute/backend/httpx"
)

func (a *API) getSettings(w http.ResponseWriter, r *http.Request) {
	httpx.WriteJSON(w, http.StatusOK, a.Settings.General())
}

func (a *API) patchSettings(w http.ResponseWriter, r *http.Request) {
	body, err := httpx.ReadBody(r, managementBodyLimit)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	g, err := a.Settings.PatchGeneral(body)
	if err != nil {
		httpx.WriteError(w, settingsError(err))
		return
	}
	httpx.WriteJSON(w, http.StatusOK, g)
}

// settingsError turns a validation failure into a 400 naming the field.
func settingsError(err error) error {
	var fe *config.FieldError
	if errors.As(err, &fe) {
		return errs.New(errs.Invalid, "INVALID_SETTING", "%s", fe.Error()).WithParam(fe.Field)
	}
	return err
}
