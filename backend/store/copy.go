package store

import (
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// copyTables are the tables CopyInto moves, parents before the rows that name
// them; schema_migrations is not copied (each side has its own, and both must
// be at the same version).
var copyTables = []string{
	"provider_connections", "api_keys", "combos", "key_value", "domain_circuit_breakers",
	"session_account_affinity", "exclusive_connection_leases", "request_logs", "usage_rollup", "state_events",
	"model_locks", "key_spend", "request_bodies", "connection_slots", "connection_pacing",
	"users", "user_sessions", "management_tokens", "audit_log", "model_prefill", "key_rate_tokens", "budget_alerts",
}

// boolColumns are stored as 0/1 integers in SQLite and as BOOLEAN in PostgreSQL.
var boolColumns = map[string]bool{"is_active": true, "rate_limit_protection": true, "is_default": true, "stream": true, "cleared": true, "private": true}

// identityTables have an auto-increment id whose PostgreSQL sequence must
// continue after the copied rows.
var identityTables = []string{"request_logs", "state_events", "audit_log", "key_rate_tokens"}

// copyBatch is the number of rows per multi-row INSERT.
const copyBatch = 200

// ErrNotEmpty is returned when CopyInto's destination already holds data.
var ErrNotEmpty = errors.New("the destination database is not empty")

// TableCount is how many rows CopyInto moved for one table.
type TableCount struct {
	Table string
	Rows  int64
}

// CopyInto copies every row of every table of s into dst (an empty database
// of the other dialect, migrated to the same schema version) in one
// transaction of dst: either everything arrives or nothing does. Values are
// copied as stored (secrets stay sealed with the source's secret.key);
// integer flags become booleans and back as the destination needs.
func (s *Store) CopyInto(dst *Store) ([]TableCount, error) {
	sv, err := s.SchemaVersion()
	if err != nil {
		return nil, err
	}
	dv, err := dst.SchemaVersion()
	if err != nil {
		return nil, err
	}
	if sv != dv {
		return nil, fmt.Errorf("schema versions differ: source %d, destination %d", sv, dv)
	}
	for _, t := range copyTables {
		var n int64
		if err := dst.db.Raw(`SELECT COUNT(*) FROM ` + t).Scan(&n).Error; err != nil {
			return nil, err
		}
		if n > 0 {
			return nil, fmt.Errorf("%w: %s has %d row(s); import into a new, empty database", ErrNotEmpty, t, n)
		}
	}
	var out []TableCount
	err = dst.db.Transaction(func(tx *gorm.DB) error {
		for _, t := range copyTables {
			n, err := s.copyTable(tx, dst.dialect, t)
			if err != nil {
				return fmt.Errorf("copy %s: %w", t, err)
			}
			out = append(out, TableCount{t, n})
		}
		if dst.dialect == Postgres {
			for _, t := range identityTables {
				if err := tx.Exec(`SELECT setval(pg_get_serial_sequence('` + t + `', 'id'), COALESCE((SELECT MAX(id) FROM ` + t + `), 0) + 1, false)`).Error; err != nil {
					return fmt.Errorf("continue the %s ids: %w", t, err)
				}
			}
		}
		return nil
	})
	return out, err
}

func (s *Store) copyTable(tx *gorm.DB, to Dialect, table string) (int64, error) {
	rows, err := s.db.Raw(`SELECT * FROM ` + table).Rows()
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = `"` + c + `"`
	}
	head := `INSERT INTO ` + table + ` (` + strings.Join(quoted, ", ") + `) VALUES `
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	var n int64
	var batch []any
	inBatch := 0
	flush := func() error {
		if inBatch == 0 {
			return nil
		}
		q := head + strings.TrimSuffix(strings.Repeat(one+", ", inBatch), ", ")
		err := tx.Exec(q, batch...).Error
		batch, inBatch = batch[:0], 0
		return err
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		for i, c := range cols {
			vals[i] = convert(vals[i], boolColumns[c], to)
		}
		batch = append(batch, vals...)
		inBatch++
		n++
		if inBatch == copyBatch {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return n, err
	}
	return n, flush()
}

// convert maps one scanned value to what the destination dialect stores.
func convert(v any, isBool bool, to Dialect) any {
	if b, ok := v.([]byte); ok {
		v = string(b)
	}
	if !isBool || v == nil {
		return v
	}
	var truth bool
	switch x := v.(type) {
	case bool:
		truth = x
	case int64:
		truth = x != 0
	case string:
		truth = x == "1" || strings.EqualFold(x, "true") || x == "t"
	default:
		return v
	}
	if to == Postgres {
		return truth
	}
	if truth {
		return int64(1)
	}
	return int64(0)
}

// CopyTables names every table CopyInto moves (a copy): every table of the
// schema but schema_migrations. Backups classify each (package backup).
func CopyTables() []string { return append([]string(nil), copyTables...) }
