package budget

import (
	"encoding/json"
	"fmt"

	"omniroute/backend/errs"
	"omniroute/backend/store"
)

// ReadInput sets a key row's budget and limits from a management request's
// budget and limits fields: absent (nil) leaves one as it is, null removes
// it, anything else must be a valid Budget / Limits (INVALID_BUDGET,
// INVALID_LIMITS naming the field otherwise).
func ReadInput(row *store.APIKey, rawBudget, rawLimits json.RawMessage) error {
	if rawBudget != nil {
		var b *Budget
		if err := json.Unmarshal(rawBudget, &b); err != nil {
			return errs.New(errs.Invalid, "INVALID_BUDGET", `budget must be {usd?, tokens?, period: "day"|"month"|"total"}`).WithParam("budget")
		}
		if err := b.Validate(); err != nil {
			return errs.New(errs.Invalid, "INVALID_BUDGET", "%v", err).WithParam("budget")
		}
		row.Budget = ""
		if b != nil {
			enc, _ := json.Marshal(b)
			row.Budget = string(enc)
		}
	}
	if rawLimits != nil {
		var l *Limits
		if err := json.Unmarshal(rawLimits, &l); err != nil {
			return errs.New(errs.Invalid, "INVALID_LIMITS", "limits must be {rpm?, tpm?}").WithParam("limits")
		}
		if err := l.Validate(); err != nil {
			return errs.New(errs.Invalid, "INVALID_LIMITS", "%v", err).WithParam("limits")
		}
		row.Limits = ""
		if l != nil && (l.RPM != nil || l.TPM != nil) {
			enc, _ := json.Marshal(l)
			row.Limits = string(enc)
		}
	}
	return nil
}

// Parse reads a key row's stored budget and limits ("" for none).
func Parse(k store.APIKey) (*Budget, *Limits, error) {
	var b *Budget
	var l *Limits
	if k.Budget != "" {
		if err := json.Unmarshal([]byte(k.Budget), &b); err != nil {
			return nil, nil, fmt.Errorf("key %s: budget: %w", k.ID, err)
		}
	}
	if k.Limits != "" {
		if err := json.Unmarshal([]byte(k.Limits), &l); err != nil {
			return nil, nil, fmt.Errorf("key %s: limits: %w", k.ID, err)
		}
	}
	return b, l, nil
}

// SpentSince reads what a key spent from a time (unix ms) on.
type SpentSince func(keyID string, sinceMs int64) (store.KeySpend, error)

// Apply gives the ledger a key row's budget and limits, seeded with what the
// key spent in its current period (since the request log's oldest row for a
// total budget or none).
func (l *Ledger) Apply(k store.APIKey, spent SpentSince) error {
	b, lim, err := Parse(k)
	if err != nil {
		return err
	}
	var since int64
	if b != nil {
		if start := PeriodStart(b.Period, l.clk.Now()); !start.IsZero() {
			since = start.UnixMilli()
		}
	}
	s, err := spent(k.ID, since)
	if err != nil {
		return err
	}
	if l.shared != nil && b != nil {
		// The log's sum unless the instances already charged this period.
		if err := l.shared.SeedKeySpend(k.ID, since, s); err != nil {
			return err
		}
		if got, ok, err := l.shared.KeySpendIn(k.ID, since); err == nil && ok {
			s = got
		}
	}
	l.Set(k.ID, b, lim, Spend{USD: s.USD, Tokens: s.Tokens})
	l.mu.Lock()
	if a := l.keys[k.ID]; a != nil {
		a.name = k.Name
	}
	l.mu.Unlock()
	return nil
}
