package words

import (
	"strings"
	"testing"

	"omniroute/backend/health"
	"omniroute/backend/resilience/verdict"
)

// TestEveryCodeAndStateHasWords: every health state and overall status, every
// verdict code and kind, every exclusion reason and every fix has its plain
// sentence, ending in a full stop, free of the raw code.
func TestEveryCodeAndStateHasWords(t *testing.T) {
	c := Get()
	for _, s := range health.AllStates() {
		if w, ok := c.States[string(s)]; !ok || w.Label == "" || !strings.HasSuffix(w.Sentence, ".") {
			t.Errorf("state %s: %+v", s, w)
		}
	}
	for _, s := range []string{health.StatusSetup, health.StatusHealthy, health.StatusDegraded, health.StatusUnhealthy, health.StatusPaused} {
		if _, ok := c.States[s]; !ok {
			t.Errorf("status %s has no words", s)
		}
	}
	for _, code := range []string{verdict.CodeRateLimited, verdict.CodeConcurrencyLimited, verdict.CodeQuotaExhausted, verdict.CodeAuthFailed,
		verdict.CodeForbidden, verdict.CodeRequestRejected, verdict.CodeAccountBanned, verdict.CodeCreditsExhausted, verdict.CodeModelNotFound,
		verdict.CodeBadRequest, verdict.CodeContextLength, verdict.CodeContentPolicy, verdict.CodeServerError, verdict.CodeTransportError,
		verdict.CodeTimeout, verdict.CodeStreamStalled, verdict.CodeClientCanceled, verdict.CodeQuotaRestated,
		// kinds, exclusion reasons
		string(verdict.KindRateLimit), string(verdict.KindServer), string(verdict.KindTransport), string(verdict.KindTimeout),
		"circuit_open", "connection_cooldown", "model_cooldown", "model_lockout", "provider_cooldown", "unavailable", "lease_held",
		// the People pages' refusals (Users, Tokens)
		"MANAGEMENT_AUTH_REQUIRED", "ROLE_FORBIDDEN", "INVALID_NAME", "INVALID_ROLE", "TOKEN_NOT_FOUND", "USER_NOT_FOUND",
		// a client key's expiry and rotation (issue 42 item 10)
		"KEY_EXPIRED", "KEY_ROTATED"} {
		s, ok := c.Codes[code]
		if !ok || !strings.HasSuffix(s, ".") || strings.Contains(s, code) {
			t.Errorf("code %s: %q", code, s)
		}
	}
	for _, f := range []string{"reset_breaker", "clear_cooldown", "unlock_models", "release_lease", "replace_key", "enable", "edit_connection", "set_price"} {
		if c.Fixes[f] == "" {
			t.Errorf("fix %s has no label", f)
		}
	}
}

func TestUnknownCodeReadsAsWords(t *testing.T) {
	tests := []struct{ code, sentence, label string }{
		{"SOME_NEW_CODE", "Some new code.", "SOME NEW CODE"},
		{"UPSTREAM_RATE_LIMITED", codes["UPSTREAM_RATE_LIMITED"], "UPSTREAM RATE LIMITED"},
		{"", "", ""},
	}
	for _, tt := range tests {
		if got := Sentence(tt.code); got != tt.sentence {
			t.Errorf("Sentence(%q) = %q, want %q", tt.code, got, tt.sentence)
		}
	}
	if Label("cooling") != "Cooling down" || Label("new_state") != "New state" || Label("") != "" {
		t.Errorf("labels %q %q", Label("cooling"), Label("new_state"))
	}
	c := Get()
	c.Codes["MODEL_NOT_FOUND"] = "changed"
	if Sentence("MODEL_NOT_FOUND") == "changed" {
		t.Error("Get hands out the source map")
	}
}
