package store

import (
	"database/sql"
	"errors"
)

// KeySpend is what a key spent: the USD of its priced answers and the tokens
// of its served ones.
type KeySpend struct {
	USD    float64
	Tokens int64
}

// KeySpendSince sums a key's served requests logged at or after sinceMs
// (unix ms), as far back as the request log keeps them: what a key's budget
// ledger starts from when the budget is set or the gateway starts.
func (s *Store) KeySpendSince(keyID string, sinceMs int64) (KeySpend, error) {
	var out KeySpend
	err := s.db.Raw(`SELECT COALESCE(SUM(cost_usd), 0), CAST(COALESCE(SUM(prompt_tokens + completion_tokens), 0) AS BIGINT)
		FROM request_logs WHERE api_key_id = ? AND created_at >= ? AND status < 400`, keyID, sinceMs).Row().Scan(&out.USD, &out.Tokens)
	return out, err
}

// ChargeKeySpend adds usd and tokens to a key's spend in the period starting
// at periodStart (unix ms; 0 for a total budget) in one statement, so
// instances sharing the database never lose a charge, and returns the
// period's totals. A newer period replaces the stored one; a late charge for
// an older period than the stored one is dropped.
func (s *Store) ChargeKeySpend(keyID string, periodStart int64, usd float64, tokens int64) (KeySpend, error) {
	var out KeySpend
	err := s.db.Raw(`INSERT INTO key_spend (api_key_id, period_start, usd, tokens) VALUES (?, ?, ?, ?)
		ON CONFLICT (api_key_id) DO UPDATE SET
			usd = CASE WHEN key_spend.period_start = excluded.period_start THEN key_spend.usd + excluded.usd
				WHEN key_spend.period_start < excluded.period_start THEN excluded.usd ELSE key_spend.usd END,
			tokens = CASE WHEN key_spend.period_start = excluded.period_start THEN key_spend.tokens + excluded.tokens
				WHEN key_spend.period_start < excluded.period_start THEN excluded.tokens ELSE key_spend.tokens END,
			period_start = CASE WHEN key_spend.period_start < excluded.period_start THEN excluded.period_start ELSE key_spend.period_start END
		RETURNING usd, tokens`, keyID, periodStart, usd, tokens).Row().Scan(&out.USD, &out.Tokens)
	return out, err
}

// SeedKeySpend stores a key's spend for a period unless the table already
// holds that period (or a newer one): the request log's sum when a budget is
// set or an instance starts; charges already made there win.
func (s *Store) SeedKeySpend(keyID string, periodStart int64, sp KeySpend) error {
	return s.db.Exec(`INSERT INTO key_spend (api_key_id, period_start, usd, tokens) VALUES (?, ?, ?, ?)
		ON CONFLICT (api_key_id) DO UPDATE SET usd = excluded.usd, tokens = excluded.tokens, period_start = excluded.period_start
		WHERE key_spend.period_start < excluded.period_start`, keyID, periodStart, sp.USD, sp.Tokens).Error
}

// KeySpendIn is a key's stored spend in the period starting at periodStart
// (ok false when the table holds another period or none).
func (s *Store) KeySpendIn(keyID string, periodStart int64) (sp KeySpend, ok bool, err error) {
	err = s.db.Raw(`SELECT usd, tokens FROM key_spend WHERE api_key_id = ? AND period_start = ?`, keyID, periodStart).Row().Scan(&sp.USD, &sp.Tokens)
	if errors.Is(err, sql.ErrNoRows) {
		return KeySpend{}, false, nil
	}
	return sp, err == nil, err
}

// ReserveKeySpend adds usd and tokens (a request's estimated cost, held at
// its admission) to a key's spend in the period starting at periodStart,
// unless that spend has already reached capUSD or capTokens: one
// conditional statement, so instances admitting requests of one key at once
// each see the others' holds (the row lock orders them). ok is false when
// it was refused or the table holds another period or none (the caller
// tells which with KeySpendIn); the totals are the period's after the hold.
func (s *Store) ReserveKeySpend(keyID string, periodStart int64, usd float64, tokens int64, capUSD float64, capTokens int64) (sp KeySpend, ok bool, err error) {
	err = s.db.Raw(`UPDATE key_spend SET usd = usd + ?, tokens = tokens + ?
		WHERE api_key_id = ? AND period_start = ? AND usd < ? AND tokens < ?
		RETURNING usd, tokens`, usd, tokens, keyID, periodStart, capUSD, capTokens).Row().Scan(&sp.USD, &sp.Tokens)
	if errors.Is(err, sql.ErrNoRows) {
		return KeySpend{}, false, nil
	}
	return sp, err == nil, err
}
