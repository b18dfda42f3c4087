package gateway

import (
	"testing"
	"time"

	"omniroute/backend/routing"
)

func TestAllExcludedLine(t *testing.T) {
	plan := routing.Plan{Combo: &routing.Combo{Name: "pool", Strategy: "weighted"}, Excluded: []routing.Exclusion{
		{Provider: "openai", Model: "gpt-4o", Reason: "connection_cooldown", Remaining: 11200 * time.Millisecond},
		{Provider: "glm", Model: "glm-4.6", Reason: "model_lockout", Detail: "exact", Remaining: 3 * time.Second},
		{Provider: "groq", Model: "llama", Reason: "unavailable", Detail: "banned"},
	}}
	want := "[COMBO] Weighted selection: every target excluded before dispatch — openai/gpt-4o (connection_cooldown, 12s), " +
		"glm/glm-4.6 (model_lockout:exact, 3s), groq/llama (unavailable:banned)"
	if got := allExcludedLine(plan); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
