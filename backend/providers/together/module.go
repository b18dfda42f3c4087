// Package together is the provider folder of Together AI (catalogue id
// `together`): its catalogue row.
package together

import (
	"omniroute/backend/providers"
)

// ID is Together AI's catalogue id.
const ID = "together"

// Module is what the gateway knows of Together AI: its catalogue row.
func Module() providers.Module {
	return providers.Module{ID: ID, Rows: []providers.Provider{row()}}
}

// row is the catalogue row:
// Together's GET /models answers a bare JSON array.
func row() providers.Provider {
	return providers.Provider{
		ID: ID, Name: "Together AI", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI,
		BaseURL:       "https://api.together.ai/v1",
		DefaultModels: []string{"meta-llama/Llama-3.3-70B-Instruct-Turbo", "deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-R1", "Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", "openai/gpt-oss-120b", "moonshotai/Kimi-K2-Instruct"},
		Tools:         true, Vision: true, Reasoning: true,
	}
}
