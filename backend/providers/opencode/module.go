// Package opencode is the provider folder of OpenCode Zen (catalogue id
// `opencode`): its catalogue row and its built-in error rules.
package opencode

import (
	"omniroute/backend/providers"
	"omniroute/backend/resilience/rules"
)

// ID is OpenCode Zen's catalogue id.
const ID = "opencode"

// Module is what the gateway knows of OpenCode Zen: its catalogue row and
// its built-in error rules.
func Module() providers.Module {
	return providers.Module{ID: ID, Rows: []providers.Provider{row()}, Rules: builtinRules()}
}

// row is the catalogue row.
func row() providers.Provider {
	return providers.Provider{
		ID: ID, Name: "OpenCode Zen", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI,
		BaseURL: "https://opencode.ai/zen/v1", RuleFullText: true, EgressBucketed: true, Tools: true, Reasoning: true,
	}
}

// builtinRules are the error rules of OpenCode Zen's own codes and wording.
func builtinRules() []rules.Rule {
	return []rules.Rule{
		{
			ID: "opencode-subscription-quota", Provider: ID,
			Match:  rules.Match{Statuses: []int{429}, TextMarkers: []string{"monthly usage limit", "usage limit reached", "free usage"}},
			Reason: "quota_exhausted", Scope: rules.ScopeConnection, CooldownMs: 3600 * 1000,
			Description: "free tier is bucketed per egress IP: a quota 429 cools the IP's connections for 1 h",
		},
		{
			ID: "opencode-rate-limit", Provider: ID,
			Match:  rules.Match{Statuses: []int{429}},
			Reason: "rate_limit_exceeded", Scope: rules.ScopeConnection,
			Description: "free tier is bucketed per egress IP: a plain 429 is the same signal as a quota",
		},
	}
}
