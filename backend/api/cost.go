package api

import (
	"database/sql"
	"encoding/json"
	"math"
	"net/http"

	"omniroute/backend/budget"
	"omniroute/backend/httpx"
	"omniroute/backend/pricing"
	"omniroute/backend/store"
)

// listPricing serves GET /api/pricing: the catalogue (the user's pricing
// file's entries and the shipped ones, each with its origin and source),
// the connections' overrides and the pricing file's state.
func (a *API) listPricing(w http.ResponseWriter, r *http.Request) {
	if a.Pricing == nil {
		httpx.WriteJSON(w, http.StatusOK, map[string]any{"catalogue": []pricing.Entry{}, "overrides": map[string]pricing.Override{}, "file": nil})
		return
	}
	var file *pricing.FileState
	if a.PricingFile != nil {
		file = a.PricingFile.State()
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"catalogue": a.Pricing.Catalogue(), "overrides": a.Pricing.Overrides(), "file": file})
}

// applyPricingInput validates and stores a connection's pricing and
// flatRate fields (PATCH /api/providers/{id}): pricing replaces the
// connection's prices (null or {} removes them), flatRate sets the marker
// (null returns to the provider's default).
func (a *API) applyPricingInput(connID string, in connectionInput) error {
	if a.Pricing == nil || (in.Pricing == nil && in.FlatRate == nil) {
		return nil
	}
	o, _ := a.Pricing.Override(connID)
	o, err := pricing.ReadOverride(o, in.Pricing, in.FlatRate)
	if err != nil {
		return err
	}
	if o.Empty() {
		if err := a.Store.DeleteValue(pricing.Namespace, connID); err != nil && err != store.ErrNotFound {
			return err
		}
	} else {
		b, _ := json.Marshal(o)
		if err := a.Store.SetValue(pricing.Namespace, connID, string(b)); err != nil {
			return err
		}
	}
	a.Pricing.SetOverride(connID, o)
	return nil
}

// applyKeyBudget hands a saved key row's budget and limits to the ledger.
func (a *API) applyKeyBudget(row store.APIKey) error {
	if a.Budgets == nil {
		return nil
	}
	return a.Budgets.Apply(row, a.Store.KeySpendSince)
}

// addKeyCost adds a key's budget, limits and spend to its JSON.
func (a *API) addKeyCost(out map[string]any, row store.APIKey) map[string]any {
	b, l, _ := budget.Parse(row)
	out["budget"], out["limits"] = b, l
	if a.Budgets != nil {
		s := a.Budgets.Spend(row.ID)
		s.USD = math.Round(s.USD*1e9) / 1e9 // float sums shown without their noise
		out["spend"] = s
	}
	return out
}

// nullUSD is a row's cost for JSON: null when unknown.
func nullUSD(v sql.NullFloat64) any {
	if !v.Valid {
		return nil
	}
	return v.Float64
}

// csvUSD is a row's cost for CSV: empty when unknown.
func csvUSD(v sql.NullFloat64) string {
	if !v.Valid {
		return ""
	}
	return usd(v.Float64)
}
