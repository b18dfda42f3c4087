package gateway

import "strings"

// HeaderEmergencyFallback names the emergency model that served a request
// every regular target had failed or excluded.
const HeaderEmergencyFallback = "X-OmniRoute-Emergency-Fallback"

// EmergencyFallbackOn reports whether the emergency fallback is on: the
// persisted feature flag when the operator set one (Feature Flags page, live),
// otherwise the OMNIROUTE_EMERGENCY_FALLBACK default.
func (g *Gateway) EmergencyFallbackOn() bool {
	if f := g.general().FeatureFlags.EmergencyFallback; f != nil {
		return *f
	}
	return g.emergencyDefault
}

// emergencyModel is the model for a last round after every target failed or
// was excluded: only when the flag is on, a model is configured, the request
// is not already for it, not already the emergency round, and not bound to
// an exclusive lease (a lease owns its connection).
func (g *Gateway) emergencyModel(model string, leased, already bool) string {
	if leased || already || !g.EmergencyFallbackOn() {
		return ""
	}
	m := strings.TrimSpace(g.general().FeatureFlags.EmergencyFallbackModel)
	if m == "" || strings.EqualFold(m, model) {
		return ""
	}
	return m
}

// ParseFlag reads a boolean env value ("1", "true", "on", "yes"; anything else is off).
func ParseFlag(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "on", "yes":
		return true
	}
	return false
}

// EmergencyFallbackDefault is the OMNIROUTE_EMERGENCY_FALLBACK value.
func (g *Gateway) EmergencyFallbackDefault() bool { return g.emergencyDefault }
