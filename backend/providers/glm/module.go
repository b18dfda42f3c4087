// Package glm is the provider folder of Z.ai GLM (catalogue id `glm`): its
// catalogue row, its built-in error rules and its API prices.
package glm

import (
	_ "embed"

	"omniroute/backend/providers"
	"omniroute/backend/resilience/rules"
)

// ID is Z.ai GLM's catalogue id.
const ID = "glm"

// prices are Z.ai GLM's API prices (Module.Prices).
//
//go:embed prices.json
var prices []byte

// Module is what the gateway knows of Z.ai GLM: its catalogue row, its
// built-in error rules and its API prices.
func Module() providers.Module {
	return providers.Module{ID: ID, Rows: []providers.Provider{row()}, Rules: builtinRules(), Prices: prices}
}

// row is the catalogue row:
// Z.ai's international endpoint (api.z.ai); GLM business codes are in the
// rules table.
func row() providers.Provider {
	return providers.Provider{
		ID: ID, Name: "Z.ai GLM", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI,
		BaseURL: "https://api.z.ai/api/paas/v4", Aliases: []string{"zai", "zhipu"},
		DefaultModels: []string{"glm-4.6", "glm-4.5", "glm-4.5-air", "glm-4.5-flash"}, HonorsRuleScope: true,
		Tools: true, Vision: true, Reasoning: true, QuotaFamily: providers.PrefixFamily("glm-4.5", "glm-4.6"),
	}
}

// builtinRules are the error rules of Z.ai GLM's own codes and wording.
func builtinRules() []rules.Rule {
	return []rules.Rule{
		{
			ID: "glm-quota-package", Provider: ID,
			Match:  rules.Match{Codes: []string{"1113", "1308", "1310"}},
			Reason: "quota_exhausted", Scope: rules.ScopeConnection,
			Description: "GLM 1113/1308/1310: the resource package or usage window is used up",
		},
		{
			ID: "glm-model-not-found", Provider: ID,
			Match:  rules.Match{Codes: []string{"1211"}},
			Reason: "not_found", Scope: rules.ScopeModel, CooldownMs: 3600 * 1000,
			Description: "GLM 1211: the model does not exist for this account; only the model leaves routing, for 1 h",
		},
		{
			ID: "glm-model-no-access", Provider: ID,
			Match:  rules.Match{Codes: []string{"1220"}},
			Reason: "model_access_denied", Scope: rules.ScopeModel, CooldownMs: 3600 * 1000,
			Description: "GLM 1220: no permission for this model; only the model leaves routing, for 1 h",
		},
	}
}
