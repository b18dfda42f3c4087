package geminiapi

import (
	_ "embed"

	"omniroute/backend/providers"
)

// ID is the Gemini API's catalogue id.
const ID = "gemini"

//go:embed prices.json
var prices []byte

// Module is what the gateway knows of the Gemini API: its API prices.
func Module() providers.Module {
	return providers.Module{ID: ID, Prices: prices}
}
