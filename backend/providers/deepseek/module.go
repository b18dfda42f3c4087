package deepseek

import (
	_ "embed"

	"omniroute/backend/providers"
)

// ID is DeepSeek's catalogue id.
const ID = "deepseek"

//go:embed prices.json
var prices []byte

// Module is what the gateway knows of DeepSeek: its API prices.
func Module() providers.Module {
	return providers.Module{ID: ID, Prices: prices}
}
