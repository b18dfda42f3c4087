// Package openrouter is the provider folder of OpenRouter (catalogue id
// `openrouter`): its catalogue row.
package openrouter

import (
	"omniroute/backend/providers"
)

// ID is OpenRouter's catalogue id.
const ID = "openrouter"

// Module is what the gateway knows of OpenRouter: its catalogue row.
func Module() providers.Module {
	return providers.Module{ID: ID, Rows: []providers.Provider{row()}}
}

// row is the catalogue row.
func row() providers.Provider {
	return providers.Provider{
		ID: ID, Name: "OpenRouter", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI,
		BaseURL: "https://openrouter.ai/api/v1", Aliases: []string{"or"},
		ExtraHeaders: map[string]string{"HTTP-Referer": "https://omniroute.local", "X-Title": "OmniRoute"},
		Tools:        true, Vision: true, Reasoning: true, ReasoningReplay: providers.ReplayReasoning,
	}
}
