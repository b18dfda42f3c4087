// Package geminiapi is the provider folder of Google Gemini (catalogue id
// `gemini`): its catalogue row and its API prices.
package geminiapi

import (
	_ "embed"

	"omniroute/backend/providers"
)

// ID is Google Gemini's catalogue id.
const ID = "gemini"

// prices are Google Gemini's API prices (Module.Prices).
//
//go:embed prices.json
var prices []byte

// Module is what the gateway knows of Google Gemini: its catalogue row and
// its API prices.
func Module() providers.Module {
	return providers.Module{ID: ID, Rows: []providers.Provider{row()}, Prices: prices}
}

// row is the catalogue row:
// The native Gemini API (generateContent, x-goog-api-key); a base URL stored
// for Google's OpenAI-compatible endpoint (…/v1beta/openai) still works: the
// executor drops the "/openai".
func row() providers.Provider {
	return providers.Provider{
		ID: ID, VendorHome: true, Name: "Google Gemini", Category: providers.CategoryAPIKey, Format: providers.FormatGemini,
		BaseURL: "https://generativelanguage.googleapis.com/v1beta", Aliases: []string{"google"},
		DefaultModels: []string{"gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite"}, Tools: true,
		Vision: true, Reasoning: true, QuotaFamily: providers.ReleaseFamily("gemini-"),
	}
}
