package store

import (
	"context"
	"errors"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// AffinityPin is one persisted session → connection pin.
type AffinityPin struct {
	SessionKey   string `gorm:"column:session_key;primaryKey"`
	ConnectionID string `gorm:"column:connection_id"`
	Provider     string `gorm:"column:provider"`
	ExpiresAt    int64  `gorm:"column:expires_at"`
	UpdatedAt    int64  `gorm:"column:updated_at"`
	// Prev is the connection a moved pin replaces (not stored; MovePin).
	Prev string `gorm:"-"`
}

// TableName names the table.
func (AffinityPin) TableName() string { return "session_account_affinity" }

// SavePin upserts a pin.
func (s *Store) SavePin(p AffinityPin) error {
	return s.db.Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "session_key"}},
		DoUpdates: clause.AssignmentColumns([]string{"connection_id", "provider", "expires_at", "updated_at"}),
	}).Create(&p).Error
}

// LivePins returns the pins that have not expired at nowMs and deletes the rest.
func (s *Store) LivePins(nowMs int64) ([]AffinityPin, error) {
	if err := s.db.Where("expires_at <= ?", nowMs).Delete(&AffinityPin{}).Error; err != nil {
		return nil, err
	}
	var out []AffinityPin
	err := s.db.Find(&out).Error
	return out, err
}

// PinsUpdatedSince returns the live pins at nowMs written after sinceMs (the
// pins other instances sharing the database wrote lately).
func (s *Store) PinsUpdatedSince(sinceMs, nowMs int64) ([]AffinityPin, error) {
	var out []AffinityPin
	err := s.db.Where("updated_at > ? AND expires_at > ?", sinceMs, nowMs).Find(&out).Error
	return out, err
}

// pinClaimWhere is when a claim or a move may overwrite a stored pin: the
// stored one has expired, or it already names the claimed connection (a
// refresh), or it still names the connection the caller moves from (prev).
const pinClaimWhere = ` WHERE session_account_affinity.expires_at <= ?
		OR session_account_affinity.connection_id = excluded.connection_id
		OR session_account_affinity.connection_id = ?`

// ClaimPin is the team-wide pin decision (a conditional upsert): p is written
// when the session has no live pin at nowMs, when its pin already names
// p.ConnectionID, or when it still names prev (the connection the caller
// moves the session from; "" for a new session). Otherwise the stored pin
// stands: the first writer wins until its pin expires. It returns the pin
// that holds after the call — p, or the one another instance wrote first.
// ctx bounds the wait (the request path calls it).
func (s *Store) ClaimPin(ctx context.Context, p AffinityPin, prev string, nowMs int64) (AffinityPin, error) {
	if prev == "" {
		prev = " " // names no connection (ids are never blank)
	}
	db := s.db.WithContext(ctx)
	var won []AffinityPin
	err := db.Raw(`INSERT INTO session_account_affinity (session_key, connection_id, provider, expires_at, updated_at)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (session_key) DO UPDATE SET connection_id = excluded.connection_id, provider = excluded.provider,
			expires_at = excluded.expires_at, updated_at = excluded.updated_at`+pinClaimWhere+`
		RETURNING session_key, connection_id, provider, expires_at, updated_at`,
		p.SessionKey, p.ConnectionID, p.Provider, p.ExpiresAt, p.UpdatedAt, nowMs, prev).Scan(&won).Error
	if err != nil {
		return AffinityPin{}, err
	}
	if len(won) == 1 {
		return won[0], nil
	}
	var held []AffinityPin
	if err := db.Where("session_key = ?", p.SessionKey).Limit(1).Find(&held).Error; err != nil {
		return AffinityPin{}, err
	}
	if len(held) == 0 { // pruned between the two statements: claim again
		return s.ClaimPin(ctx, p, prev, nowMs)
	}
	return held[0], nil
}

