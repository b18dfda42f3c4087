package gateway

import (
	"net/http"
	"strings"

	"omniroute/backend/errs"
)

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

// runWithFallback is the attempt loop plus the emergency fallback: when the
// loop ends with a routing failure (nothing could serve: every target failed
// or was excluded) and the fallback is on, the request runs once more on the
// emergency model, with its own attempts and time budget. If that fails too,
// the original failure is answered.
func (g *Gateway) runWithFallback(w http.ResponseWriter, r *http.Request, req *request) error {
	if g.spend != nil {
		// The key's budget and rate limits, checked before dispatch like its
		// allowed models (routing.Access): a refusal is logged, never sent on.
		if err := g.admitSpend(req); err != nil {
			return err
		}
	}
	err := g.run(w, r, req)
	if err == nil || req.upstreamStatus != 0 || !routingFailure(err) {
		return err
	}
	return g.emergencyRun(w, r, req, err)
}

// admitSpend asks the Spend hook to admit the request and keeps its hold.
//
//go:noinline
func (g *Gateway) admitSpend(req *request) error {
	h, err := g.spend.Admit(req.client.KeyID, req.model, req.body)
	req.hold = h
	return err
}

// emergencyRun runs the request again on the emergency model, keeping the
// first run's error when that fails too.
//
//go:noinline
func (g *Gateway) emergencyRun(w http.ResponseWriter, r *http.Request, req *request, err error) error {
	m := g.emergencyModel(req.model, r.Header.Get("X-OmniRoute-Lease-Owner") != "", false)
	if m == "" {
		return err
	}
	attempts, start, model := req.attempts, req.start, req.model
	req.attempts, req.start, req.model, req.earlierAttempts = nil, g.clk.Now(), m, len(attempts)
	w.Header().Set(HeaderEmergencyFallback, m)
	err2 := g.run(w, r, req)
	req.attempts, req.start, req.model, req.earlierAttempts = append(attempts, req.attempts...), start, model, 0
	if err2 != nil {
		w.Header().Del(HeaderEmergencyFallback)
		req.upstreamStatus = 0
		return err
	}
	return nil
}

// routingFailure reports an error that means "nothing could serve": not bad
// input, auth, or lease errors, which another model would not fix.
func routingFailure(err error) bool {
	e := errs.As(err)
	if e.Type == "lease_error" {
		return false
	}
	switch e.Class {
	case errs.Unavailable, errs.RateLimited, errs.Upstream, errs.Timeout, errs.NotFound:
		return true
	}
	return false
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
