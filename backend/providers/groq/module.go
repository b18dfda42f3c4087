// Package groq is the provider folder of Groq (catalogue id `groq`): its
// catalogue row.
package groq

import (
	"omniroute/backend/providers"
)

// ID is Groq's catalogue id.
const ID = "groq"

// Module is what the gateway knows of Groq: its catalogue row.
func Module() providers.Module {
	return providers.Module{ID: ID, Rows: []providers.Provider{row()}}
}

// row is the catalogue row.
func row() providers.Provider {
	return providers.Provider{
		ID: ID, Name: "Groq", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI,
		BaseURL:       "https://api.groq.com/openai/v1",
		DefaultModels: []string{"llama-3.3-70b-versatile", "llama-3.1-8b-instant"}, Tools: true, Vision: true,
		Reasoning: true,
	}
}
