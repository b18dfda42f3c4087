// Package providers is the catalogue of known upstream providers (category,
// default base URL, wire format) and the executor contract each wire format implements.
package providers

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"time"
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
	// FormatResponses is the OpenAI Responses API (the ChatGPT Codex backend).
	FormatResponses Format = "responses"
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
	// OAuth is how this provider's OAuth tokens are refreshed (nil: API keys only).
	OAuth *OAuth
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

// OAuth is a provider's token endpoint and public client id: the ones the
// provider's own CLI uses, so tokens imported from that CLI refresh as it would.
// Every value can be pointed elsewhere by environment (see WithEnv).
type OAuth struct {
	// TokenURL receives the refresh_token grant.
	TokenURL string
	// ClientID is the CLI's public client id.
	ClientID string
	// ClientSecret is sent when the provider's installed-app client needs one (empty: none).
	ClientSecret string
	// Form posts the grant as application/x-www-form-urlencoded instead of JSON.
	Form bool
	// Scope is sent with the refresh grant when set.
	Scope string
	// ImportSource is the `omniroute import` source that reads this provider's CLI login.
	ImportSource string
	// Models are the bare model names an imported connection serves at first
	// (the names the provider's own CLI sends), so the CLI works through the
	// gateway without renaming; the user edits the list like any connection's.
	Models []string
}

// Catalog is the immutable provider list.
type Catalog struct {
	byID map[string]Provider
	list []Provider
}

// NewCatalog returns the built-in catalogue.
func NewCatalog() *Catalog { return NewCatalogEnv(nil) }

