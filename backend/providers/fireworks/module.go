// Package fireworks is the provider folder of Fireworks AI (catalogue id
// `fireworks`): its catalogue row and its built-in error rules.
package fireworks

import (
	"omniroute/backend/providers"
	"omniroute/backend/resilience/rules"
)

// ID is Fireworks AI's catalogue id.
const ID = "fireworks"

// Module is what the gateway knows of Fireworks AI: its catalogue row and
// its built-in error rules.
func Module() providers.Module {
	return providers.Module{ID: ID, Rows: []providers.Provider{row()}, Rules: builtinRules()}
}

// row is the catalogue row.
func row() providers.Provider {
	return providers.Provider{
		ID: ID, Name: "Fireworks AI", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI,
		BaseURL:       "https://api.fireworks.ai/inference/v1",
		DefaultModels: []string{"accounts/fireworks/models/deepseek-v3p1", "accounts/fireworks/models/deepseek-r1-0528", "accounts/fireworks/models/glm-4p5", "accounts/fireworks/models/gpt-oss-120b", "accounts/fireworks/models/gpt-oss-20b"},
		Tools:         true, Vision: true, Reasoning: true,
	}
}

// builtinRules are the error rules of Fireworks AI's own codes and wording.
func builtinRules() []rules.Rule {
	return []rules.Rule{
		{
			ID: "fireworks-account-suspended", Provider: ID,
			Match:  rules.Match{Statuses: []int{412}},
			Reason: "quota_exhausted", Scope: rules.ScopeConnection,
			Description: "Fireworks answers 412 when the account is suspended (monthly spending limit, unpaid invoice): fail over and cool the connection instead of passing the 412 on",
		},
	}
}
