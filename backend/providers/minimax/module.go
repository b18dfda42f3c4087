// Package minimax is the provider folder of MiniMax (catalogue id
// `minimax`): its catalogue row and its built-in error rules.
package minimax

import (
	"omniroute/backend/providers"
	"omniroute/backend/resilience/rules"
)

// ID is MiniMax's catalogue id.
const ID = "minimax"

// Module is what the gateway knows of MiniMax: its catalogue row and its
// built-in error rules.
func Module() providers.Module {
	return providers.Module{ID: ID, Rows: []providers.Provider{row()}, Rules: builtinRules()}
}

// row is the catalogue row.
func row() providers.Provider {
	return providers.Provider{
		ID: ID, Name: "MiniMax", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI,
		BaseURL: "https://api.minimax.io/v1", DefaultModels: []string{"MiniMax-M2"}, Tools: true, Reasoning: true,
	}
}

// builtinRules are the error rules of MiniMax's own codes and wording.
func builtinRules() []rules.Rule {
	return []rules.Rule{
		{
			ID: "minimax-rate-limit", Provider: ID,
			Match:  rules.Match{Codes: []string{"1002", "1039"}},
			Reason: "rate_limit_exceeded", Scope: rules.ScopeConnection,
			Description: "MiniMax business codes 1002/1039 are rate limits whatever the HTTP status",
		},
	}
}
