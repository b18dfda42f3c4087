package api

import (
	"net/http"

	"omniroute/backend/httpx"
)

// featureFlags serves GET /api/feature-flags: each live switch with its
// effective value and where that value comes from (the operator's setting or
// the env default). Flags change through PATCH /api/settings {"featureFlags":…}
// and apply to the next request, without a restart.
func (a *API) featureFlags(w http.ResponseWriter, r *http.Request) {
	ff := a.Settings.General().FeatureFlags
	source := "env"
	if ff.EmergencyFallback != nil {
		source = "settings"
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"flags": []map[string]any{{
		"key": "emergencyFallback", "env": "OMNIROUTE_EMERGENCY_FALLBACK",
		"enabled": a.Gateway.EmergencyFallbackOn(), "source": source, "envDefault": a.Gateway.EmergencyFallbackDefault(),
		"model":       ff.EmergencyFallbackModel,
		"description": "When every target of a request failed or was excluded, try the emergency model once before answering the error.",
	}}})
}
