package agents

import "strings"

// knownWindows are the context windows (tokens) of model names agents are
// pointed at through the gateway, by lower-case name prefix, longest prefix
// first where two overlap. Claude names are absent: Claude Code knows them.
var knownWindows = [...]struct {
	prefix string
	tokens int
}{
	{"gpt-5", 400000},
	{"gpt-4.1", 1047576},
	{"gpt-4o", 128000},
	{"o4-mini", 200000},
	{"o3", 200000},
	{"gemini-2.5-", 1048576},
	{"gemini-3", 1048576},
	{"glm-4.5", 131072},
	{"glm-4.6", 200000},
	{"glm-4.7", 200000},
	{"kimi-k2", 262144},
	{"deepseek-", 131072},
	{"qwen3-coder", 262144},
	{"grok-4", 256000},
	{"minimax-m2", 204800},
}

// KnownWindow is the context window the catalogue above knows for a model
// name (its last path segment: "openrouter/z-ai/glm-4.6" is glm-4.6), 0 when
// unknown; Options.ContextWindow takes it.
func KnownWindow(model string) int {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	for _, k := range knownWindows {
		if strings.HasPrefix(m, k.prefix) {
			return k.tokens
		}
	}
	return 0
}
