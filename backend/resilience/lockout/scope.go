package lockout

// Scope is how wide a model lockout reaches on one connection.
type Scope string

// Lockout scopes.
const (
	// ScopeExact locks only the provider/connection/model tuple (key
	// "provider:conn:exact:model"). It is the scope of transport and server failures.
	ScopeExact Scope = "exact"
	// ScopeModel locks the model on the connection (key "provider:conn:model"). It is
	// the scope of a 404: the model is missing there.
	ScopeModel Scope = "model"
	// ScopeQuotaFamily locks every model of the model's quota family on the connection
	// (key "provider:conn:family:<family>"). It is the scope of quota and permission
	// signals (429 / 403 / 402).
	ScopeQuotaFamily Scope = "quota_family"
)

// Valid reports whether s is one of ScopeExact, ScopeModel or ScopeQuotaFamily.
func (s Scope) Valid() bool {
	switch s {
	case ScopeExact, ScopeModel, ScopeQuotaFamily:
		return true
	}
	return false
}

// ResolveScope picks the key a failure with this upstream status locks: 429, 403
// and 402 (quota / permission) lock the quota family; 404 locks the model; any other
// status — 5xx, the gateway's own synthesised 502, 0 for a transport failure, 400 —
// locks only the exact tuple, because a bad response from one model is no evidence
// about the account's quota. A non-empty explicit scope always wins; an explicit
// value that is not a known Scope resolves to ScopeExact, the narrowest lock.
func ResolveScope(status int, explicit Scope) Scope {
	if explicit != "" {
		if explicit.Valid() {
			return explicit
		}
		return ScopeExact
	}
	switch status {
	case 429, 403, 402:
		return ScopeQuotaFamily
	case 404:
		return ScopeModel
	}
	return ScopeExact
}

// Families names the quota family of a provider's model: the models that
// share one account quota upstream, which a ScopeQuotaFamily lock covers
// together. A model in no family is its own (return the model). The
// provider modules declare the families; the wiring place hands the
// catalogue's (providers.Catalog.QuotaFamily) to NewFamilies.
type Families func(provider, model string) string

// Family is the name a ScopeQuotaFamily lock of provider's model is stored
// under: the table's Families, or the model itself when it has none (or
// the table is nil).
func (t *Table) Family(provider, model string) string {
	if t == nil || t.families == nil {
		return model
	}
	return t.families(provider, model)
}
