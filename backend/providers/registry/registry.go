// Package registry is the one list of provider modules: the only Go file
// outside backend/providers/<name>/ that names a moved provider. The wiring
// place builds its catalogue from it (Catalog), so adding a provider is its
// folder plus one line here.
package registry

import (
	"omniroute/backend/providers"
	"omniroute/backend/providers/anthropicapi"
	"omniroute/backend/providers/azure"
	"omniroute/backend/providers/bedrock"
	"omniroute/backend/providers/claude"
	"omniroute/backend/providers/codeassist"
	"omniroute/backend/providers/codex"
	"omniroute/backend/providers/copilot"
	"omniroute/backend/providers/deepseek"
	"omniroute/backend/providers/geminiapi"
	"omniroute/backend/providers/glm"
	"omniroute/backend/providers/ollama"
	"omniroute/backend/providers/openaiapi"
	"omniroute/backend/providers/vertex"
)

// Modules lists every provider folder's module (a fresh slice per call).
func Modules() []providers.Module {
	return []providers.Module{
		anthropicapi.Module(),
		azure.Module(),
		bedrock.Module(),
		claude.Module(),
		codeassist.Module(),
		codex.Module(),
		copilot.Module(),
		deepseek.Module(),
		geminiapi.Module(),
		glm.Module(),
		ollama.Module(),
		openaiapi.Module(),
		vertex.Module(),
	}
}

// Catalog is the built-in catalogue, its OAuth endpoints overridden by
// getenv (providers.NewCatalogEnv), with every module attached.
func Catalog(getenv func(string) string) *providers.Catalog {
	return providers.NewCatalogEnv(getenv).WithModules(Modules()...)
}
