// Package nebius is the provider folder of Nebius Token Factory (catalogue
// id `nebius`): its catalogue row.
package nebius

import (
	"omniroute/backend/providers"
)

// ID is Nebius Token Factory's catalogue id.
const ID = "nebius"

// Module is what the gateway knows of Nebius Token Factory: its catalogue
// row.
func Module() providers.Module {
	return providers.Module{ID: ID, Rows: []providers.Provider{row()}}
}

// row is the catalogue row:
// Nebius AI Studio, now Nebius Token Factory.
func row() providers.Provider {
	return providers.Provider{
		ID: ID, Name: "Nebius Token Factory", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI,
		BaseURL:       "https://api.tokenfactory.nebius.com/v1",
		DefaultModels: []string{"deepseek-ai/DeepSeek-V3-0324", "deepseek-ai/DeepSeek-R1-0528", "Qwen/Qwen3-235B-A22B-Instruct-2507", "Qwen/Qwen3-Coder-480B-A35B-Instruct", "meta-llama/Llama-3.3-70B-Instruct", "openai/gpt-oss-120b", "moonshotai/Kimi-K2-Instruct"},
		Tools:         true, Vision: true, Reasoning: true,
	}
}
