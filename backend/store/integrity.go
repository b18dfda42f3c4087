package store

// EncryptedCount reports how many stored values are sealed with the data
// directory's secret.key (provider credentials and client keys): when the key
// is missing and this is not zero, starting would strand them.
func (s *Store) EncryptedCount() (int64, error) {
	var n, m int64
	if err := s.db.Raw(`SELECT COUNT(*) FROM provider_connections
		WHERE api_key_enc <> '' OR access_token_enc <> '' OR refresh_token_enc <> ''`).Scan(&n).Error; err != nil {
		return 0, err
	}
	if err := s.db.Raw(`SELECT COUNT(*) FROM api_keys WHERE key_enc <> ''`).Scan(&m).Error; err != nil {
		return 0, err
	}
	return n + m, nil
}
