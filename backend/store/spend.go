package store

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
