// Package providers is the catalogue of known upstream providers (category,
// default base URL, wire format) and the executor contract each wire format implements.
package providers

import (
	"context"
	"net/http"
	"sort"
	"strings"
)

// Category decides breaker and cooldown profiles.
type Category string

// Provider categories, as the resilience guide names them.
const (
	CategoryOAuth  Category = "oauth"
	CategoryAPIKey Category = "apikey"
	CategoryLocal  Category = "local"
)

// Format is an upstream wire format.
type Format string

// Wire formats.
const (
	FormatOpenAI    Format = "openai"
	FormatAnthropic Format = "anthropic"
	FormatGemini    Format = "gemini"
)

// Provider describes one catalogue entry.
type Provider struct {
	ID       string
	Name     string
	Category Category
	Format   Format
	BaseURL  string
	// UserDefined providers require a baseUrl per connection and count as their own
	// provider per endpoint for the breaker and health.
	UserDefined bool
	Aliases     []string
	// ExtraHeaders are static headers this provider expects.
	ExtraHeaders map[string]string
	// DefaultModels stand in for a connection's discovered models when its
	// upstream's GET /models cannot be read (OAuth backends without a models
	// route, a key without list permission, an upstream that is down).
	DefaultModels []string
	// AssistantPrefill: the provider continues a trailing assistant message
	// (Anthropic Messages does), so it can finish a broken stream from the
	// text already delivered. OpenAI Chat answers a new turn instead.
	AssistantPrefill bool
	// NoPrefillModels lists model name prefixes of a prefill-capable provider
	// that refuse a trailing assistant message (none known today).
	NoPrefillModels []string
}

// Prefills reports whether model on this provider continues a trailing
// assistant message: the provider's capability, minus its NoPrefillModels.
func (p Provider) Prefills(model string) bool {
	if !p.AssistantPrefill {
		return false
	}
	for _, prefix := range p.NoPrefillModels {
		if strings.HasPrefix(model, prefix) {
			return false
		}
	}
	return true
}

// Catalog is the immutable provider list.
type Catalog struct {
	byID map[string]Provider
	list []Provider
}

