package providers

import "testing"

// TestPrefillCapability: Anthropic Messages providers continue a trailing
// assistant message, OpenAI Chat ones do not, and a model can be excluded.
func TestPrefillCapability(t *testing.T) {
	c := NewCatalog()
	for id, want := range map[string]bool{"anthropic": true, "claude": true, "anthropic-compatible": true,
		"openai": false, "openai-compatible": false, "gemini": false} {
		p, ok := c.Lookup(id)
		if !ok {
			t.Fatalf("%s not in the catalogue", id)
		}
		if got := p.Prefills("any-model"); got != want {
			t.Errorf("%s prefills = %v, want %v", id, got, want)
		}
	}
	p := Provider{AssistantPrefill: true, NoPrefillModels: []string{"claude-x-"}}
	if p.Prefills("claude-x-1") || !p.Prefills("claude-y-1") {
		t.Error("NoPrefillModels not honoured")
	}
}
