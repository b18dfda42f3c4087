package store

// ModelLockRow is one model lockout or model cooldown as the instances of a
// team server share it: the newest lock any instance wrote under its key, or
// a tombstone (Cleared, ExpiresAt = the clear time) telling the others to drop
// it. Times are Unix milliseconds.
type ModelLockRow struct {
	// Layer is LayerLockout or LayerCooldown.
	Layer        string `gorm:"column:layer;primaryKey"`
	Key          string `gorm:"column:lock_key;primaryKey"`
	Provider     string `gorm:"column:provider"`
	ConnectionID string `gorm:"column:connection_id"`
	Model        string `gorm:"column:model"`
	Scope        string `gorm:"column:scope"`
	Reason       string `gorm:"column:reason"`
	Status       int    `gorm:"column:status"`
	FailureCount int    `gorm:"column:failure_count"`
	LockedAt     int64  `gorm:"column:locked_at"`
	ExpiresAt    int64  `gorm:"column:expires_at"`
	Cleared      bool   `gorm:"column:cleared"`
}

// TableName names the table.
func (ModelLockRow) TableName() string { return TableModelLocks }

// Layers of ModelLockRow: the opt-in model lockout and the always-on model
// cooldown.
const (
	LayerLockout  = "lockout"
	LayerCooldown = "cooldown"
)

// SaveModelLock upserts a lock or tombstone unless the row already holds a
// newer one (a later LockedAt, written by another instance): of two instances
// writing one key the latest write wins, whatever order they land in.
func (s *Store) SaveModelLock(r ModelLockRow) error {
	return s.db.Exec(`INSERT INTO model_locks (layer, lock_key, provider, connection_id, model, scope, reason, status,
    failure_count, locked_at, expires_at, cleared) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (layer, lock_key) DO UPDATE SET provider = excluded.provider, connection_id = excluded.connection_id,
    model = excluded.model, scope = excluded.scope, reason = excluded.reason, status = excluded.status,
    failure_count = excluded.failure_count, locked_at = excluded.locked_at, expires_at = excluded.expires_at,
    cleared = excluded.cleared
WHERE excluded.locked_at >= model_locks.locked_at`,
		r.Layer, r.Key, r.Provider, r.ConnectionID, r.Model, r.Scope, r.Reason, r.Status,
		r.FailureCount, r.LockedAt, r.ExpiresAt, r.Cleared).Error
}

// ModelLocks deletes the rows whose expiry is more than keepMs before nowMs
// (expired locks, and tombstones old enough that every instance has read
// them: the table stays bounded by recent locks) and returns the rest, locks
// and tombstones alike, by layer and key.
func (s *Store) ModelLocks(nowMs, keepMs int64) ([]ModelLockRow, error) {
	if err := s.db.Where("expires_at < ?", nowMs-keepMs).Delete(&ModelLockRow{}).Error; err != nil {
		return nil, err
	}
	var out []ModelLockRow
	err := s.db.Order("layer, lock_key").Find(&out).Error
	return out, err
}
