// Package anthropiccompatible is the provider folder of Anthropic-compatible
// endpoint (catalogue id `anthropic-compatible`): its catalogue row.
package anthropiccompatible

import (
	"omniroute/backend/providers"
)

// ID is Anthropic-compatible endpoint's catalogue id.
const ID = "anthropic-compatible"

// Module is what the gateway knows of Anthropic-compatible endpoint: its
// catalogue row.
func Module() providers.Module {
	return providers.Module{ID: ID, Rows: []providers.Provider{row()}}
}

// row is the catalogue row.
func row() providers.Provider {
	return providers.Provider{
		ID: ID, Name: "Anthropic-compatible endpoint", Category: providers.CategoryAPIKey,
		Format: providers.FormatAnthropic, UserDefined: true, AssistantPrefill: true, Tools: true, Vision: true,
		Reasoning: true,
	}
}
