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
	// PrefillOnlyModels, when set, narrows a prefill-capable provider to
	// the model ids containing one of these (e.g. "anthropic." on a cloud whose
	// prefill goes through InvokeModel; its other families do not prefill).
	PrefillOnlyModels []string
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
	// Tools, Vision and Reasoning say what the provider's chat wire carries
	// beyond text for at least some of its models (function calls, image
	// input, a reasoning channel or effort); docs/PROVIDERS.md lists them.
	Tools, Vision, Reasoning bool
	// NoModelList: the upstream has no model list route, so discovery does
	// not ask and the DefaultModels stand in (Perplexity).
	NoModelList bool
	// Dialect is a variant of the wire format's URLs and auth ("" : the
	// format's own), served by its module's executor.
	Dialect Dialect
	// ChatOnly: the provider's executor serves chat alone (its OpenAI
	// wire is a translation, with no /completions route), so a legacy
	// /v1/completions request reaches it translated through chat, as one
	// to a non-OpenAI wire does, instead of passed through.
	ChatOnly bool
	// NoEmbeddings: the provider's executor serves no embeddings, so an
	// embeddings request passes its targets over (FORMAT_NOT_SUPPORTED),
	// as a wire without embeddings is.
	NoEmbeddings bool
	// APIOf is the API provider a subscription stands in for ("" : none):
	// its API prices price the subscription's requests, and its models
	// count as that API's own (a family's default connection).
	APIOf string
	// VendorHome marks the model vendor's own API and the subscriptions to it:
	// an agent's default model name of that vendor's family (Claude Code's
	// claude-opus-…) goes to such a connection before any other serving it.
	VendorHome bool
	// ReasoningReplay is what the provider's OpenAI Chat wire takes back of
	// an assistant message's reasoning (ChatBody): none by default.
	ReasoningReplay Replay
	// SignedReplay, when set, is the provider's own way of taking back a
	// turn's signed reasoning (the pivot's thinking_blocks) on its Chat wire:
	// ChatBody runs it on a body carrying thinking_blocks before the
	// ReasoningReplay pass, and it removes the thinking_blocks it reads
	// (e.g. into a vendor's own reasoning members; docs/translation.md).
	SignedReplay func(body []byte) ([]byte, error)
	// ImageHeader is a header the OpenAI wire adds to a request that carries
	// image input (name, value), for an upstream that refuses images otherwise.
	ImageHeader [2]string
	// Doc is the provider's docs/PROVIDERS.md row where it differs from
	// what its format implies.
	Doc Doc
	// QuotaFamily names the quota family of a lower-cased model: the models
	// that share one account quota upstream, which a 429, 403 or 402 locks
	// together on the connection ("" or nil: the model is its own family).
	// Catalog.QuotaFamily asks it; PrefixFamily, TierFamily and
	// ReleaseFamily build the usual shapes.
	QuotaFamily func(model string) string
	// Module is the provider folder's module serving this row (nil: none;
	// set by Catalog.WithModules).
	Module *Module
}

// Doc is a provider's own words in docs/PROVIDERS.md ("" : derived from the
// format and flags).
type Doc struct {
	// Auth is how the credential is sent; Wire the upstream API spoken;
	// Discovery how a connection learns its models (the catalogue's
	// defaults are appended).
	Auth, Wire, Discovery string
}

// Dialect is a variant of a wire format's URL and credential layout.
type Dialect string

// Auth says how the provider's credential is sent, for docs/PROVIDERS.md.
func (p Provider) Auth() string {
	switch {
	case p.Doc.Auth != "":
		return p.Doc.Auth
	case p.Category == CategoryLocal:
		return "none (optional `Authorization: Bearer`)"
	case p.OAuth != nil && p.Format == FormatAnthropic:
		return "OAuth `Authorization: Bearer` + `anthropic-beta`"
	case p.OAuth != nil:
		return "OAuth `Authorization: Bearer`"
	case p.Format == FormatAnthropic:
		return "`x-api-key`"
	case p.Format == FormatGemini:
		return "`x-goog-api-key`"
	}
	return "`Authorization: Bearer`"
}

// FormatOf is the wire format model is served on: the provider's, unless
// the row's module serves that model on another wire (Module.FormatOf).
func (p Provider) FormatOf(model string) Format {
	if p.Module != nil && p.Module.FormatOf != nil {
		if f := p.Module.FormatOf(model); f != "" {
			return f
		}
	}
	return p.Format
}

