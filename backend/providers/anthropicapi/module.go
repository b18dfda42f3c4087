package anthropicapi

import (
	_ "embed"

	"omniroute/backend/providers"
)

// ID is the Anthropic API's catalogue id.
const ID = "anthropic"

//go:embed prices.json
var prices []byte

// Module is what the gateway knows of the Anthropic API: its API prices.
func Module() providers.Module {
	return providers.Module{ID: ID, Prices: prices}
}
