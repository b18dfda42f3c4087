// Package openaicompatible is the provider folder of OpenAI-compatible
// endpoint (catalogue id `openai-compatible`): its catalogue row.
package openaicompatible

import (
	"omniroute/backend/providers"
)

// ID is OpenAI-compatible endpoint's catalogue id.
const ID = "openai-compatible"

// Module is what the gateway knows of OpenAI-compatible endpoint: its
// catalogue row.
func Module() providers.Module {
	return providers.Module{ID: ID, Rows: []providers.Provider{row()}}
}

// row is the catalogue row.
func row() providers.Provider {
	return providers.Provider{
		ID: ID, Name: "OpenAI-compatible endpoint", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI,
		UserDefined: true, Tools: true, Vision: true, Reasoning: true,
	}
}