// NewCatalogEnv returns the built-in catalogue with the OAuth endpoints
// overridden by getenv (nil: none): OMNIROUTE_<PROVIDER>_OAUTH_TOKEN_URL,
// _OAUTH_CLIENT_ID and _OAUTH_CLIENT_SECRET, where <PROVIDER> is the id in
// upper case with '-' as '_' (OMNIROUTE_CLAUDE_OAUTH_TOKEN_URL,
// OMNIROUTE_GEMINI_CLI_OAUTH_CLIENT_SECRET). Tests point them at fakes.
func NewCatalogEnv(getenv func(string) string) *Catalog {
	anthropicModels := []string{"claude-opus-4-5", "claude-opus-4-1", "claude-sonnet-4-5", "claude-sonnet-4", "claude-haiku-4-5", "claude-3-5-haiku-latest"}
	list := []Provider{
		{ID: "openai", Name: "OpenAI", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://api.openai.com/v1", Aliases: []string{"oai"}, DefaultModels: []string{"gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-4.1", "gpt-4.1-mini", "gpt-4o", "gpt-4o-mini"}},
		{ID: "anthropic", Name: "Anthropic", Category: CategoryAPIKey, Format: FormatAnthropic, BaseURL: "https://api.anthropic.com/v1", Aliases: []string{"claude-api"}, DefaultModels: anthropicModels,
			AssistantPrefill: true},
		{ID: "claude", Name: "Claude (subscription OAuth)", Category: CategoryOAuth, Format: FormatAnthropic, BaseURL: "https://api.anthropic.com/v1", Aliases: []string{"cc"}, DefaultModels: anthropicModels, AssistantPrefill: true,
			OAuth: &OAuth{TokenURL: "https://console.anthropic.com/v1/oauth/token", ClientID: "9d1c250a-e61b-44d9-88ed-5944d1962f5e", ImportSource: "claude-code",
				Models: []string{"claude-opus-4-5", "claude-opus-4-5-20251101", "claude-sonnet-4-5", "claude-sonnet-4-5-20250929",
					"claude-haiku-4-5", "claude-haiku-4-5-20251001", "claude-opus-4-1", "claude-opus-4-1-20250805"}}},
		{ID: "codex", Name: "OpenAI Codex (ChatGPT OAuth)", Category: CategoryOAuth, Format: FormatResponses, BaseURL: "https://chatgpt.com/backend-api/codex", Aliases: []string{"cx"},
			DefaultModels: []string{"gpt-5-codex", "gpt-5.1-codex", "gpt-5.1-codex-max", "gpt-5.1-codex-mini", "gpt-5.2-codex", "gpt-5.2", "gpt-5.1", "gpt-5"},
			OAuth: &OAuth{TokenURL: "https://auth.openai.com/oauth/token", ClientID: "app_EMoamEEZ73f0CkXaXp7hrann", Scope: "openid profile email", ImportSource: "codex",
				Models: []string{"gpt-5-codex", "gpt-5.1-codex", "gpt-5.1-codex-max", "gpt-5.1-codex-mini", "gpt-5", "gpt-5.1"}}},
		{ID: "gemini-cli", Name: "Gemini CLI (Google OAuth)", Category: CategoryOAuth, Format: FormatOpenAI, BaseURL: "https://generativelanguage.googleapis.com/v1beta/openai",
			DefaultModels: []string{"gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite"},
			OAuth:         &OAuth{TokenURL: "https://oauth2.googleapis.com/token", ClientID: "681255809395-oo8ft2oprdrnp9e3aqf6av3hmdib135j.apps.googleusercontent.com", Form: true, ImportSource: "gemini-cli"}},
		{ID: "gemini", Name: "Google Gemini", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://generativelanguage.googleapis.com/v1beta/openai", Aliases: []string{"google"}, DefaultModels: []string{"gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite"}},
		{ID: "openrouter", Name: "OpenRouter", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://openrouter.ai/api/v1", Aliases: []string{"or"},
			ExtraHeaders: map[string]string{"HTTP-Referer": "https://omniroute.local", "X-Title": "OmniRoute"}},
		{ID: "glm", Name: "Z.ai GLM", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://api.z.ai/api/paas/v4", Aliases: []string{"zai", "zhipu"}, DefaultModels: []string{"glm-4.6", "glm-4.5", "glm-4.5-air", "glm-4.5-flash"},
			HonorsRuleScope: true},
		{ID: "deepseek", Name: "DeepSeek", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://api.deepseek.com/v1", Aliases: []string{"ds"}, DefaultModels: []string{"deepseek-chat", "deepseek-reasoner"}},
		{ID: "groq", Name: "Groq", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://api.groq.com/openai/v1", DefaultModels: []string{"llama-3.3-70b-versatile", "llama-3.1-8b-instant"}},
		{ID: "minimax", Name: "MiniMax", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://api.minimax.io/v1", DefaultModels: []string{"MiniMax-M2"}},
		{ID: "agentrouter", Name: "AgentRouter", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://agentrouter.org/v1",
			RuleFullText: true, HonorsRuleScope: true},
		{ID: "opencode", Name: "OpenCode Zen", Category: CategoryAPIKey, Format: FormatOpenAI, BaseURL: "https://opencode.ai/zen/v1",
			RuleFullText: true, EgressBucketed: true},
		{ID: "ollama-local", Name: "Ollama (local)", Category: CategoryLocal, Format: FormatOpenAI, BaseURL: "http://127.0.0.1:11434/v1", Aliases: []string{"ollama"}},
		{ID: "lm-studio", Name: "LM Studio (local)", Category: CategoryLocal, Format: FormatOpenAI, BaseURL: "http://127.0.0.1:1234/v1", Aliases: []string{"lmstudio"}},
		{ID: "openai-compatible", Name: "OpenAI-compatible endpoint", Category: CategoryAPIKey, Format: FormatOpenAI, UserDefined: true},
		{ID: "anthropic-compatible", Name: "Anthropic-compatible endpoint", Category: CategoryAPIKey, Format: FormatAnthropic, UserDefined: true,
			AssistantPrefill: true},
	}
	if getenv != nil {
		for i, p := range list {
			if p.OAuth == nil {
				continue
			}
			o := *p.OAuth
			prefix := "OMNIROUTE_" + strings.ToUpper(strings.ReplaceAll(p.ID, "-", "_")) + "_OAUTH_"
			if v := strings.TrimSpace(getenv(prefix + "TOKEN_URL")); v != "" {
				o.TokenURL = v
			}
			if v := strings.TrimSpace(getenv(prefix + "CLIENT_ID")); v != "" {
				o.ClientID = v
			}
			if v := strings.TrimSpace(getenv(prefix + "CLIENT_SECRET")); v != "" {
				o.ClientSecret = v
			}
			list[i].OAuth = &o
		}
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

// BySource finds the provider whose CLI login `omniroute import <source>` reads.
func (c *Catalog) BySource(source string) (Provider, bool) {
	for _, p := range c.list {
		if p.OAuth != nil && p.OAuth.ImportSource == source {
			return p, true
		}
	}
	return Provider{}, false
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
	// ConnectionID names the connection (per-connection state such as the usage wall).
	ConnectionID string
	// Account is the subscription account's identity and opt-ins (OAuth connections).
	Account Account
}

// Account is what a subscription connection's providerSpecificData says about
// its account: ids some upstreams require as headers, and per-connection opt-ins.
type Account struct {
	// ID is the account id (Codex: the chatgpt-account-id header).
	ID string
	// OrganizationUUID is the Claude organisation (the limit reset claim).
	OrganizationUUID string
	// LowPriorityMode opts a Claude connection into the low-priority lane at the usage wall.
	LowPriorityMode bool
	// AutoLimitReset opts a Claude connection into claiming the weekly limit reset at the wall.
	AutoLimitReset bool
}

// Call is one upstream request, already in the target's wire format.
type Call struct {
	// Header holds extra upstream headers (e.g. the usage wall's
	// anthropic-usage-limit); nil for none.
	Header http.Header
	// FirstByteDeadline is when the gateway gives up waiting for the first byte
	// (zero: unknown); executors that wait and retry inside one call stay within it.
	FirstByteDeadline time.Time

	Body   []byte
	Stream bool
	// Path is the endpoint under the base URL for an OpenAI-compatible
	// upstream ("/embeddings", "/completions"); "" is the executor's own
	// (chat). Executors of other wires never get one.
	Path string
	// Anthropic carries the Anthropic protocol headers of an Anthropic client
	// whose body passes through to an Anthropic upstream unchanged; zero
	// otherwise. They are the only client headers that ever reach an upstream.
	Anthropic AnthropicHeaders
	// Storage, when set, holds the first upstream request built for the
	// call (nil: each request allocates its own).
	Storage *CallStorage
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
	Do(ctx context.Context, t *Target, c Call) (*http.Response, error)
}
