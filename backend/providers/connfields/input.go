// Package connfields checks and applies a connection's fields as a create
// or an edit of /api/providers sends them (Input) onto its stored row: each
// refusal an errs.Error with a stable code and the field's path as param,
// a provider module's own refusals in the user's words (its DataSchema).
// The management API decodes the body, calls Env.Apply and maps the error
// to HTTP at its edge.
package connfields

import "encoding/json"

// Input is the body of POST/PUT/PATCH /api/providers; pointer fields are
// optional so an edit changes only what it names.
type Input struct {
	Provider            *string          `json:"provider"`
	Name                *string          `json:"name"`
	AuthType            *string          `json:"authType"`
	APIKey              *string          `json:"apiKey"`
	AccessToken         *string          `json:"accessToken"`
	RefreshToken        *string          `json:"refreshToken"`
	ExpiresAt           *string          `json:"expiresAt"`
	BaseURL             *string          `json:"baseUrl"`
	Prefix              *string          `json:"prefix"`
	Priority            *int             `json:"priority"`
	IsActive            *bool            `json:"isActive"`
	MaxConcurrent       *int             `json:"maxConcurrent"`
	RateLimitProtection *bool            `json:"rateLimitProtection"` // accepted, never changed here (POST /api/rate-limits does)
	RateLimitOverrides  *json.RawMessage `json:"rateLimitOverrides"`
	// ModelConcurrency is a shorthand for rateLimitOverrides.modelConcurrency
	// (not a pointer, so an explicit null arrives as "null" and lifts the caps).
	ModelConcurrency     json.RawMessage  `json:"modelConcurrency"`
	ProviderSpecificData *json.RawMessage `json:"providerSpecificData"`
	Models               *[]string        `json:"models"`
	// DiscoveredModels edits the discovered list (until the next refresh).
	DiscoveredModels *[]string `json:"discoveredModels"`
	// HiddenModels replaces the models hidden on this connection (never in
	// /v1/models, never routed to here); [] shows them all again.
	HiddenModels *[]string `json:"hiddenModels"`
	// ModelAliases replaces the connection's aliases, alias → model; {}
	// removes them all.
	ModelAliases *map[string]string `json:"modelAliases"`
	// DiscoverModels: false stops create from asking the upstream (default:
	// ask when the request lists no models). Read by the API, not here.
	DiscoverModels *bool `json:"discoverModels"`
	// Verify checks the credentials with the upstream (GET /models and a
	// one-token completion); a 401/403 makes the connection key_rejected.
	// Default: on every create, and on an edit that changes the base URL,
	// the key or the listed models; false skips it. Read by the API.
	Verify *bool `json:"verify"`
	// Pricing and FlatRate are the connection's pricing override (PATCH and
	// PUT), applied by the API's pricing (pricing.ReadOverride), not here.
	Pricing  json.RawMessage `json:"pricing"`
	FlatRate json.RawMessage `json:"flatRate"`
}
