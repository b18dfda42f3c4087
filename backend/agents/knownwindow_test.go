package agents

import "testing"

// TestKnownWindow: windows by name prefix, any case, after a provider path;
// Claude names and unknown names have none.
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
		if got := KnownWindow(tt.model); got != tt.want {
			t.Errorf("KnownWindow(%q) = %d, want %d", tt.model, got, tt.want)
		}
	}
}
