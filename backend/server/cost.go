package server

import (
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"omniroute/backend/budget"
	"omniroute/backend/errs"
	"omniroute/backend/gateway"
	"omniroute/backend/metrics"
	"omniroute/backend/pricing"
	"omniroute/backend/providers"
	"omniroute/backend/routing"
	"omniroute/backend/store"
)

// costHook is the gateway's Spend: the pricing table prices each served
// answer into its log row, the ledger admits and charges keys, and the
// metrics count the spend.
type costHook struct {
	prices *pricing.Table
	ledger *budget.Ledger
	meter  *metrics.Metrics
	// unpriced names the connections that may serve model when none of
	// them knows its price (nil func: not checked).
	unpriced func(model string) []string
}

// Admit is the ledger's: a budgeted key's request holds its estimated cost,
// its usage estimated from the body (pricing.EstimateUsage) at the highest
// price its model may be served at (an unknown price holds its tokens only).
// Under a USD budget a model none of its connections has a price for is
// refused MODEL_PRICE_UNKNOWN, unless the budget allows unpriced models.
func (h costHook) Admit(keyID, model string, body []byte) (gateway.Hold, error) {
	if keyID == "" {
		return gateway.Hold{}, nil
	}
	if name, b, refuses := h.ledger.RefusesUnpriced(keyID); refuses && h.unpriced != nil {
		if conns := h.unpriced(model); len(conns) > 0 {
			return gateway.Hold{}, unpricedRefusal(name, b, model, conns)
		}
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
	return gateway.Hold{USD: b.USD, Tokens: b.Tokens, PeriodStart: b.PeriodStart, Held: b.Held, Shared: b.Shared, Rate: b.Rate,
		TeamTokens: b.TeamTokens, Request: b.Request, TeamRequest: b.TeamRequest}, err
}

// unpricedRefusal is the 403 MODEL_PRICE_UNKNOWN of a key with a USD budget
// asking for a model that conns would serve at an unknown price.
func unpricedRefusal(keyName string, b budget.Budget, model string, conns []string) error {
	who := "this API key"
	if keyName != "" {
		who = fmt.Sprintf("API key %q", keyName)
	}
	quoted := make([]string, len(conns))
	for i, c := range conns {
		quoted[i] = strconv.Quote(c)
	}
	where := "connection " + quoted[0]
	if len(conns) > 1 {
		where = "connections " + strings.Join(quoted, ", ")
	}
	return errs.New(errs.Permission, "MODEL_PRICE_UNKNOWN",
		"model %q has no known price on %s, and %s has a USD budget ($%.4f per %s) that an unpriced answer would bypass: "+
			"set its price (Connections → the connection → Prices, or PATCH /api/providers/{id} {\"pricing\": …}), "+
			"or allow unpriced models on the key (budget.allowUnpriced)",
		model, where, who, *b.USD, b.Period).WithParam("model")
}

// unpricedTargets lists the connections (by name) that may serve model —
// the candidates and the excluded targets of a dry-run plan — when none of
// them knows its price (a connection override, the catalogue, or
// flat-rate): the model's price is unknown. None when one of them prices it
// (the hold is taken at the highest known price), or when nothing serves
// the model (routing refuses it on its own).
func unpricedTargets(engine *routing.Engine, prices *pricing.Table, model string) []string {
	plan, err := engine.Plan(routing.PlanInput{Model: model, DryRun: true})
	if err != nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	priced := false
	check := func(connID, provider, upstream string) {
		if prices.Charge(connID, provider, upstream, pricing.Usage{}).Known {
			priced = true
		}
		if priced || seen[connID+"\x00"+upstream] {
			return
		}
		seen[connID+"\x00"+upstream] = true
		name := connID
		if c, ok := engine.Registry().Get(connID); ok && c.Name != "" {
			name = c.Name
		}
		out = append(out, name)
	}
	for _, c := range plan.Candidates {
		check(c.Conn.ID, c.Conn.BreakerKey, c.Model)
	}
	for _, x := range plan.Excluded {
		check(x.ConnectionID, x.Provider, x.Model)
	}
	if priced {
		return nil
	}
	return out
}

// Release gives a request's hold back: it was not served.
func (h costHook) Release(keyID string, g gateway.Hold) { h.ledger.Release(ledgerHold(keyID, g)) }

func ledgerHold(keyID string, g gateway.Hold) budget.Hold {
	return budget.Hold{Key: keyID, USD: g.USD, Tokens: g.Tokens, PeriodStart: g.PeriodStart, Held: g.Held, Shared: g.Shared, Rate: g.Rate,
		TeamTokens: g.TeamTokens, Request: g.Request, TeamRequest: g.TeamRequest}
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

// newPricing is the provider modules' prices (Catalog.Prices) over the
// provider catalogue: each subscription provider priced as the API it
// stands in for (its row's APIOf), and subscription (OAuth) and local
// providers flat-rate by default.
func newPricing(catalog *providers.Catalog) (*pricing.Table, error) {
	apiOf := map[string]string{}
	var flat []string
	for _, p := range catalog.All() {
		if p.APIOf != "" {
			apiOf[p.ID] = p.APIOf
		}
		if p.Category == providers.CategoryOAuth || p.Category == providers.CategoryLocal {
			flat = append(flat, p.ID)
		}
	}
	return pricing.New(catalog.Prices(), apiOf, flat)
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
