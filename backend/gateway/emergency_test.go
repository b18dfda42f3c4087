package gateway

import (
	"testing"

	"omniroute/backend/config"
)

func TestEmergencyFallbackPrecedence(t *testing.T) {
	on, off := true, false
	for _, tt := range []struct {
		env     string
		flag    *bool
		model   string
		request string
		want    string
	}{
		{"", nil, "local/llama", "openai/gpt-4o", ""},             // env off, no setting
		{"1", nil, "local/llama", "openai/gpt-4o", "local/llama"}, // env on
		{"true", &off, "local/llama", "openai/gpt-4o", ""},        // the setting wins over env
		{"", &on, "local/llama", "openai/gpt-4o", "local/llama"},  // live switch on
		{"", &on, "", "openai/gpt-4o", ""},                        // no model configured
		{"", &on, "local/llama", "LOCAL/llama", ""},               // already the emergency model
		{"nope", nil, "local/llama", "openai/gpt-4o", ""},         // not a true value
	} {
		g := New(Deps{EmergencyFallback: ParseFlag(tt.env), General: func() *config.General {
			gen := config.DefaultGeneral()
			gen.FeatureFlags = config.FeatureFlags{EmergencyFallback: tt.flag, EmergencyFallbackModel: tt.model}
			return &gen
		}})
		if got := g.emergencyModel(tt.request, false, false); got != tt.want {
			t.Errorf("env %q flag %v model %q request %q: %q, want %q", tt.env, tt.flag, tt.model, tt.request, got, tt.want)
		}
		if got := g.emergencyModel(tt.request, true, false); got != "" {
			t.Errorf("a leased request got the emergency model %q", got)
		}
	}
}
