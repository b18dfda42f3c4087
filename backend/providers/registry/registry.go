// Package registry is the one list of provider modules: the only Go file
// outside backend/providers/<name>/ that names a provider (every catalogue
// row is a folder's). The wiring place builds its catalogue from it
// (Catalog), so adding a provider is its folder plus one line here.
package registry

import (
	"omniroute/backend/providers"
	"omniroute/backend/providers/agentrouter"
	"omniroute/backend/providers/anthropicapi"
	"omniroute/backend/providers/anthropiccompatible"
	"omniroute/backend/providers/azure"
	"omniroute/backend/providers/bedrock"
	"omniroute/backend/providers/cerebras"
	"omniroute/backend/providers/claude"
	"omniroute/backend/providers/codeassist"
	"omniroute/backend/providers/codex"
	"omniroute/backend/providers/copilot"
	"omniroute/backend/providers/dashscope"
	"omniroute/backend/providers/deepseek"
	"omniroute/backend/providers/fireworks"
	"omniroute/backend/providers/geminiapi"
	"omniroute/backend/providers/glm"
	"omniroute/backend/providers/groq"
	"omniroute/backend/providers/lmstudio"
	"omniroute/backend/providers/minimax"
	"omniroute/backend/providers/mistral"
	"omniroute/backend/providers/moonshot"
	"omniroute/backend/providers/nebius"
	"omniroute/backend/providers/nvidia"
	"omniroute/backend/providers/ollama"
	"omniroute/backend/providers/ollamalocal"
	"omniroute/backend/providers/openaiapi"
	"omniroute/backend/providers/openaicompatible"
	"omniroute/backend/providers/opencode"
	"omniroute/backend/providers/openrouter"
	"omniroute/backend/providers/perplexity"
	"omniroute/backend/providers/sambanova"
	"omniroute/backend/providers/together"
	"omniroute/backend/providers/vertex"
	"omniroute/backend/providers/xai"
)

// Modules lists every provider folder's module (a fresh slice per call).
func Modules() []providers.Module {
	return []providers.Module{
		agentrouter.Module(),
		anthropicapi.Module(),
		anthropiccompatible.Module(),
		azure.Module(),
		bedrock.Module(),
		cerebras.Module(),
		claude.Module(),
		codeassist.Module(),
		codex.Module(),
		copilot.Module(),
		dashscope.Module(),
		deepseek.Module(),
		fireworks.Module(),
		geminiapi.Module(),
		glm.Module(),
		groq.Module(),
		lmstudio.Module(),
		minimax.Module(),
		mistral.Module(),
		moonshot.Module(),
		nebius.Module(),
		nvidia.Module(),
		ollama.Module(),
		ollamalocal.Module(),
		openaiapi.Module(),
		openaicompatible.Module(),
		opencode.Module(),
		openrouter.Module(),
		perplexity.Module(),
		sambanova.Module(),
		together.Module(),
		vertex.Module(),
		xai.Module(),
	}
}

// Catalog is the built-in catalogue, its OAuth endpoints overridden by
// getenv (providers.NewCatalogEnv), with every module attached.
func Catalog(getenv func(string) string) *providers.Catalog {
	return providers.NewCatalogEnv(getenv).WithModules(Modules()...)
}
