package store

import (
	"context"

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
