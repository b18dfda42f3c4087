package connfields

import (
	"strings"
	"time"

	"omniroute/backend/errs"
	"omniroute/backend/providers"
	"omniroute/backend/store"
)

// Provider is the catalogue row a create names by id or alias:
// PROVIDER_REQUIRED without one, UNKNOWN_PROVIDER for a name the catalogue
// does not hold.
func (e Env) Provider(in Input) (providers.Provider, error) {
	if in.Provider == nil || strings.TrimSpace(*in.Provider) == "" {
		return providers.Provider{}, errs.New(errs.Invalid, "PROVIDER_REQUIRED", "field \"provider\" is required").WithParam("provider")
	}
	p, ok := e.Catalog.Lookup(strings.TrimSpace(*in.Provider))
	if !ok {
		return providers.Provider{}, errs.New(errs.Invalid, "UNKNOWN_PROVIDER", "unknown provider %q; see GET /api/providers/catalog", truncate(*in.Provider, 60)).WithParam("provider")
	}
	return p, nil
}

// SameProvider refuses an edit of row that names another provider
// (PROVIDER_IMMUTABLE): a connection's provider never changes.
func SameProvider(in Input, row store.Connection) error {
	if in.Provider != nil && !strings.EqualFold(strings.TrimSpace(*in.Provider), row.Provider) {
		return errs.New(errs.Invalid, "PROVIDER_IMMUTABLE", "a connection's provider cannot change; create a new connection").WithParam("provider")
	}
	return nil
}

// NewRow is a new connection of p before its fields are applied: named
// after the provider, switched on, no models, its auth type the category's
// (none for a local server, oauth for a subscription, else apikey).
func NewRow(p providers.Provider, id string, priority int, now time.Time) store.Connection {
	ms := now.UnixMilli()
	row := store.Connection{ID: id, Provider: p.ID, Name: p.Name, AuthType: "apikey",
		Priority: priority, IsActive: true, Models: "[]", DiscoveredModels: "[]", HiddenModels: "[]", ModelAliases: "{}", ProviderSpecificData: "{}",
		RateLimitOverrides: "{}", TestStatus: "active", CreatedAt: ms, UpdatedAt: ms}
	switch p.Category {
	case providers.CategoryLocal:
		row.AuthType = "none"
	case providers.CategoryOAuth:
		row.AuthType = "oauth"
	}
	return row
}
