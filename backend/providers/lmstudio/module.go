// Package lmstudio is the provider folder of LM Studio (local) (catalogue id
// `lm-studio`): its catalogue row.
package lmstudio

import (
	"omniroute/backend/providers"
)

// ID is LM Studio (local)'s catalogue id.
const ID = "lm-studio"

// Module is what the gateway knows of LM Studio (local): its catalogue row.
func Module() providers.Module {
	return providers.Module{ID: ID, Rows: []providers.Provider{row()}}
}

// row is the catalogue row.
func row() providers.Provider {
	return providers.Provider{
		ID: ID, Name: "LM Studio (local)", Category: providers.CategoryLocal, Format: providers.FormatOpenAI,
		BaseURL: "http://127.0.0.1:1234/v1", Aliases: []string{"lmstudio"}, Tools: true, Vision: true, Reasoning: true,
	}
}
