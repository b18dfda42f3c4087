package store

import (
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// cooldownColumns are the resilience columns of provider_connections, as
// CooldownFields holds them.
var cooldownColumns = []string{"rate_limited_until", "test_status", "last_error", "last_error_type", "last_error_at",
	"error_code", "backoff_level", "reject_streak", "expired_retries"}

// DecideCooldown lets the database decide a connection's next resilience
// columns when several instances write them (a team server): it reads the
// stored columns under the row's lock (SELECT … FOR UPDATE on PostgreSQL; a
// SQLite write transaction is exclusive anyway), passes them to decide,
// writes what decide returns when it differs, and commits. Concurrent
// decisions on one connection from any instance therefore run one after the
// other, each on the row the previous one left — decide sees a herd's first
// cooldown already stored and can leave it alone. stored is the row as
// committed (the winning state every instance adopts); wrote reports whether
// this decision changed it. A missing connection is ErrNotFound.
func (s *Store) DecideCooldown(id string, decide func(stored CooldownFields) CooldownFields) (stored CooldownFields, wrote bool, err error) {
	return decideLocked(s, decide,
		func(tx *gorm.DB) (CooldownFields, error) {
			var c Connection
			err := s.forUpdate(tx.Model(&Connection{}).Select(cooldownColumns).Where("id = ?", id)).Take(&c).Error
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return CooldownFields{}, ErrNotFound
			}
			return c.CooldownFields(), err
		},
		func(tx *gorm.DB, next CooldownFields) error {
			return tx.Model(&Connection{}).Where("id = ?", id).Updates(cooldownUpdates(next)).Error
		})
}

// decideLocked runs one database-decided change of a shared row in a
// transaction: read takes the row under its lock, decide returns the next
// row, write stores it when it differs. stored is the row as committed;
// wrote reports whether this decision changed it.
func decideLocked[T comparable](s *Store, decide func(T) T, read func(*gorm.DB) (T, error), write func(*gorm.DB, T) error) (stored T, wrote bool, err error) {
	err = s.transaction(s.db, func(tx *gorm.DB) error {
		cur, err := read(tx)
		if err != nil {
			return err
		}
		next := decide(cur)
		if next == cur {
			stored = cur
			return nil
		}
		if err := write(tx, next); err != nil {
			return err
		}
		stored, wrote = next, true
		return nil
	})
	if err != nil {
		var zero T
		return zero, false, err
	}
	return stored, wrote, nil
}

// forUpdate locks the rows q reads until the transaction ends (SELECT … FOR
// UPDATE on PostgreSQL; a SQLite write transaction is exclusive anyway).
func (s *Store) forUpdate(q *gorm.DB) *gorm.DB {
	if s.dialect == Postgres {
		return q.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate})
	}
	return q
}

// cooldownUpdates is the column map that writes f.
func cooldownUpdates(f CooldownFields) map[string]any {
	return map[string]any{
		"rate_limited_until": f.RateLimitedUntil,
		"test_status":        f.TestStatus,
		"last_error":         f.LastError,
		"last_error_type":    f.LastErrorType,
		"last_error_at":      f.LastErrorAt,
		"error_code":         f.ErrorCode,
		"backoff_level":      f.BackoffLevel,
		"reject_streak":      f.RejectStreak,
		"expired_retries":    f.ExpiredRetries,
		"updated_at":         time.Now().UnixMilli(),
	}
}

// DecideBreaker lets the database decide a provider breaker's next row when
// several instances count its outcomes (a team server), as DecideCooldown
// does for a connection: it makes sure the provider's row exists (a CLOSED
// one), reads it under the row's lock, passes it to decide, writes what
// decide returns when it differs, and commits. stored is the row as
// committed; wrote reports whether this decision changed it.
func (s *Store) DecideBreaker(provider string, decide func(stored BreakerRow) BreakerRow) (stored BreakerRow, wrote bool, err error) {
	return decideLocked(s,
		func(cur BreakerRow) BreakerRow {
			next := decide(cur)
			next.Provider, next.UpdatedAt = provider, cur.UpdatedAt // unchanged unless decide changed the row
			if next != cur {
				next.UpdatedAt = time.Now().UnixMilli()
			}
			return next
		},
		func(tx *gorm.DB) (BreakerRow, error) {
			read := func() (BreakerRow, error) {
				var row BreakerRow
				return row, s.forUpdate(tx.Where("provider = ?", provider)).Take(&row).Error
			}
			cur, err := read()
			if errors.Is(err, gorm.ErrRecordNotFound) {
				// First outcome of this provider anywhere: a CLOSED row to lock
				// (an instance inserting it at the same moment wins; ours is skipped).
				if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&BreakerRow{Provider: provider, State: "CLOSED",
					UpdatedAt: time.Now().UnixMilli()}).Error; err != nil {
					return BreakerRow{}, err
				}
				cur, err = read()
			}
			return cur, err
		},
		func(tx *gorm.DB, next BreakerRow) error {
			return tx.Model(&BreakerRow{}).Where("provider = ?", provider).Updates(map[string]any{
				"state": next.State, "failures": next.Failures, "consecutive_successes": next.ConsecutiveSuccesses,
				"open_cycles": next.OpenCycles, "last_failure_at": next.LastFailureAt, "opened_at": next.OpenedAt,
				"state_changed_at": next.StateChangedAt, "updated_at": next.UpdatedAt}).Error
		})
}