// NewCatalog returns the built-in catalogue.
func NewCatalog() *Catalog {
	anthropicModels := []string{"claude-opus-4-5", "claude-opus-4-1", "claude-sonnet-4-5", "claude-sonnet-4", "claude-haiku-4-5", "claude-3-5-haiku-latest"}
	list := []Provider{
		{ID: "openai", Name: "OpenAI", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://api.openai.com/v1", Aliases: []string{"oai"}, DefaultModels: []string{"gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-4.1", "gpt-4.1-mini", "gpt-4o", "gpt-4o-mini"}},
		{ID: "anthropic", Name: "Anthropic", Category: CategoryAPIKey, Format: FormatAnthropic, BaseURL: "https://api.anthropic.com/v1", Aliases: []string{"claude-api"}, DefaultModels: anthropicModels,
			AssistantPrefill: true},
		{ID: "claude", Name: "Claude (subscription OAuth)", Category: CategoryOAuth, Format: FormatAnthropic, BaseURL: "https://api.anthropic.com/v1", Aliases: []string{"cc"}, DefaultModels: anthropicModels,
			AssistantPrefill: true},
		{ID: "codex", Name: "OpenAI Codex (ChatGPT OAuth)", Category: CategoryOAuth, Format: FormatOpenAI, BaseURL: "https://chatgpt.com/backend-api/codex", Aliases: []string{"cx"}, DefaultModels: []string{"gpt-5-codex", "gpt-5.1-codex", "gpt-5.1-codex-max", "gpt-5.1-codex-mini", "gpt-5.2-codex", "gpt-5.2", "gpt-5.1", "gpt-5"}},
		{ID: "gemini", Name: "Google Gemini", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://generativelanguage.googleapis.com/v1beta/openai", Aliases: []string{"google"}, DefaultModels: []string{"gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite"}},
		{ID: "openrouter", Name: "OpenRouter", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://openrouter.ai/api/v1", Aliases: []string{"or"},
			ExtraHeaders: map[string]string{"HTTP-Referer": "https://omniroute.local", "X-Title": "OmniRoute"}},
		{ID: "glm", Name: "Z.ai GLM", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://api.z.ai/api/paas/v4", Aliases: []string{"zai", "zhipu"}, DefaultModels: []string{"glm-4.6", "glm-4.5", "glm-4.5-air", "glm-4.5-flash"}},
		{ID: "deepseek", Name: "DeepSeek", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://api.deepseek.com/v1", Aliases: []string{"ds"}, DefaultModels: []string{"deepseek-chat", "deepseek-reasoner"}},
		{ID: "groq", Name: "Groq", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://api.groq.com/openai/v1", DefaultModels: []string{"llama-3.3-70b-versatile", "llama-3.1-8b-instant"}},
		{ID: "minimax", Name: "MiniMax", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://api.minimax.io/v1", DefaultModels: []string{"MiniMax-M2"}},
		{ID: "agentrouter", Name: "AgentRouter", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://agentrouter.org/v1"},
		{ID: "opencode", Name: "OpenCode Zen", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://opencode.ai/zen/v1"},
		{ID: "ollama-local", Name: "Ollama (local)", Category: CategoryLocal, Format: FormatOpenAI, BaseURL: "http://127.0.0.1:11434/v1", Aliases: []string{"ollama"}},
		{ID: "lm-studio", Name: "LM Studio (local)", Category: CategoryLocal, Format: FormatOpenAI, BaseURL: "http://127.0.0.1:1234/v1", Aliases: []string{"lmstudio"}},
		{ID: "openai-compatible", Name: "OpenAI-compatible endpoint", Category: CategoryAPIKey, Format: FormatOpenAI, UserDefined: true},
		{ID: "anthropic-compatible", Name: "Anthropic-compatible endpoint", Category: CategoryAPIKey, Format: FormatAnthropic, UserDefined: true,
			AssistantPrefill: true},
	}
	c := &Catalog{byID: map[string]Provider{}, list: list}
	for _, p := range list {
		c.byID[p.ID] = p
		for _, a := range p.Aliases {
			c.byID[a] = p
		}
	}
	return c
}

// Lookup finds a provider by id or alias (case-insensitive).
func (c *Catalog) Lookup(idOrAlias string) (Provider, bool) {
	p, ok := c.byID[strings.ToLower(idOrAlias)]
	return p, ok
}

// All lists the catalogue sorted by id.
func (c *Catalog) All() []Provider {
	out := append([]Provider(nil), c.list...)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Target is one resolved upstream to call: a connection's endpoint and credential.
type Target struct {
	Provider Provider
	BaseURL  string
	// Secret is the decrypted API key or access token; never logged.
	Secret   string
	AuthType string
	// Model is the upstream model name sent in the request.
	Model string
}

// Call is one upstream request, already in the target's wire format.
type Call struct {
	Body   []byte
	Stream bool
	// Anthropic carries the Anthropic protocol headers of an Anthropic client
	// whose body passes through to an Anthropic upstream unchanged; zero
	// otherwise. They are the only client headers that ever reach an upstream.
	Anthropic AnthropicHeaders
}

// AnthropicHeaders are the Anthropic protocol headers a Messages client sent:
// the body fields it uses (mid-conversation system messages,
// context_management, output_config, adaptive thinking, …) are only valid with
// the betas it announced, so a passthrough must forward them.
type AnthropicHeaders struct {
	// Version is the client's anthropic-version ("" for none).
	Version string
	// Betas are the client's anthropic-beta values, one per element.
	Betas []string
}

// Executor sends a call to a target in the target's wire format. The response body
// is the caller's to close. Headers are built from scratch: client headers never
// pass, except the Anthropic protocol headers of Call.Anthropic.
type Executor interface {
	Do(ctx context.Context, t Target, c Call) (*http.Response, error)
}
