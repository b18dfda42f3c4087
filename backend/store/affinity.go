package store

import (
	"gorm.io/gorm/clause"
)

// AffinityPin is one persisted session → connection pin.
type AffinityPin struct {
	SessionKey   string `gorm:"column:session_key;primaryKey"`
	ConnectionID string `gorm:"column:connection_id"`
	Provider     string `gorm:"column:provider"`
	ExpiresAt    int64  `gorm:"column:expires_at"`
	UpdatedAt    int64  `gorm:"column:updated_at"`
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
