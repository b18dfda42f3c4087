package registry_test

import (
	"net/url"
	"strings"
	"testing"

	"omniroute/backend/providers"
	"omniroute/backend/providers/registry"
)

// TestPrefillCapability: Anthropic Messages providers continue a trailing
// assistant message, OpenAI Chat ones do not, and a model can be excluded.
func TestPrefillCapability(t *testing.T) {
	c := registry.Catalog(nil)
	for id, want := range map[string]bool{"anthropic": true, "anthropic-compatible": true,
		"openai": false, "openai-compatible": false, "gemini": false} {
		p, ok := c.Lookup(id)
		if !ok {
			t.Fatalf("%s not in the catalogue", id)
		}
		if got := p.Prefills("any-model"); got != want {
			t.Errorf("%s prefills = %v, want %v", id, got, want)
		}
	}
	p := providers.Provider{AssistantPrefill: true, NoPrefillModels: []string{"claude-x-"}}
	if p.Prefills("claude-x-1") || !p.Prefills("claude-y-1") {
		t.Error("NoPrefillModels not honoured")
	}
}

// familyIDs are the OpenAI-compatible vendors the catalogue names (issue 30).
var familyIDs = []string{"mistral", "xai", "together", "fireworks", "cerebras", "moonshot", "dashscope",
	"perplexity", "nebius", "sambanova", "nvidia", "glm"}

// TestCatalogueRows: every row has a unique id and aliases that clash with no
// other id, a known wire, and, unless user-defined, an https base URL
// (http only on loopback for local servers) and a default model list when
// it is an API-key vendor; the OpenAI-compatible family is all there.
func TestCatalogueRows(t *testing.T) {
	c := registry.Catalog(nil)
	seen := map[string]string{}
	for _, p := range c.All() {
		for _, name := range append([]string{p.ID}, p.Aliases...) {
			if other, dup := seen[name]; dup {
				t.Errorf("%q names both %s and %s", name, other, p.ID)
			}
			seen[name] = p.ID
			if name != strings.ToLower(name) || strings.TrimSpace(name) == "" {
				t.Errorf("%s: id or alias %q must be lower case", p.ID, name)
			}
		}
		switch p.Format {
		case providers.FormatOpenAI, providers.FormatAnthropic, providers.FormatGemini, providers.FormatResponses:
		default:
			t.Errorf("%s: unknown wire %q", p.ID, p.Format)
		}
		if p.Name == "" || p.Category == "" {
			t.Errorf("%s: no name or category", p.ID)
		}
		if p.UserDefined {
			if p.BaseURL != "" {
				t.Errorf("%s: user-defined with a base URL", p.ID)
			}
			continue
		}
		u, err := url.Parse(p.BaseURL)
		switch {
		case err != nil || u.Host == "":
			t.Errorf("%s: base URL %q", p.ID, p.BaseURL)
		case p.Category == providers.CategoryLocal:
			if u.Hostname() != "127.0.0.1" {
				t.Errorf("%s: a local server off loopback: %q", p.ID, p.BaseURL)
			}
		case u.Scheme != "https" || strings.HasSuffix(p.BaseURL, "/"):
			t.Errorf("%s: base URL %q must be https without a trailing slash", p.ID, p.BaseURL)
		}
		if p.Category == providers.CategoryAPIKey && p.ID != "openrouter" && p.ID != "agentrouter" && p.ID != "opencode" && p.Dialect == "" && len(p.DefaultModels) == 0 {
			t.Errorf("%s: no default models", p.ID)
		}
		if p.NoModelList && len(p.DefaultModels) == 0 {
			t.Errorf("%s: no model list route and no defaults: it could serve nothing", p.ID)
		}
		for _, m := range p.DefaultModels {
			if strings.TrimSpace(m) != m || m == "" || strings.ContainsAny(m, " \t") {
				t.Errorf("%s: default model %q", p.ID, m)
			}
		}
	}
	for _, id := range familyIDs {
		p, ok := c.Lookup(id)
		if !ok {
			t.Errorf("%s is not in the catalogue", id)
			continue
		}
		if p.Format != providers.FormatOpenAI || p.UserDefined || p.Category != providers.CategoryAPIKey || len(p.DefaultModels) == 0 {
			t.Errorf("%s: not an OpenAI-compatible API-key row with defaults: %+v", id, p)
		}
	}
}
