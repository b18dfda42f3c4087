// Package sambanova is the provider folder of SambaNova Cloud (catalogue id
// `sambanova`): its catalogue row.
package sambanova

import (
	"omniroute/backend/providers"
)

// ID is SambaNova Cloud's catalogue id.
const ID = "sambanova"

// Module is what the gateway knows of SambaNova Cloud: its catalogue row.
func Module() providers.Module {
	return providers.Module{ID: ID, Rows: []providers.Provider{row()}}
}

// row is the catalogue row.
func row() providers.Provider {
	return providers.Provider{
		ID: ID, Name: "SambaNova Cloud", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI,
		BaseURL:       "https://api.sambanova.ai/v1",
		DefaultModels: []string{"Meta-Llama-3.3-70B-Instruct", "DeepSeek-V3.1", "DeepSeek-R1-0528", "gpt-oss-120b", "Llama-4-Maverick-17B-128E-Instruct", "Qwen3-32B"},
		Tools:         true, Vision: true, Reasoning: true,
	}
}
