package registry_test

import (
	"testing"

	"omniroute/backend/providers/registry"
)

// TestQuotaFamilies: the catalogue's quota families, declared by the rows
// and modules, as the model lockout stores its quota_family locks: every
// gpt-5* of OpenAI and Codex in one, Gemini's release suffixes stripped,
// Claude's and Anthropic's tiers, GLM's versions; any other model its own.
func TestQuotaFamilies(t *testing.T) {
	cat := registry.Catalog(nil)
	tests := []struct {
		provider, model, want string
	}{
		// codex / openai: every gpt-5* shares one family.
		{"codex", "gpt-5", "gpt-5"},
		{"codex", "gpt-5.1", "gpt-5"},
		{"codex", "gpt-5.1-codex", "gpt-5"},
		{"codex", "gpt-5-codex-mini", "gpt-5"},
		{"codex", "gpt-5.6-luna", "gpt-5"},
		{"codex", "gpt-5-mini", "gpt-5"},
		{"cx", "gpt-5.2", "gpt-5"},
		{"Codex", "GPT-5.1-Codex", "gpt-5"},
		{"openai", "gpt-5-nano", "gpt-5"},
		{"oai", "gpt-5", "gpt-5"},
		{"codex", "gpt-4o", "gpt-4o"},
		{"openai", "gpt-4.1-mini", "gpt-4.1-mini"},
		{"openai", "o3", "o3"},
		// gemini: release suffixes stripped.
		{"gemini", "gemini-2.5-pro-preview-05-06", "gemini-2.5-pro"},
		{"gemini", "gemini-2.5-pro", "gemini-2.5-pro"},
		{"gemini", "gemini-2.5-flash-preview-04-17", "gemini-2.5-flash"},
		{"gemini", "gemini-2.5-flash-lite-preview-06-17", "gemini-2.5-flash-lite"},
		{"gemini", "gemini-1.5-flash-latest", "gemini-1.5-flash"},
		{"gemini", "gemini-1.5-pro-002", "gemini-1.5-pro"},
		{"gemini", "gemini-2.0-flash-exp", "gemini-2.0-flash"},
		{"gemini", "gemini-1.5-pro-exp-0827", "gemini-1.5-pro"},
		{"gemini", "gemini-2.0-flash-thinking-exp-01-21", "gemini-2.0-flash-thinking"},
		{"gemini", "gemini-3-pro-preview", "gemini-3-pro"},
		{"gemini", "gemini-exp-1206", "gemini-exp"},
		{"google", "gemini-2.5-pro-preview-06-05", "gemini-2.5-pro"},
		{"gemini", "text-embedding-004", "text-embedding-004"},
		{"gemini", "gemini-2.5-pro-preview-tts", "gemini-2.5-pro-preview-tts"},
		// claude / anthropic: tiers.
		{"claude", "claude-opus-4-1", "claude-opus"},
		{"claude", "claude-opus-4-1-20250805", "claude-opus"},
		{"anthropic", "claude-sonnet-4-5", "claude-sonnet"},
		{"anthropic", "claude-sonnet-4-20250514", "claude-sonnet"},
		{"anthropic", "claude-3-5-sonnet-20241022", "claude-sonnet"},
		{"anthropic", "claude-3-opus-20240229", "claude-opus"},
		{"claude", "claude-haiku-4-5", "claude-haiku"},
		{"claude-api", "claude-3-5-haiku-latest", "claude-haiku"},
		{"anthropic", "claude-instant-1.2", "claude-instant-1.2"},
		// glm.
		{"glm", "glm-4.5", "glm-4.5"},
		{"glm", "glm-4.5-air", "glm-4.5"},
		{"glm", "glm-4.5-flash", "glm-4.5"},
		{"glm", "glm-4.6", "glm-4.6"},
		{"zai", "glm-4.6-turbo", "glm-4.6"},
		{"glm", "glm-4-plus", "glm-4-plus"},
		// unknown provider or model: the model itself.
		{"deepseek", "deepseek-chat", "deepseek-chat"},
		{"openrouter", "openai/gpt-5", "openai/gpt-5"},
		{"openrouter", "gpt-5-mini", "gpt-5-mini"},
		{"ollama-local", "Llama3:8B", "Llama3:8B"},
		{"", "gpt-5", "gpt-5"},
		{"codex", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.provider+"/"+tt.model, func(t *testing.T) {
			if got := cat.QuotaFamily(tt.provider, tt.model); got != tt.want {
				t.Fatalf("QuotaFamily(%q, %q) = %q, want %q", tt.provider, tt.model, got, tt.want)
			}
		})
	}
}
