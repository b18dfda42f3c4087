package server

import (
	"database/sql"

	"omniroute/backend/budget"
	"omniroute/backend/metrics"
	"omniroute/backend/pricing"
	"omniroute/backend/providers"
	"omniroute/backend/store"
)

// costHook is the gateway's Spend: the pricing table prices each served
// answer into its log row, the ledger admits and charges keys, and the
// metrics count the spend.
type costHook struct {
	prices *pricing.Table
	ledger *budget.Ledger
	meter  *metrics.Metrics
}

// Admit is the ledger's.
func (h costHook) Admit(keyID string) error { return h.ledger.Admit(keyID) }

// Charge prices the answer at its connection's prices; an answer of unknown
// price leaves the row's cost NULL and charges the key its tokens only.
func (h costHook) Charge(l store.RequestLog, model string, u pricing.Usage) (sql.NullFloat64, float64) {
	c := h.prices.Charge(l.ConnectionID, l.Provider, model, u)
	tokens := int64(u.Prompt + u.Output)
	if !c.Known {
		h.ledger.Charge(l.APIKeyID, 0, tokens)
		return sql.NullFloat64{}, 0
	}
	h.ledger.Charge(l.APIKeyID, c.USD, tokens)
	h.meter.Spend(l.APIKeyID, model, l.Provider, c.USD)
	return sql.NullFloat64{Float64: c.USD, Valid: true}, c.Saved
}

// newPricing is the shipped catalogue over the provider catalogue: each
// subscription provider priced as the API it stands in for, and subscription
// (OAuth) and local providers flat-rate by default.
func newPricing(catalog *providers.Catalog) (*pricing.Table, error) {
	apiOf := map[string]string{"claude": "anthropic", "codex": "openai", "gemini-cli": "gemini"}
	var flat []string
	for _, p := range catalog.All() {
		if p.Category == providers.CategoryOAuth || p.Category == providers.CategoryLocal {
			flat = append(flat, p.ID)
		}
	}
	return pricing.New(apiOf, flat)
}

// loadBudgets gives the ledger every key's budget and limits, each seeded
// with its spend from the request log (one aggregate per key).
func loadBudgets(st *store.Store, ledger *budget.Ledger, rows []store.APIKey) error {
	for _, k := range rows {
		if err := ledger.Apply(k, st.KeySpendSince); err != nil {
			return err
		}
	}
	return nil
}
