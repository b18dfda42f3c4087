package store

import "errors"

// SaveRequestBodies stores one request's captured bodies (replacing any
// earlier capture under the same request id).
func (s *Store) SaveRequestBodies(b *RequestBodies) error {
	return s.db.Save(b).Error
}

// RequestBodies returns one request's captured bodies (ErrNotFound: none).
func (s *Store) RequestBodies(requestID string) (RequestBodies, error) {
	var out RequestBodies
	err := s.db.Where("request_id = ?", requestID).Limit(1).Find(&out).Error
	if err == nil && out.RequestID == "" {
		err = ErrNotFound
	}
	return out, err
}

// RequestIDsWithBodies returns which of ids have captured bodies created at
// or after since (Unix ms: the older ones have expired).
func (s *Store) RequestIDsWithBodies(ids []string, since int64) (map[string]bool, error) {
	out := map[string]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	var got []string
	if err := s.db.Model(&RequestBodies{}).Where("request_id IN ? AND created_at >= ?", ids, since).Pluck("request_id", &got).Error; err != nil {
		return nil, err
	}
	for _, id := range got {
		out[id] = true
	}
	return out, nil
}

// DeleteRequestBodiesBefore drops the bodies captured before ms (Unix ms).
func (s *Store) DeleteRequestBodiesBefore(ms int64) error {
	return s.db.Where("created_at < ?", ms).Delete(&RequestBodies{}).Error
}

// PruneRequestBodies drops the oldest captures until the kept ones hold at
// most keepBytes.
func (s *Store) PruneRequestBodies(keepBytes int64) error {
	if keepBytes < 0 {
		return errors.New("store: negative body budget")
	}
	var rows []struct {
		RequestID string
		Bytes     int64
	}
	if err := s.db.Model(&RequestBodies{}).Select("request_id, bytes").Order("created_at DESC, request_id DESC").Scan(&rows).Error; err != nil {
		return err
	}
	var total int64
	var drop []string
	for _, r := range rows {
		if total+r.Bytes > keepBytes {
			drop = append(drop, r.RequestID)
			continue
		}
		total += r.Bytes
	}
	for len(drop) > 0 {
		n := min(len(drop), 500)
		if err := s.db.Where("request_id IN ?", drop[:n]).Delete(&RequestBodies{}).Error; err != nil {
			return err
		}
		drop = drop[n:]
	}
	return nil
}
