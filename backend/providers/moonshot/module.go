// Package moonshot is the provider folder of Moonshot AI (Kimi) (catalogue
// id `moonshot`): its catalogue row and its built-in error rules.
package moonshot

import (
	"omniroute/backend/providers"
	"omniroute/backend/resilience/rules"
)

// ID is Moonshot AI (Kimi)'s catalogue id.
const ID = "moonshot"

// Module is what the gateway knows of Moonshot AI (Kimi): its catalogue row
// and its built-in error rules.
func Module() providers.Module {
	return providers.Module{ID: ID, Rows: []providers.Provider{row()}, Rules: builtinRules()}
}

// row is the catalogue row.
func row() providers.Provider {
	return providers.Provider{
		ID: ID, Name: "Moonshot AI (Kimi)", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI,
		BaseURL: "https://api.moonshot.ai/v1", Aliases: []string{"kimi"},
		DefaultModels: []string{"kimi-k2-0905-preview", "kimi-k2-turbo-preview", "kimi-k2-thinking", "kimi-k2-thinking-turbo", "moonshot-v1-128k"},
		Tools:         true, Vision: true, Reasoning: true,
	}
}

// builtinRules are the error rules of Moonshot AI (Kimi)'s own codes and wording.
func builtinRules() []rules.Rule {
	return []rules.Rule{
		{
			ID: "moonshot-engine-overloaded", Provider: ID,
			Match:  rules.Match{Codes: []string{"engine_overloaded_error"}},
			Reason: "server_error", Scope: rules.ScopeProvider,
			Description: "Moonshot's 429 engine_overloaded_error is its capacity, not the account's limit: evidence for the provider breaker, the key is not cooled",
		},
	}
}
