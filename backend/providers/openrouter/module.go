// Package openrouter is the provider folder of OpenRouter (catalogue id
// `openrouter`): its catalogue row and its executor, the OpenAI wire with
// OpenRouter's reasoning_details read into the gateway's Chat pivot and
// given back on replay (details.go).
package openrouter

import (
	"omniroute/backend/providers"
)

// ID is OpenRouter's catalogue id.
const ID = "openrouter"

// Module is what the gateway knows of OpenRouter: its catalogue row and
// its executor.
func Module() providers.Module {
	return providers.Module{ID: ID, Dialect: Dialect, Rows: []providers.Provider{row()},
		NewExecutor: NewExecutor, Formats: []providers.Format{providers.FormatOpenAI}}
}

// row is the catalogue row. A replayed turn's signed reasoning goes back as
// reasoning_details (Replay); reasoning text without blocks as "reasoning".
func row() providers.Provider {
	return providers.Provider{
		ID: ID, Name: "OpenRouter", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI, Dialect: Dialect,
		BaseURL: "https://openrouter.ai/api/v1", Aliases: []string{"or"},
		ExtraHeaders: map[string]string{"HTTP-Referer": "https://omniroute.local", "X-Title": "OmniRoute"},
		Doc:          providers.Doc{Wire: "OpenAI Chat Completions; signed reasoning read from and given back as `reasoning_details`"},
		Tools:        true, Vision: true, Reasoning: true, ReasoningReplay: providers.ReplayReasoning, SignedReplay: Replay,
	}
}