// MovePin writes p only under ClaimPin's condition (the write-behind of a
// moved or refreshed pin on a team server): a pin another instance moved
// meanwhile is left alone, and adopted from the change feed instead.
func (s *Store) MovePin(p AffinityPin, prev string, nowMs int64) error {
	if prev == "" {
		prev = " "
	}
	return s.db.Exec(`INSERT INTO session_account_affinity (session_key, connection_id, provider, expires_at, updated_at)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (session_key) DO UPDATE SET connection_id = excluded.connection_id, provider = excluded.provider,
			expires_at = excluded.expires_at, updated_at = excluded.updated_at`+pinClaimWhere,
		p.SessionKey, p.ConnectionID, p.Provider, p.ExpiresAt, p.UpdatedAt, nowMs, prev).Error
}

// PinChoice is one account a new session may be pinned to.
type PinChoice struct {
	ConnectionID string
	Provider     string
}

// ClaimSpreadPin is a new session's team-wide pin decision when it may take
// any of several accounts (a provider's OAuth accounts at one priority,
// among, in the caller's order): when p.SessionKey has a live pin at nowMs
// that pin holds; otherwise the session is pinned until p.ExpiresAt
// (written at p.UpdatedAt) to the account of among holding the fewest live
// pins — every instance's — the first among equals. Claims of one pool (the
// accounts' provider) take turns, so a burst of new sessions across the
// instances counts each one. On PostgreSQL it is one statement (the function
// omniroute_claim_spread_pin, ordered by the pool's transaction lock); on
// SQLite one transaction (the single writer orders them). It returns the pin
// that holds.
func (s *Store) ClaimSpreadPin(ctx context.Context, p AffinityPin, pool string, among []PinChoice, nowMs int64) (AffinityPin, error) {
	if len(among) == 0 {
		return AffinityPin{}, errors.New("store: a spread claim needs at least one account")
	}
	db := s.db.WithContext(ctx)
	if s.dialect == Postgres {
		conns, provs := make([]string, len(among)), make([]string, len(among))
		for i, c := range among {
			conns[i], provs[i] = c.ConnectionID, c.Provider
		}
		var won []struct {
			Conn     string `gorm:"column:won_connection"`
			Provider string `gorm:"column:won_provider"`
			Expires  int64  `gorm:"column:won_expires"`
		}
		err := db.Raw(`SELECT won_connection, won_provider, won_expires FROM omniroute_claim_spread_pin(?, ?, ?::text[], ?::text[], ?, ?, ?)`,
			p.SessionKey, pool, pgTextArray(conns), pgTextArray(provs), p.ExpiresAt, p.UpdatedAt, nowMs).Scan(&won).Error
		if err != nil {
			return AffinityPin{}, err
		}
		if len(won) == 0 { // pruned between the function's statements: claim again
			return s.ClaimSpreadPin(ctx, p, pool, among, nowMs)
		}
		return AffinityPin{SessionKey: p.SessionKey, ConnectionID: won[0].Conn, Provider: won[0].Provider, ExpiresAt: won[0].Expires}, nil
	}
	var out AffinityPin
	err := db.Transaction(func(tx *gorm.DB) error {
		var held []AffinityPin
		if err := tx.Where("session_key = ? AND expires_at > ?", p.SessionKey, nowMs).Limit(1).Find(&held).Error; err != nil {
			return err
		}
		if len(held) == 1 {
			out = held[0]
			return nil
		}
		best, bestN := among[0], int64(-1)
		for _, c := range among {
			var n int64
			if err := tx.Model(&AffinityPin{}).Where("connection_id = ? AND expires_at > ?", c.ConnectionID, nowMs).Count(&n).Error; err != nil {
				return err
			}
			if bestN < 0 || n < bestN {
				best, bestN = c, n
			}
		}
		out = AffinityPin{SessionKey: p.SessionKey, ConnectionID: best.ConnectionID, Provider: best.Provider, ExpiresAt: p.ExpiresAt, UpdatedAt: p.UpdatedAt}
		return tx.Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "session_key"}},
			DoUpdates: clause.AssignmentColumns([]string{"connection_id", "provider", "expires_at", "updated_at"}),
		}).Create(&out).Error
	})
	return out, err
}

// pgTextArray writes vals as a PostgreSQL text[] literal, each element quoted.
func pgTextArray(vals []string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, v := range vals {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		for _, r := range v {
			if r == '"' || r == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}
