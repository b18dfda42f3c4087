package server

import (
	"database/sql"

	"omniroute/backend/budget"
	"omniroute/backend/gateway"
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

// Admit is the ledger's: a budgeted key's request holds its estimated cost,
// its usage estimated from the body (pricing.EstimateUsage) at the highest
// price its model may be served at (an unknown price holds its tokens only).
func (h costHook) Admit(keyID, model string, body []byte) (gateway.Hold, error) {
	if keyID == "" {
		return gateway.Hold{}, nil
	}
	var usd float64
	var tokens int64
	if budgeted, tpm := h.ledger.Estimated(keyID); budgeted || tpm {
		u := pricing.EstimateUsage(body)
		tokens = int64(u.Prompt) + int64(u.Output)
		if p, ok := h.prices.Estimate(model); ok && budgeted {
			usd = p.Of(u)
		}
	}
	b, err := h.ledger.Reserve(keyID, usd, tokens)
	return gateway.Hold{USD: b.USD, Tokens: b.Tokens, PeriodStart: b.PeriodStart, Held: b.Held, Shared: b.Shared, Rate: b.Rate, TeamTokens: b.TeamTokens}, err
}

// Release gives a request's hold back: it was not served.
func (h costHook) Release(keyID string, g gateway.Hold) { h.ledger.Settle(ledgerHold(keyID, g), 0, 0) }

func ledgerHold(keyID string, g gateway.Hold) budget.Hold {
	return budget.Hold{Key: keyID, USD: g.USD, Tokens: g.Tokens, PeriodStart: g.PeriodStart, Held: g.Held, Shared: g.Shared, Rate: g.Rate, TeamTokens: g.TeamTokens}
}

// Charge prices the answer at its connection's prices; an answer of unknown
// price leaves the row's cost NULL and charges the key its tokens only.
// Either replaces the request's hold.
func (h costHook) Charge(l store.RequestLog, model string, u pricing.Usage, g gateway.Hold) (sql.NullFloat64, float64) {
	c := h.prices.Charge(l.ConnectionID, l.Provider, model, u)
	tokens := max(int64(u.Prompt), 0) + max(int64(u.Output), 0)
	if !c.Known {
		h.ledger.Settle(ledgerHold(l.APIKeyID, g), 0, tokens)
		return sql.NullFloat64{}, 0
	}
	h.ledger.Settle(ledgerHold(l.APIKeyID, g), c.USD, tokens)
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

// budgetEvent is the "budget" event: a key's alert with its name.
type budgetEvent struct {
	budget.Alert
	KeyName string `json:"keyName"`
}
