package pricing

import "encoding/json"

// Namespace is the key_value namespace holding each connection's pricing
// override (key: the connection id; value: an Override as JSON).
const Namespace = "pricing"

// ValueReader reads one key_value namespace (the store).
type ValueReader interface {
	Values(namespace string) (map[string]string, error)
}

// Load replaces t's overrides with the ones stored under Namespace (at
// start, and on a team server when another instance changed a connection:
// a PATCH of its pricing saves the connection too). A damaged or empty
// stored override is skipped: that connection prices at the catalogue's
// prices. On a read error t is left as it was.
func Load(src ValueReader, t *Table) error {
	vals, err := src.Values(Namespace)
	if err != nil {
		return err
	}
	all := make(map[string]Override, len(vals))
	for id, v := range vals {
		var o Override
		if err := json.Unmarshal([]byte(v), &o); err != nil || o.Empty() {
			continue // a damaged override prices at the catalogue's prices
		}
		all[id] = o
	}
	t.ReplaceOverrides(all)
	return nil
}
