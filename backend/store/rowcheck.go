package store

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ColumnKind is what a column stores, the same in both dialects.
type ColumnKind string

// Column kinds.
const (
	KindText    ColumnKind = "text"
	KindInteger ColumnKind = "integer"
	KindReal    ColumnKind = "real"
	KindBool    ColumnKind = "bool"
)

// Column is one column of a table as the database declares it.
type Column struct {
	Name       string
	Kind       ColumnKind
	NotNull    bool
	HasDefault bool
}

// RowError names the row and column a check refused (no value: a row may
// hold a secret).
type RowError struct {
	Table  string
	Row    int    // 0-based position in the table's rows
	ID     string // the row's id (or key) when it has one
	Column string
	Reason string
}

func (e *RowError) Error() string {
	where := fmt.Sprintf("%s row %d", e.Table, e.Row+1)
	if e.ID != "" {
		where += fmt.Sprintf(" (%s)", e.ID)
	}
	if e.Column != "" {
		where += " column " + e.Column
	}
	return where + ": " + e.Reason
}

// uniqueColumns are each table's unique column sets beside its primary key
// (rowOrder): what an INSERT would refuse as a duplicate.
var uniqueColumns = map[string][][]string{
	"provider_connections": {{"id"}},
	"api_keys":             {{"id"}, {"key_hash"}},
	"combos":               {{"id"}, {"name"}},
	"key_value":            {{"namespace", "key"}},
	"request_logs":         {{"id"}},
	"usage_rollup":         {{"res", "bucket", "connection_id", "model", "api_key_id", "provider"}},
	"key_spend":            {{"api_key_id"}},
}

