// Package mistral is the provider folder of Mistral AI (catalogue id
// `mistral`): its catalogue row.
package mistral

import (
	"omniroute/backend/providers"
)

// ID is Mistral AI's catalogue id.
const ID = "mistral"

// Module is what the gateway knows of Mistral AI: its catalogue row.
func Module() providers.Module {
	return providers.Module{ID: ID, Rows: []providers.Provider{row()}}
}

// row is the catalogue row.
func row() providers.Provider {
	return providers.Provider{
		ID: ID, Name: "Mistral AI", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI,
		BaseURL:       "https://api.mistral.ai/v1",
		DefaultModels: []string{"mistral-large-latest", "mistral-medium-latest", "mistral-small-latest", "magistral-medium-latest", "magistral-small-latest", "codestral-latest", "ministral-8b-latest", "pixtral-large-latest"},
		Tools:         true, Vision: true, Reasoning: true,
	}
}
