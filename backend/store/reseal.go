package store

import (
	"encoding/json"
	"strings"

	"gorm.io/gorm"
)

// SealedFieldSuffix marks a top-level provider_specific_data field that holds
// a sealed value (the convention of the provider modules' schemas, e.g. an
// AWS session token's sessionTokenSealed; providers.SealedFieldSuffix).
const SealedFieldSuffix = "Sealed"

// ResealAll rewrites every sealed value in one transaction — the credential
// columns of provider_connections (api_key_enc, access_token_enc,
// refresh_token_enc and provider_specific_data's …Sealed fields) and the
// client keys (api_keys.key_enc) — with reseal (open with the old key, seal
// with the new). Empty values stay empty. Any error rolls everything back.
// It returns how many values it rewrote.
func (s *Store) ResealAll(reseal func(sealed string) (string, error)) (int, error) {
	n := 0
	err := s.transaction(s.db, func(tx *gorm.DB) error {
		one := func(v *string) error {
			if *v == "" {
				return nil
			}
			out, err := reseal(*v)
			if err != nil {
				return err
			}
			*v, n = out, n+1
			return nil
		}
		var conns []Connection
		if err := tx.Find(&conns).Error; err != nil {
			return err
		}
		for i := range conns {
			c := &conns[i]
			for _, v := range []*string{&c.APIKeyEnc, &c.AccessTokenEnc, &c.RefreshTokenEnc} {
				if err := one(v); err != nil {
					return err
				}
			}
			psd, err := resealFields(c.ProviderSpecificData, one)
			if err != nil {
				return err
			}
			if err := tx.Model(&Connection{}).Where("id = ?", c.ID).Updates(map[string]any{
				"api_key_enc": c.APIKeyEnc, "access_token_enc": c.AccessTokenEnc, "refresh_token_enc": c.RefreshTokenEnc,
				"provider_specific_data": psd}).Error; err != nil {
				return err
			}
		}
		var keys []APIKey
		if err := tx.Find(&keys).Error; err != nil {
			return err
		}
		for i := range keys {
			if err := one(&keys[i].KeyEnc); err != nil {
				return err
			}
			if err := tx.Model(&APIKey{}).Where("id = ?", keys[i].ID).Update("key_enc", keys[i].KeyEnc).Error; err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}

// resealFields reseals the …Sealed string fields of a JSON object ("" and
// non-objects are returned as they are).
func resealFields(raw string, one func(*string) error) (string, error) {
	if !strings.Contains(raw, SealedFieldSuffix) {
		return raw, nil
	}
	var m map[string]any
	if json.Unmarshal([]byte(raw), &m) != nil {
		return raw, nil
	}
	changed := false
	for k, v := range m {
		str, ok := v.(string)
		if !ok || !strings.HasSuffix(k, SealedFieldSuffix) {
			continue
		}
		if err := one(&str); err != nil {
			return "", err
		}
		m[k], changed = str, true
	}
	if !changed {
		return raw, nil
	}
	b, err := json.Marshal(m)
	return string(b), err
}