// Prefills reports whether model on this provider continues a trailing
// assistant message: the provider's capability, minus its NoPrefillModels
// (a model its module says prefills, Module.Prefills, always does).
func (p Provider) Prefills(model string) bool {
	if p.Module != nil && p.Module.Prefills != nil && p.Module.Prefills(model) {
		return true
	}
	if !p.AssistantPrefill {
		return false
	}
	for _, prefix := range p.NoPrefillModels {
		if strings.HasPrefix(model, prefix) {
			return false
		}
	}
	if len(p.PrefillOnlyModels) > 0 {
		for _, part := range p.PrefillOnlyModels {
			if strings.Contains(model, part) {
				return true
			}
		}
		return false
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
	// ImportSource is the `omniroute import` source that reads this provider's
	// CLI login, or the login source of its module's device sign-in
	// (Module.Login): the key a login's connection is found by.
	ImportSource string
	// DeviceCodeURL and AccessTokenURL are a device sign-in's endpoints
	// (RFC 8628: the device authorization and token endpoints); UserURL
	// names the account. Only a row whose module has a Login sets them.
	DeviceCodeURL, AccessTokenURL, UserURL string
	// Models are the bare model names an imported connection serves at first
	// (the names the provider's own CLI sends), so the CLI works through the
	// gateway without renaming; the user edits the list like any connection's.
	Models []string
}

// Catalog is the immutable provider list.
type Catalog struct {
	byID    map[string]Provider
	list    []Provider
	modules []Module
	// getenv is what the built-in rows' OAuth endpoints were overridden
	// from (nil: none); WithModules applies it to the modules' rows too.
	getenv func(string) string
}

// NewCatalog returns an empty catalogue: every row is a provider folder's,
// added by WithModules (backend/providers/registry builds the gateway's).
func NewCatalog() *Catalog { return NewCatalogEnv(nil) }

// NewCatalogEnv returns an empty catalogue whose modules' OAuth endpoints
// (WithModules) are overridden by getenv (nil: none): OMNIROUTE_<PROVIDER>_OAUTH_TOKEN_URL,
// _OAUTH_CLIENT_ID and _OAUTH_CLIENT_SECRET, where <PROVIDER> is the id in
// upper case with '-' as '_' (OMNIROUTE_CLAUDE_OAUTH_TOKEN_URL,
// OMNIROUTE_GEMINI_CLI_OAUTH_CLIENT_SECRET); a row with a device sign-in
// (OAuth.DeviceCodeURL set) also reads _OAUTH_DEVICE_CODE_URL,
// _OAUTH_ACCESS_TOKEN_URL and _OAUTH_USER_URL. Tests point them at fakes.
func NewCatalogEnv(getenv func(string) string) *Catalog {
	var list []Provider // every row is a provider folder's (WithModules)
	applyEnv(list, getenv)
	c := &Catalog{byID: map[string]Provider{}, list: list, getenv: getenv}
	for _, p := range list {
		c.byID[p.ID] = p
		for _, a := range p.Aliases {
			c.byID[a] = p
		}
	}
	return c
}

// applyEnv overrides the OAuth endpoints (and an OAuth row's base URL) of
// list's rows from getenv (nil: none), as NewCatalogEnv documents.
func applyEnv(list []Provider, getenv func(string) string) {
	if getenv == nil {
		return
	}
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
		// The API base an imported login's connection calls (and its
		// model discovery on import asks), for tests against a fake.
		if v := strings.TrimSpace(getenv(prefix + "BASE_URL")); v != "" {
			list[i].BaseURL = v
		}
		if o.DeviceCodeURL != "" {
			for name, f := range map[string]*string{"DEVICE_CODE_URL": &o.DeviceCodeURL, "ACCESS_TOKEN_URL": &o.AccessTokenURL, "USER_URL": &o.UserURL} {
				if v := strings.TrimSpace(getenv(prefix + name)); v != "" {
					*f = v
				}
			}
		}
		list[i].OAuth = &o
	}
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
	// Extra is what the provider's module read from the connection beyond
	// these fields, in the module's own type (nil: none).
	Extra any
	// AWS is an AWS-signed connection's region and credentials (never logged).
	AWS AWS
	// Google is a Google Cloud connection's project and region.
	Google Google
}

// Google is what a Google Cloud connection's providerSpecificData says:
// {"projectId": "my-proj", "region": "us-central1"} (which of them a
// provider needs, and their defaults, are its module's).
type Google struct {
	Project, Region string
}

// AWS is what an AWS call is signed with (SigV4).
type AWS struct {
	Region, AccessKeyID, SecretAccessKey, SessionToken string
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

// GeminiBatchEmbed is Call.Path for a Gemini-native embeddings call:
// POST models/{model}:batchEmbedContents instead of generateContent.
const GeminiBatchEmbed = ":batchEmbedContents"

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
	// (chat). The Gemini executor gets GeminiBatchEmbed for embeddings;
	// executors of other wires never get one.
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
