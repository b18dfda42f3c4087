package api

import "testing"

func TestKnownWindow(t *testing.T) {
	tests := []struct {
		model string
		want  int
	}{
		{"glm-4.6", 200000},
		{"GLM-4.5-Air", 131072},
		{"openrouter/z-ai/glm-4.6", 200000},
		{"gpt-5.1-codex", 400000},
		{"gemini-2.5-pro", 1048576},
		{"kimi-k2-0905", 262144},
		{"claude-sonnet-5-0", 0}, // Claude Code knows its own models
		{"mystery", 0},
		{"", 0},
	}
	for _, tt := range tests {
		if got := knownWindow(tt.model); got != tt.want {
			t.Errorf("knownWindow(%q) = %d, want %d", tt.model, got, tt.want)
		}
	}
}
