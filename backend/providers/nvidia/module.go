// Package nvidia is the provider folder of NVIDIA NIM (catalogue id
// `nvidia`): its catalogue row.
package nvidia

import (
	"omniroute/backend/providers"
)

// ID is NVIDIA NIM's catalogue id.
const ID = "nvidia"

// Module is what the gateway knows of NVIDIA NIM: its catalogue row.
func Module() providers.Module {
	return providers.Module{ID: ID, Rows: []providers.Provider{row()}}
}

// row is the catalogue row:
// NVIDIA's hosted NIM catalogue; its errors are RFC 7807 problem documents.
func row() providers.Provider {
	return providers.Provider{
		ID: ID, Name: "NVIDIA NIM", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI,
		BaseURL: "https://integrate.api.nvidia.com/v1", Aliases: []string{"nim"},
		DefaultModels: []string{"meta/llama-3.3-70b-instruct", "nvidia/llama-3.1-nemotron-70b-instruct", "deepseek-ai/deepseek-r1", "qwen/qwen3-coder-480b-a35b-instruct", "moonshotai/kimi-k2-instruct", "openai/gpt-oss-120b"},
		Tools:         true, Vision: true, Reasoning: true,
	}
}
