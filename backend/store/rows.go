package store

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gorm.io/gorm"
)

// Row is one table row as column → value, the same in both dialects:
// integers int64, reals float64, text string, flags bool, NULL nil. Backups
// (package backup) read and write whole tables as rows.
type Row map[string]any

// Scope is a part of one table: every row, or with Namespaces the key_value
// rows of those namespaces only.
type Scope struct {
	Table      string
	Namespaces []string
}

// rowOrder orders each table's rows the same in every dialect, so two
// databases holding the same rows read the same.
var rowOrder = map[string]string{
	"provider_connections": "id", "api_keys": "id", "combos": "id", "key_value": "namespace, key",
	"request_logs": "id", "usage_rollup": "res, bucket, connection_id, model, api_key_id, provider", "key_spend": "api_key_id",
}

func (sc Scope) where() (string, []any) {
	if len(sc.Namespaces) == 0 {
		return "", nil
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(sc.Namespaces)), ", ")
	args := make([]any, len(sc.Namespaces))
	for i, n := range sc.Namespaces {
		args[i] = n
	}
	return ` WHERE namespace IN (` + marks + `)`, args
}

func (sc Scope) valid() error {
	if _, ok := rowOrder[sc.Table]; !ok {
		return fmt.Errorf("table %q cannot be read or replaced as rows", sc.Table)
	}
	if len(sc.Namespaces) > 0 && sc.Table != "key_value" {
		return fmt.Errorf("namespaces apply to key_value only, not %s", sc.Table)
	}
	return nil
}

// ReadRows returns the rows of sc in primary-key order.
func (s *Store) ReadRows(sc Scope) ([]Row, error) {
	if err := sc.valid(); err != nil {
		return nil, err
	}
	return readRows(s.db, sc)
}

// ReadScopes returns the rows of every scope from one snapshot of the
// database (one transaction, repeatable read on PostgreSQL), so a backup of
// a gateway that keeps writing is consistent across tables.
func (s *Store) ReadScopes(scopes []Scope) ([][]Row, error) {
	for _, sc := range scopes {
		if err := sc.valid(); err != nil {
			return nil, err
		}
	}
	out := make([][]Row, len(scopes))
	err := s.db.Transaction(func(tx *gorm.DB) error {
		if s.dialect == Postgres {
			if err := tx.Exec(`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY`).Error; err != nil {
				return err
			}
		}
		for i, sc := range scopes {
			rows, err := readRows(tx, sc)
			if err != nil {
				return err
			}
			out[i] = rows
		}
		return nil
	})
	return out, err
}

func readRows(db *gorm.DB, sc Scope) ([]Row, error) {
	where, args := sc.where()
	rows, err := db.Raw(`SELECT * FROM `+sc.Table+where+` ORDER BY `+rowOrder[sc.Table], args...).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	out := []Row{}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		r := make(Row, len(cols))
		for i, c := range cols {
			r[c] = canonical(vals[i], boolColumns[c])
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// canonical is a scanned value as a Row holds it.
func canonical(v any, isBool bool) any {
	switch x := v.(type) {
	case []byte:
		v = string(x)
	case int32:
		v = int64(x)
	case int:
		v = int64(x)
	case float32:
		v = float64(x)
	}
	if isBool && v != nil {
		return convert(v, true, Postgres) // a bool
	}
	return v
}

// ReplaceRows replaces, in one transaction, the rows of each scope with the
// given ones (a scope with no rows is emptied): either every scope is
// replaced or nothing changes. Columns a row does not name take their
// defaults (a row written by an older schema); json.Number values become
// integers or reals.
func (s *Store) ReplaceRows(scopes []Scope, rows [][]Row) error {
	if len(scopes) != len(rows) {
		return fmt.Errorf("%d scopes but %d row sets", len(scopes), len(rows))
	}
	for _, sc := range scopes {
		if err := sc.valid(); err != nil {
			return err
		}
	}
	return s.db.Transaction(func(tx *gorm.DB) error {
		for i, sc := range scopes {
			where, args := sc.where()
			if err := tx.Exec(`DELETE FROM `+sc.Table+where, args...).Error; err != nil {
				return fmt.Errorf("empty %s: %w", sc.Table, err)
			}
			for _, r := range rows[i] {
				if err := s.insertRow(tx, sc.Table, r); err != nil {
					return fmt.Errorf("restore %s: %w", sc.Table, err)
				}
			}
		}
		if s.dialect == Postgres {
			for _, sc := range scopes {
				if slices.Contains(identityTables, sc.Table) {
					if err := tx.Exec(`SELECT setval(pg_get_serial_sequence('` + sc.Table + `', 'id'), COALESCE((SELECT MAX(id) FROM ` + sc.Table + `), 0) + 1, false)`).Error; err != nil {
						return fmt.Errorf("continue the %s ids: %w", sc.Table, err)
					}
				}
			}
		}
		return nil
	})
}

func (s *Store) insertRow(tx *gorm.DB, table string, r Row) error {
	cols := make([]string, 0, len(r))
	for c := range r {
		if !validColumn(c) {
			return fmt.Errorf("invalid column name %q", c)
		}
		cols = append(cols, c)
	}
	slices.Sort(cols)
	quoted := make([]string, len(cols))
	vals := make([]any, len(cols))
	for i, c := range cols {
		quoted[i] = `"` + c + `"`
		v := r[c]
		if n, ok := v.(json.Number); ok {
			v = number(n)
		}
		vals[i] = convert(v, boolColumns[c], s.dialect)
	}
	q := `INSERT INTO ` + table + ` (` + strings.Join(quoted, ", ") + `) VALUES (` +
		strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + `)`
	return tx.Exec(q, vals...).Error
}

// number is a JSON number as an integer when it is one, else a real.
func number(n json.Number) any {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i
	}
	f, _ := n.Float64()
	return f
}

// validColumn accepts the column names the migrations use: lowercase
// letters, digits and '_'.
func validColumn(c string) bool {
	if c == "" || len(c) > 63 {
		return false
	}
	for _, r := range c {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}
