package store

// PrefillRow is what the gateway learned of one (connection, model)'s
// assistant prefill: State "honoured" or "refused", Source "learned" (a
// continuation showed it) or "probe" (the connection Test's one-token
// probe), LearnedAt in Unix milliseconds.
type PrefillRow struct {
	ConnectionID string `gorm:"column:connection_id;primaryKey"`
	Model        string `gorm:"column:model;primaryKey"`
	State        string `gorm:"column:state"`
	Source       string `gorm:"column:source"`
	LearnedAt    int64  `gorm:"column:learned_at"`
}

// TableName names the table.
func (PrefillRow) TableName() string { return TableModelPrefill }

// SavePrefill upserts what was learned of a (connection, model)'s prefill.
func (s *Store) SavePrefill(r PrefillRow) error {
	return s.db.Exec(`INSERT INTO model_prefill (connection_id, model, state, source, learned_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (connection_id, model) DO UPDATE SET state = excluded.state, source = excluded.source, learned_at = excluded.learned_at`,
		r.ConnectionID, r.Model, r.State, r.Source, r.LearnedAt).Error
}

// Prefills returns every learned prefill row, by connection and model.
func (s *Store) Prefills() ([]PrefillRow, error) {
	var out []PrefillRow
	err := s.db.Order("connection_id, model").Find(&out).Error
	return out, err
}

// DeletePrefills forgets what was learned of a connection's models (the
// connection was deleted).
func (s *Store) DeletePrefills(connectionID string) error {
	return s.db.Where("connection_id = ?", connectionID).Delete(&PrefillRow{}).Error
}
