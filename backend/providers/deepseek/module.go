// Package deepseek is the provider folder of DeepSeek (catalogue id
// `deepseek`): its catalogue row and its API prices.
package deepseek

import (
	_ "embed"

	"omniroute/backend/providers"
)

// ID is DeepSeek's catalogue id.
const ID = "deepseek"

// prices are DeepSeek's API prices (Module.Prices).
//
//go:embed prices.json
var prices []byte

// Module is what the gateway knows of DeepSeek: its catalogue row and its
// API prices.
func Module() providers.Module {
	return providers.Module{ID: ID, Rows: []providers.Provider{row()}, Prices: prices}
}

// row is the catalogue row.
func row() providers.Provider {
	return providers.Provider{
		ID: ID, Name: "DeepSeek", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI,
		BaseURL: "https://api.deepseek.com/v1", Aliases: []string{"ds"},
		DefaultModels: []string{"deepseek-chat", "deepseek-reasoner"}, Tools: true, Reasoning: true, ReasoningReplay: providers.ReplayReasoningContent,
	}
}
