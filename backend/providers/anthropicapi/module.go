// Package anthropicapi is the provider folder of Anthropic (catalogue id
// `anthropic`): its catalogue row and its API prices.
package anthropicapi

import (
	_ "embed"

	"omniroute/backend/providers"
)

// ID is Anthropic's catalogue id.
const ID = "anthropic"

// prices are Anthropic's API prices (Module.Prices).
//
//go:embed prices.json
var prices []byte

// Module is what the gateway knows of Anthropic: its catalogue row and its
// API prices.
func Module() providers.Module {
	return providers.Module{ID: ID, Rows: []providers.Provider{row()}, Prices: prices}
}

// row is the catalogue row.
func row() providers.Provider {
	return providers.Provider{
		ID: ID, VendorHome: true, Name: "Anthropic", Category: providers.CategoryAPIKey, Format: providers.FormatAnthropic,
		BaseURL: "https://api.anthropic.com/v1", Aliases: []string{"claude-api"},
		DefaultModels:    []string{"claude-opus-4-5", "claude-opus-4-1", "claude-sonnet-4-5", "claude-sonnet-4", "claude-haiku-4-5", "claude-3-5-haiku-latest"},
		AssistantPrefill: true, Tools: true, Vision: true, Reasoning: true,
		QuotaFamily: providers.TierFamily("claude-", "opus", "sonnet", "haiku"),
	}
}
