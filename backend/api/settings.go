package api

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/tidwall/gjson"

	"omniroute/backend/config"
	"omniroute/backend/errs"
	"omniroute/backend/httpx"
	"omniroute/backend/pricing"
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
	// An agent model map target must route now (a typo would otherwise only
	// show when an agent's request fails).
	next, err := config.PatchJSON(a.Settings.General(), body)
	if err != nil {
		httpx.WriteError(w, settingsError(err))
		return
	}
	for _, e := range next.AgentModelMap.Entries() {
		if cur, _ := a.Settings.General().AgentModelMap.Target(e[0]); e[1] == "" || e[1] == cur {
			continue
		}
		if err := a.Engine.Served(e[1]); err != nil {
			httpx.WriteError(w, errs.New(errs.Invalid, "INVALID_SETTING",
				"agentModelMap.%s: %q is not served by any active connection or combo: %s", e[0], e[1], errs.As(err).Message).WithParam("agentModelMap."+e[0]))
			return
		}
	}
	// A pricing file is read before it is saved: a file that cannot be used
	// is the write's 400, never a setting that silently prices nothing. (A
	// PATCH naming the same file reads it again.)
	filePatched := gjson.GetBytes(body, "pricingFile").Exists()
	if filePatched {
		if _, err := pricing.Check(next.PricingFile); err != nil {
			httpx.WriteError(w, errs.New(errs.Invalid, "INVALID_SETTING", "pricingFile: %s %v", next.PricingFile, err).WithParam("pricingFile"))
			return
		}
	}
	g, err := a.Settings.PatchGeneral(body)
	if err != nil {
		httpx.WriteError(w, settingsError(err))
		return
	}
	if filePatched && a.PricingFile != nil {
		if err := a.PricingFile.Load(g.PricingFile); err != nil && a.Log != nil {
			a.Log.Warn("pricing file not taken", slog.String("error", err.Error()))
		}
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
