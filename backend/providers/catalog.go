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
	// RuleFullText lets provider error rules match text markers against the
	// whole error text (e.g. agentrouter's Chinese quota wording); other
	// providers' rules see only the structured error code and type.
	RuleFullText bool
	// HonorsRuleScope makes a provider error rule's declared scope act (model
	// lock, connection cooldown, provider breaker) instead of being a label.
	HonorsRuleScope bool
	// EgressBucketed marks an upstream that rate-limits per client IP rather
	// than per account (opencode's free tier): a quota or rate-limit 429 cools
	// every flagged connection that last left from the same egress IP.
	EgressBucketed bool
}

// Catalog is the immutable provider list.
type Catalog struct {
	byID map[string]Provider
	list []Provider
}

// NewCatalog returns the built-in catalogue.
func NewCatalog() *Catalog {
	list := []Provider{
		{ID: "openai", Name: "OpenAI", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://api.openai.com/v1", Aliases: []string{"oai"}},
		{ID: "anthropic", Name: "Anthropic", Category: CategoryAPIKey, Format: FormatAnthropic, BaseURL: "https://api.anthropic.com/v1", Aliases: []string{"claude-api"}},
		{ID: "claude", Name: "Claude (subscription OAuth)", Category: CategoryOAuth, Format: FormatAnthropic, BaseURL: "https://api.anthropic.com/v1", Aliases: []string{"cc"}},
		{ID: "codex", Name: "OpenAI Codex (ChatGPT OAuth)", Category: CategoryOAuth, Format: FormatOpenAI, BaseURL: "https://chatgpt.com/backend-api/codex", Aliases: []string{"cx"}},
		{ID: "gemini", Name: "Google Gemini", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://generativelanguage.googleapis.com/v1beta/openai", Aliases: []string{"google"}},
		{ID: "openrouter", Name: "OpenRouter", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://openrouter.ai/api/v1", Aliases: []string{"or"},
			ExtraHeaders: map[string]string{"HTTP-Referer": "https://omniroute.local", "X-Title": "OmniRoute"}},
		{ID: "glm", Name: "Z.ai GLM", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://api.z.ai/api/paas/v4", Aliases: []string{"zai", "zhipu"},
			HonorsRuleScope: true},
		{ID: "deepseek", Name: "DeepSeek", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://api.deepseek.com/v1", Aliases: []string{"ds"}},
		{ID: "groq", Name: "Groq", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://api.groq.com/openai/v1"},
		{ID: "minimax", Name: "MiniMax", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://api.minimax.io/v1"},
		{ID: "agentrouter", Name: "AgentRouter", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://agentrouter.org/v1",
			RuleFullText: true, HonorsRuleScope: true},
		{ID: "opencode", Name: "OpenCode Zen", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://opencode.ai/zen/v1",
			RuleFullText: true, EgressBucketed: true},
		{ID: "ollama-local", Name: "Ollama (local)", Category: CategoryLocal, Format: FormatOpenAI, BaseURL: "http://127.0.0.1:11434/v1", Aliases: []string{"ollama"}},
		{ID: "lm-studio", Name: "LM Studio (local)", Category: CategoryLocal, Format: FormatOpenAI, BaseURL: "http://127.0.0.1:1234/v1", Aliases: []string{"lmstudio"}},
		{ID: "openai-compatible", Name: "OpenAI-compatible endpoint", Category: CategoryAPIKey, Format: FormatOpenAI, UserDefined: true},
		{ID: "anthropic-compatible", Name: "Anthropic-compatible endpoint", Category: CategoryAPIKey, Format: FormatAnthropic, UserDefined: true},
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
}

// Executor sends a call to a target in the target's wire format. The response body
// is the caller's to close. Headers are built from scratch: client headers never pass.
type Executor interface {
	Do(ctx context.Context, t Target, c Call) (*http.Response, error)
}
