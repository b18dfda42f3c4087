package store

// RequestLogsBefore returns up to limit request log rows with an id below
// before (0: from the newest), newest first: one page of the log.
func (s *Store) RequestLogsBefore(before int64, limit int) ([]RequestLog, error) {
	var out []RequestLog
	q := s.db.Order("id DESC").Limit(limit)
	if before > 0 {
		q = q.Where("id < ?", before)
	}
	err := q.Find(&out).Error
	return out, err
}
