package store

import (
	"context"

	"gorm.io/gorm"
)

// TokenTake is TakeKeyTokens' answer: Hold is the hold's id (0: refused),
// Used the tokens the key's window counted before it, Oldest when the
// oldest of them leaves the window (unix ms).
type TokenTake struct {
	Hold   int64 `gorm:"column:hold_id"`
	Used   int64 `gorm:"column:used"`
	Oldest int64 `gorm:"column:oldest"`
}

// TakeKeyTokens admits a request of keyID under its tokens-per-minute limit
// tpm when the tokens its window counts at nowMs (held by requests in flight
// and charged by answers, on every instance) are below tpm, and holds tokens
// (at least 1) until nowMs+ttlMs. On PostgreSQL it is one statement (the
// function omniroute_take_tokens, ordered by the key's transaction lock); on
// SQLite one transaction (the database's single writer orders them).
func (s *Store) TakeKeyTokens(ctx context.Context, keyID string, tpm, tokens, nowMs, ttlMs int64) (TokenTake, error) {
	var got TokenTake
	if s.dialect == Postgres {
		err := s.db.WithContext(ctx).Raw(`SELECT hold_id, used, oldest FROM omniroute_take_tokens(?, ?, ?, ?, ?)`,
			keyID, tpm, tokens, nowMs, ttlMs).Scan(&got).Error
		return got, err
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec(`DELETE FROM key_rate_tokens WHERE key_id = ? AND expires_at <= ?`, keyID, nowMs).Error; err != nil {
			return err
		}
		if err := tx.Raw(`SELECT COALESCE(SUM(tokens), 0) AS used, COALESCE(MIN(expires_at), ?) AS oldest
			FROM key_rate_tokens WHERE key_id = ? AND expires_at > ?`, nowMs, keyID, nowMs).Scan(&got).Error; err != nil {
			return err
		}
		if got.Used >= tpm {
			return nil
		}
		return tx.Raw(`INSERT INTO key_rate_tokens (key_id, tokens, expires_at) VALUES (?, ?, ?) RETURNING id`,
			keyID, max(tokens, 1), nowMs+ttlMs).Scan(&got.Hold).Error
	})
	return got, err
}

// KeyRatesTake is TakeKeyRates' answer: the TPM window's take and the RPM
// window's (both holds 0: refused).
type KeyRatesTake struct {
	TPM, RPM TokenTake
}

// TakeKeyRates is TakeKeyTokens for a key with both limits at once: its
// tokens-per-minute window (keyID, limit tpm, holding tokens) and its
// requests-per-minute window (rpmKey, limit rpm, the request counting 1),
// admitted in both or neither. On PostgreSQL it is one statement (the
// function omniroute_take_key_rates, which names the RPM window 'rpm|' ||
// keyID: rpmKey must be that); on SQLite one transaction.
func (s *Store) TakeKeyRates(ctx context.Context, keyID, rpmKey string, rpm, tpm, tokens, nowMs, ttlMs int64) (KeyRatesTake, error) {
	if s.dialect == Postgres {
		var row struct {
			TPMHold   int64 `gorm:"column:tpm_hold"`
			TPMUsed   int64 `gorm:"column:tpm_used"`
			TPMOldest int64 `gorm:"column:tpm_oldest"`
			RPMHold   int64 `gorm:"column:rpm_hold"`
			RPMUsed   int64 `gorm:"column:rpm_used"`
			RPMOldest int64 `gorm:"column:rpm_oldest"`
		}
		err := s.db.WithContext(ctx).Raw(`SELECT tpm_hold, tpm_used, tpm_oldest, rpm_hold, rpm_used, rpm_oldest
			FROM omniroute_take_key_rates(?, ?, ?, ?, ?, ?)`, keyID, rpm, tpm, tokens, nowMs, ttlMs).Scan(&row).Error
		return KeyRatesTake{TPM: TokenTake{Hold: row.TPMHold, Used: row.TPMUsed, Oldest: row.TPMOldest},
			RPM: TokenTake{Hold: row.RPMHold, Used: row.RPMUsed, Oldest: row.RPMOldest}}, err
	}
	var got KeyRatesTake
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		used := func(key string) (TokenTake, error) {
			var t TokenTake
			if err := tx.Exec(`DELETE FROM key_rate_tokens WHERE key_id = ? AND expires_at <= ?`, key, nowMs).Error; err != nil {
				return t, err
			}
			err := tx.Raw(`SELECT COALESCE(SUM(tokens), 0) AS used, COALESCE(MIN(expires_at), ?) AS oldest
				FROM key_rate_tokens WHERE key_id = ? AND expires_at > ?`, nowMs, key, nowMs).Scan(&t).Error
			return t, err
		}
		var err error
		if got.TPM, err = used(keyID); err != nil {
			return err
		}
		if got.RPM, err = used(rpmKey); err != nil {
			return err
		}
		if got.TPM.Used >= tpm || got.RPM.Used >= rpm {
			return nil
		}
		if err := tx.Raw(`INSERT INTO key_rate_tokens (key_id, tokens, expires_at) VALUES (?, ?, ?) RETURNING id`,
			keyID, max(tokens, 1), nowMs+ttlMs).Scan(&got.TPM.Hold).Error; err != nil {
			return err
		}
		return tx.Raw(`INSERT INTO key_rate_tokens (key_id, tokens, expires_at) VALUES (?, 1, ?) RETURNING id`,
			rpmKey, nowMs+ttlMs).Scan(&got.RPM.Hold).Error
	})
	return got, err
}

