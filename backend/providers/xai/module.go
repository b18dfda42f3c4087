// Package xai is the provider folder of xAI (Grok) (catalogue id `xai`): its
// catalogue row and its built-in error rules.
package xai

import (
	"omniroute/backend/providers"
	"omniroute/backend/resilience/rules"
)

// ID is xAI (Grok)'s catalogue id.
const ID = "xai"

// Module is what the gateway knows of xAI (Grok): its catalogue row and its
// built-in error rules.
func Module() providers.Module {
	return providers.Module{ID: ID, Rows: []providers.Provider{row()}, Rules: builtinRules()}
}

// row is the catalogue row:
// xAI's errors are {"code": <gRPC status text>, "error": <message>}: its
// credit rules read the message, so they see the full text.
func row() providers.Provider {
	return providers.Provider{
		ID: ID, Name: "xAI (Grok)", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI,
		BaseURL: "https://api.x.ai/v1", Aliases: []string{"grok"},
		DefaultModels: []string{"grok-4", "grok-4-fast-reasoning", "grok-4-fast-non-reasoning", "grok-code-fast-1", "grok-3", "grok-3-mini"},
		RuleFullText:  true, Tools: true, Vision: true, Reasoning: true,
	}
}

// builtinRules are the error rules of xAI (Grok)'s own codes and wording.
func builtinRules() []rules.Rule {
	return []rules.Rule{
		{
			ID: "xai-credits", Provider: ID,
			Match:  rules.Match{Statuses: []int{403, 429}, TextMarkers: []string{"any credits", "used all available credits", "spending limit"}},
			Reason: "quota_exhausted", Scope: rules.ScopeConnection,
			Description: "xAI team without credits or at its monthly spending limit (403/429 with a gRPC status text as code): the connection cools on the ladder, never terminal",
		},
	}
}