// Columns returns table's columns as the database declares them.
func (s *Store) Columns(table string) ([]Column, error) {
	if err := (Scope{Table: table}).valid(); err != nil {
		return nil, err
	}
	var out []Column
	if s.dialect == Postgres {
		var rows []struct {
			Name     string  `gorm:"column:column_name"`
			Type     string  `gorm:"column:data_type"`
			Nullable string  `gorm:"column:is_nullable"`
			Default  *string `gorm:"column:column_default"`
		}
		if err := s.db.Raw(`SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = ?`, table).Scan(&rows).Error; err != nil {
			return nil, err
		}
		for _, r := range rows {
			out = append(out, Column{Name: r.Name, Kind: kindOf(r.Type, r.Name), NotNull: r.Nullable == "NO", HasDefault: r.Default != nil})
		}
	} else {
		var rows []struct {
			Name    string  `gorm:"column:name"`
			Type    string  `gorm:"column:type"`
			NotNull int     `gorm:"column:notnull"`
			Default *string `gorm:"column:dflt_value"`
			PK      int     `gorm:"column:pk"`
		}
		if err := s.db.Raw(`SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?)`, table).Scan(&rows).Error; err != nil {
			return nil, err
		}
		for _, r := range rows {
			kind := kindOf(r.Type, r.Name)
			// An INTEGER PRIMARY KEY is the rowid: given when absent.
			auto := r.PK > 0 && kind == KindInteger
			out = append(out, Column{Name: r.Name, Kind: kind, NotNull: r.NotNull != 0 || r.PK > 0 && !auto, HasDefault: r.Default != nil || auto})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("table %s has no columns", table)
	}
	return out, nil
}

// kindOf maps a declared type to a kind (SQLite's affinity rules, and
// PostgreSQL's data_type names).
func kindOf(declared, name string) ColumnKind {
	if boolColumns[name] {
		return KindBool
	}
	t := strings.ToUpper(declared)
	switch {
	case strings.Contains(t, "BOOL"):
		return KindBool
	case strings.Contains(t, "INT"):
		return KindInteger
	case strings.Contains(t, "REAL"), strings.Contains(t, "FLOA"), strings.Contains(t, "DOUB"), strings.Contains(t, "NUMERIC"), strings.Contains(t, "DECIMAL"):
		return KindReal
	}
	return KindText
}

// CheckRows checks, without writing, that ReplaceRows would write every row
// as the schema types it: each column known, of its kind (text a string,
// integers whole numbers, reals numbers, flags booleans or 0/1), no NULL or
// missing value where the column needs one, and no two rows with the same
// primary or unique key. The first problem is returned as a *RowError.
func (s *Store) CheckRows(scopes []Scope, rows [][]Row) error {
	if len(scopes) != len(rows) {
		return fmt.Errorf("%d scopes but %d row sets", len(scopes), len(rows))
	}
	for i, sc := range scopes {
		if err := sc.valid(); err != nil {
			return err
		}
		cols, err := s.Columns(sc.Table)
		if err != nil {
			return err
		}
		byName := make(map[string]Column, len(cols))
		for _, c := range cols {
			byName[c.Name] = c
		}
		seen := make([]map[string]bool, len(uniqueColumns[sc.Table]))
		for u := range seen {
			seen[u] = map[string]bool{}
		}
		for n, r := range rows[i] {
			fail := func(col, reason string) error {
				return &RowError{Table: sc.Table, Row: n, ID: rowID(r), Column: col, Reason: reason}
			}
			for name, v := range r {
				c, ok := byName[name]
				if !ok {
					return fail(name, "no such column")
				}
				if reason := c.refuses(v); reason != "" {
					return fail(name, reason)
				}
			}
			for _, c := range cols {
				if _, ok := r[c.Name]; !ok && c.NotNull && !c.HasDefault {
					return fail(c.Name, "missing (the column needs a value)")
				}
			}
			if len(sc.Namespaces) > 0 {
				if ns, _ := r["namespace"].(string); !containsString(sc.Namespaces, ns) {
					return fail("namespace", "outside the namespaces restored here")
				}
			}
			for u, set := range uniqueColumns[sc.Table] {
				k, err := json.Marshal(pick(r, set))
				if err != nil {
					return fail(strings.Join(set, ", "), "unreadable key")
				}
				if seen[u][string(k)] {
					return fail(strings.Join(set, ", "), "duplicate of an earlier row")
				}
				seen[u][string(k)] = true
			}
		}
	}
	return nil
}

// refuses says why v cannot be stored in c ("" when it can).
func (c Column) refuses(v any) string {
	if v == nil {
		if c.NotNull {
			return "null (the column needs a value)"
		}
		return ""
	}
	switch c.Kind {
	case KindText:
		if _, ok := v.(string); !ok {
			return "not text"
		}
	case KindInteger:
		if !isInteger(v) {
			return "not a whole number"
		}
	case KindReal:
		if !isNumber(v) {
			return "not a number"
		}
	case KindBool:
		if _, ok := v.(bool); ok {
			return ""
		}
		if n, ok := integerOf(v); ok && (n == 0 || n == 1) {
			return ""
		}
		return "not a flag (true, false, 0 or 1)"
	}
	return ""
}

func isInteger(v any) bool {
	_, ok := integerOf(v)
	return ok
}

func integerOf(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case json.Number:
		n, err := strconv.ParseInt(string(x), 10, 64)
		return n, err == nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
	}
	return 0, false
}

func isNumber(v any) bool {
	switch x := v.(type) {
	case int64, int:
		return true
	case float64:
		return !math.IsInf(x, 0) && !math.IsNaN(x)
	case json.Number:
		f, err := x.Float64()
		return err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
	}
	return false
}

func pick(r Row, cols []string) []any {
	out := make([]any, len(cols))
	for i, c := range cols {
		v := r[c]
		if n, ok := v.(json.Number); ok {
			v = number(n)
		}
		out[i] = v
	}
	return out
}

func rowID(r Row) string {
	for _, c := range []string{"id", "key", "api_key_id"} {
		switch v := r[c].(type) {
		case string:
			if len(v) > 64 {
				v = v[:64]
			}
			return v
		case json.Number:
			return string(v)
		case int64:
			return strconv.FormatInt(v, 10)
		}
	}
	return ""
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