// SettleKeyTokens replaces a hold TakeKeyTokens gave with the tokens the
// answer used, counted in the key's window until nowMs+ttlMs; 0 tokens (not
// served) removes it. A hold that lapsed meanwhile is charged anew. The hold
// is named by its id and its key: after a crash of the PostgreSQL server the
// table (unlogged) and its id sequence start over, and an id held from
// before must not settle another key's hold.
func (s *Store) SettleKeyTokens(ctx context.Context, keyID string, hold, tokens, nowMs, ttlMs int64) error {
	db := s.db.WithContext(ctx)
	if tokens <= 0 {
		return db.Exec(`DELETE FROM key_rate_tokens WHERE id = ? AND key_id = ?`, hold, keyID).Error
	}
	res := db.Exec(`UPDATE key_rate_tokens SET tokens = ?, expires_at = ? WHERE id = ? AND key_id = ?`, tokens, nowMs+ttlMs, hold, keyID)
	if res.Error != nil || res.RowsAffected > 0 {
		return res.Error
	}
	return db.Exec(`INSERT INTO key_rate_tokens (key_id, tokens, expires_at) VALUES (?, ?, ?)`, keyID, tokens, nowMs+ttlMs).Error
}

// ClaimBudgetAlert claims a key's budget alert (percent 80 or 100) in the
// period starting at periodStart (unix ms, 0 for a total budget) under
// budget (the caps as the ledger names them) for the whole team: it
// reports whether this call made the claim (the first), so one instance of
// a team server raises each alert once.
func (s *Store) ClaimBudgetAlert(keyID string, periodStart int64, budget string, percent int, nowMs int64) (bool, error) {
	res := s.db.Exec(`INSERT INTO budget_alerts (key_id, period_start, budget, percent, raised_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (key_id, period_start, budget, percent) DO NOTHING`, keyID, periodStart, budget, percent, nowMs)
	return res.RowsAffected == 1, res.Error
}

// DeleteExpiredKeyRates deletes the rows of every key's windows that left
// them at or before beforeMs and returns how many it deleted: the periodic
// sweep of a team server (teamlimits.Limits.SweepKeyRates). A key's own
// statements delete its expired rows only when the key is used again, so a
// deleted or idle key kept up to its limit's rows. Idempotent: every
// instance may run it. It scans the table (no index on expires_at: an index
// would cost every limited request's insert more than this sweep a minute).
func (s *Store) DeleteExpiredKeyRates(ctx context.Context, beforeMs int64) (int64, error) {
	res := s.db.WithContext(ctx).Exec(`DELETE FROM key_rate_tokens WHERE expires_at <= ?`, beforeMs)
	return res.RowsAffected, res.Error
}

// KeyRateRows counts the rows of a key's window, live or not (tests).
func (s *Store) KeyRateRows(keyID string) (int64, error) {
	var n int64
	err := s.db.Raw(`SELECT COUNT(*) FROM key_rate_tokens WHERE key_id = ?`, keyID).Scan(&n).Error
	return n, err
}
