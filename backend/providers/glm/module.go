package glm

import (
	_ "embed"

	"omniroute/backend/providers"
)

// ID is Z.ai GLM's catalogue id.
const ID = "glm"

//go:embed prices.json
var prices []byte

// Module is what the gateway knows of Z.ai GLM: its API prices.
func Module() providers.Module {
	return providers.Module{ID: ID, Prices: prices}
}
