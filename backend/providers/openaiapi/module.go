// Package openaiapi is the provider folder of OpenAI (catalogue id
// `openai`): its catalogue row and its API prices.
package openaiapi

import (
	_ "embed"

	"omniroute/backend/providers"
)

// ID is OpenAI's catalogue id.
const ID = "openai"

// prices are OpenAI's API prices (Module.Prices).
//
//go:embed prices.json
var prices []byte

// Module is what the gateway knows of OpenAI: its catalogue row and its API
// prices.
func Module() providers.Module {
	return providers.Module{ID: ID, Rows: []providers.Provider{row()}, Prices: prices}
}

// row is the catalogue row.
func row() providers.Provider {
	return providers.Provider{
		ID: ID, VendorHome: true, Name: "OpenAI", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI,
		BaseURL: "https://api.openai.com/v1", Aliases: []string{"oai"},
		DefaultModels: []string{"gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-4.1", "gpt-4.1-mini", "gpt-4o", "gpt-4o-mini"},
		Tools:         true, Vision: true, Reasoning: true, QuotaFamily: providers.PrefixFamily("gpt-5"),
	}
}
