// Package perplexity is the provider folder of Perplexity (Sonar) (catalogue
// id `perplexity`): its catalogue row and its built-in error rules.
package perplexity

import (
	"omniroute/backend/providers"
	"omniroute/backend/resilience/rules"
)

// ID is Perplexity (Sonar)'s catalogue id.
const ID = "perplexity"

// Module is what the gateway knows of Perplexity (Sonar): its catalogue row
// and its built-in error rules.
func Module() providers.Module {
	return providers.Module{ID: ID, Rows: []providers.Provider{row()}, Rules: builtinRules()}
}

// row is the catalogue row:
// Perplexity's chat route has no /v1 and it lists no models.
func row() providers.Provider {
	return providers.Provider{
		ID: ID, Name: "Perplexity (Sonar)", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI,
		BaseURL: "https://api.perplexity.ai", Aliases: []string{"pplx"},
		DefaultModels: []string{"sonar", "sonar-pro", "sonar-reasoning", "sonar-reasoning-pro", "sonar-deep-research"},
		NoModelList:   true, Vision: true, Reasoning: true,
	}
}

// builtinRules are the error rules of Perplexity (Sonar)'s own codes and wording.
func builtinRules() []rules.Rule {
	return []rules.Rule{
		{
			ID: "perplexity-invalid-model", Provider: ID,
			Match:  rules.Match{Statuses: []int{400}, Codes: []string{"invalid_model"}},
			Reason: "not_found", Scope: rules.ScopeModel,
			Description: "Perplexity answers an unknown model with 400 invalid_model: a missing model, so the request fails over",
		},
	}
}
