package store

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestReplaceRows: rows read from one dialect are written back the same in
// either (flags as booleans, numbers from JSON), a scope limits key_value to
// its namespaces, and a failure in any scope leaves every scope as it was.
func TestReplaceRows(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		for _, kv := range [][3]string{{"settings", "general", `{"a":1}`}, {"probes", "openai", "owner"}} {
			if err := s.SetValue(kv[0], kv[1], kv[2]); err != nil {
				t.Fatal(err)
			}
		}
		settings := Scope{Table: "key_value", Namespaces: []string{"settings"}}
		keys := Scope{Table: "api_keys"}
		key := Row{"id": "k1", "name": "n", "key_hash": "h1", "is_default": true, "created_at": json.Number("5"), "budget": `{"usd":1.5}`}
		if err := s.ReplaceRows([]Scope{settings, keys}, [][]Row{
			{{"namespace": "settings", "key": "resilience", "value": "{}", "updated_at": int64(7)}},
			{key},
		}); err != nil {
			t.Fatal(err)
		}
		got, err := s.ReadRows(settings)
		if err != nil || len(got) != 1 || got[0]["key"] != "resilience" || got[0]["updated_at"] != int64(7) {
			t.Fatalf("settings after replace: %v %v", got, err)
		}
		if v, ok, _ := s.GetValue("probes", "openai"); !ok || v != "owner" {
			t.Fatal("a namespace outside the scope was touched")
		}
		rows, err := s.ReadRows(keys)
		if err != nil || len(rows) != 1 || rows[0]["is_default"] != true || rows[0]["created_at"] != int64(5) || rows[0]["scopes"] != "[]" {
			t.Fatalf("keys after replace: %v %v", rows, err)
		}

		// The second scope fails (a duplicate key hash): the first is rolled back.
		dup := Row{"id": "k2", "name": "n", "key_hash": "same", "created_at": int64(1)}
		dup2 := Row{"id": "k3", "name": "n", "key_hash": "same", "created_at": int64(1)}
		err = s.ReplaceRows([]Scope{settings, keys}, [][]Row{nil, {dup, dup2}})
		if err == nil {
			t.Fatal("a duplicate key hash was accepted")
		}
		if got, _ := s.ReadRows(settings); len(got) != 1 {
			t.Fatalf("a failed replace emptied another scope: %v", got)
		}
		if rows, _ := s.ReadRows(keys); len(rows) != 1 || rows[0]["id"] != "k1" {
			t.Fatalf("a failed replace changed the keys: %v", rows)
		}

		for _, tc := range []struct {
			name   string
			scopes []Scope
			rows   [][]Row
			want   string
		}{
			{"runtime table", []Scope{{Table: "model_locks"}}, [][]Row{nil}, "cannot be read or replaced"},
			{"namespaces elsewhere", []Scope{{Table: "combos", Namespaces: []string{"x"}}}, [][]Row{nil}, "key_value only"},
			{"bad column", []Scope{keys}, [][]Row{{{`id"; DROP TABLE api_keys; --`: "x"}}}, "invalid column name"},
			{"count mismatch", []Scope{keys}, nil, "row sets"},
		} {
			if err := s.ReplaceRows(tc.scopes, tc.rows); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
			}
		}
		if rows, _ := s.ReadRows(keys); len(rows) != 1 {
			t.Fatalf("a refused replace changed the keys: %v", rows)
		}
	})
}
