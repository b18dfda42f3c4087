// Package ollamalocal is the provider folder of Ollama (local, OpenAI-
// compatible) (catalogue id `ollama-local`): its catalogue row.
package ollamalocal

import (
	"omniroute/backend/providers"
)

// ID is Ollama (local, OpenAI-compatible)'s catalogue id.
const ID = "ollama-local"

// Module is what the gateway knows of Ollama (local, OpenAI-compatible): its
// catalogue row.
func Module() providers.Module {
	return providers.Module{ID: ID, Rows: []providers.Provider{row()}}
}

// row is the catalogue row:
// Ollama's OpenAI-compatible /v1 (its native API is a provider module).
func row() providers.Provider {
	return providers.Provider{
		ID: ID, Name: "Ollama (local, OpenAI-compatible)", Category: providers.CategoryLocal,
		Format: providers.FormatOpenAI, BaseURL: "http://127.0.0.1:11434/v1", Tools: true, Vision: true,
		Reasoning: true,
	}
}
