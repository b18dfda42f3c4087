package openaiapi

import (
	_ "embed"

	"omniroute/backend/providers"
)

// ID is the OpenAI API's catalogue id.
const ID = "openai"

//go:embed prices.json
var prices []byte

// Module is what the gateway knows of the OpenAI API: its API prices.
func Module() providers.Module {
	return providers.Module{ID: ID, Prices: prices}
}
