// Package cerebras is the provider folder of Cerebras (catalogue id
// `cerebras`): its catalogue row and its built-in error rules.
package cerebras

import (
	"omniroute/backend/providers"
	"omniroute/backend/resilience/rules"
)

// ID is Cerebras's catalogue id.
const ID = "cerebras"

// Module is what the gateway knows of Cerebras: its catalogue row and its
// built-in error rules.
func Module() providers.Module {
	return providers.Module{ID: ID, Rows: []providers.Provider{row()}, Rules: builtinRules()}
}

// row is the catalogue row:
// Cerebras errors are top-level {message, type, param, code}; its daily-
// quota rule reads "per day" in the message.
func row() providers.Provider {
	return providers.Provider{
		ID: ID, Name: "Cerebras", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI,
		BaseURL:       "https://api.cerebras.ai/v1",
		DefaultModels: []string{"llama-3.3-70b", "llama3.1-8b", "gpt-oss-120b", "qwen-3-32b", "qwen-3-235b-a22b-instruct-2507", "zai-glm-4.6"},
		RuleFullText:  true, Tools: true, Reasoning: true,
	}
}

// builtinRules are the error rules of Cerebras's own codes and wording.
func builtinRules() []rules.Rule {
	return []rules.Rule{
		{
			ID: "cerebras-per-minute", Provider: ID,
			Match:  rules.Match{Statuses: []int{429}, Codes: []string{"token_quota_exceeded", "request_quota_exceeded"}, TextMarkers: []string{"per minute", "per hour"}},
			Reason: "rate_limit_exceeded", Scope: rules.ScopeModel,
			Description: "Cerebras names its per-minute and per-hour limits token_quota_exceeded: a rate limit, not a used-up quota",
		},
		{
			ID: "cerebras-per-day", Provider: ID,
			Match:  rules.Match{Statuses: []int{429}, Codes: []string{"token_quota_exceeded", "request_quota_exceeded"}, TextMarkers: []string{"per day"}},
			Reason: "quota_exhausted", Scope: rules.ScopeConnection,
			Description: "Cerebras daily token or request quota: the connection cools on the ladder",
		},
	}
}
