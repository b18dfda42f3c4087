package backup

import (
	"encoding/json"
	"fmt"
	"strings"

	"omniroute/backend/store"
)

// secretColumns are the columns holding a sealed secret, per table.
var secretColumns = map[string][]string{
	"provider_connections": {"api_key_enc", "access_token_enc", "refresh_token_enc"},
	"api_keys":             {"key_enc"},
}

// transform passes every secret of a row of table through fn: Open with one
// key to read it, Seal with another to write it.
func transform(table string, r store.Row, fn func(string) (string, error)) error {
	for _, c := range secretColumns[table] {
		v, ok := r[c].(string)
		if !ok || v == "" {
			continue
		}
		out, err := fn(v)
		if err != nil {
			return fmt.Errorf("%s of %v: %w", c, r["id"], err)
		}
		r[c] = out
	}
	if table != "provider_connections" {
		return nil
	}
	raw, ok := r["provider_specific_data"].(string)
	if !ok || raw == "" {
		return nil
	}
	var d map[string]any
	if json.Unmarshal([]byte(raw), &d) != nil {
		return nil
	}
	changed := false
	// The sealed values inside a connection's provider_specific_data are its
	// top-level fields ending in store.SealedFieldSuffix, as a provider
	// module's schema stores them (the store reseals the same ones).
	for k, val := range d {
		v, ok := val.(string)
		if !ok || v == "" || !strings.HasSuffix(k, store.SealedFieldSuffix) {
			continue
		}
		out, err := fn(v)
		if err != nil {
			return fmt.Errorf("provider_specific_data.%s of %v: %w", k, r["id"], err)
		}
		d[k], changed = out, true
	}
	if changed {
		b, _ := json.Marshal(d)
		r["provider_specific_data"] = string(b)
	}
	return nil
}
