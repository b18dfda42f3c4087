package store

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"
)

// UsageDimension names the request-log column a usage chart splits by.
type UsageDimension string

// Usage dimensions.
const (
	ByConnection UsageDimension = "connection_id"
	ByModel      UsageDimension = "model"
	ByKey        UsageDimension = "api_key_id"
	ByProvider   UsageDimension = "provider"
)

// OtherKey is the series key that gathers every key outside the top ones.
const OtherKey = "~other"

// UsageQuery is one chart query: [From, To) in unix ms cut into buckets of
// BucketMs, split by Dim.
type UsageQuery struct {
	From, To int64
	BucketMs int64
	Dim      UsageDimension
}

// UsageCell is one (bucket, series) aggregate.
type UsageCell struct {
	Bucket       int
	Key          string
	Requests     int64
	Errors       int64
	TokensIn     int64
	TokensOut    int64
	TokensCached int64
	// Latency counts the cell's requests per latency bin (len(LatencyBinsMs)+1).
	Latency []int64
	// CostUSD is the cell's spend, SavedUSD what its flat-rate answers would
	// have cost at API prices, Unpriced its served requests of unknown price.
	CostUSD, SavedUSD float64
	Unpriced          int64
}

// LatencyBinsMs are the upper bounds of the latency histogram bins (the last
// bin is everything above the last bound).
var LatencyBinsMs = []int64{50, 100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000, 7500, 10000, 15000, 20000, 30000, 60000, 120000}

func (d UsageDimension) valid() bool {
	switch d {
	case ByConnection, ByModel, ByKey, ByProvider:
		return true
	}
	return false
}

// RollupResolutions are the bucket sizes (ms) usage_rollup keeps: 1 min, 15 min
// and 2 h, with how long each is kept.
var RollupResolutions = [3]struct{ Res, KeepMs int64 }{
	{60_000, 3 * 3_600_000},
	{900_000, 2 * 86_400_000},
	{7_200_000, 9 * 86_400_000},
}

// LatencyBin is the index of the LatencyBinsMs bin holding ms.
func LatencyBin(ms int64) int {
	for i, ub := range LatencyBinsMs {
		if ms < ub {
			return i
		}
	}
	return len(LatencyBinsMs)
}

var rollupLatencyCols = func() string {
	var b strings.Builder
	for i := 0; i <= len(LatencyBinsMs); i++ {
		fmt.Fprintf(&b, ", l%d", i)
	}
	return b.String()
}()

// rollupKey identifies one usage_rollup row.
type rollupKey struct {
	res, bucket                  int64
	conn, model, keyID, provider string
}

type rollupRow struct {
	requests, errors, in, out, cached int64
	lat                               [19]int64
	// cost and saved are USD; unpriced counts the served requests whose
	// price was unknown.
	cost, saved float64
	unpriced    int64
}

// rollupCells sums a batch of logs into its usage_rollup cells at every
// resolution: one per (resolution, bucket, connection, model, key, provider).
func rollupCells(rows []RequestLog) map[rollupKey]*rollupRow {
	agg := make(map[rollupKey]*rollupRow, len(RollupResolutions))
	// A batch's rows mostly share their cells: the previous row's cell of each
	// resolution is reused when the key is the same, without hashing it again.
	var last [3]struct {
		k rollupKey
		a *rollupRow
	}
	for _, r := range rows {
		for i, res := range RollupResolutions {
			k := rollupKey{res.Res, r.CreatedAt / res.Res * res.Res, r.ConnectionID, r.Model, r.APIKeyID, r.Provider}
			a := last[i].a
			if a == nil || last[i].k != k {
				if a = agg[k]; a == nil {
					a = &rollupRow{}
					agg[k] = a
				}
				last[i].k, last[i].a = k, a
			}
			a.requests++
			if r.Status >= 400 {
				a.errors++
			}
			a.in += int64(r.PromptTokens)
			a.out += int64(r.CompletionTokens)
			a.cached += int64(r.CachedTokens)
			a.lat[LatencyBin(r.LatencyMs)]++
			a.saved += r.SavedUSD
			if r.CostUSD.Valid {
				a.cost += r.CostUSD.Float64
			} else if r.Status < 400 {
				a.unpriced++
			}
		}
	}
	return agg
}

// rollup adds a batch's cells to usage_rollup, inside tx, one upsert each.
func (s *Store) rollup(tx *sql.Tx, agg map[rollupKey]*rollupRow) error {
	stmt, err := tx.Prepare(s.bind(rollupUpsertSQL()))
	if err != nil {
		return err
	}
	defer stmt.Close()
	args := make([]any, 0, 11+len(LatencyBinsMs)+1)
	for k, a := range agg {
		args = append(args[:0], k.res, k.bucket, k.conn, k.model, k.keyID, k.provider, a.requests, a.errors, a.in, a.out, a.cached)
		for _, n := range a.lat[:len(LatencyBinsMs)+1] {
			args = append(args, n)
		}
		args = append(args, a.cost, a.saved, a.unpriced)
		if _, err := stmt.Exec(args...); err != nil {
			return err
		}
	}
	return nil
}

// pruneRollup drops rollup rows older than each resolution keeps.
// pruneRollupSQL deletes the cells of a resolution (bound twice) more than
// the third parameter's milliseconds older than its newest bucket.
const pruneRollupSQL = `DELETE FROM usage_rollup WHERE res = ? AND bucket < (SELECT COALESCE(MAX(bucket), 0) FROM usage_rollup WHERE res = ?) - ?`

func (s *Store) pruneRollup() error {
	for _, r := range RollupResolutions {
		if err := s.db.Exec(pruneRollupSQL, r.Res, r.Res, r.KeepMs).Error; err != nil {
			return err
		}
	}
	return nil
}

// Usage aggregates the request log's rollup at the chart's resolution
// (q.BucketMs must be one of RollupResolutions): one cell per (bucket, key of
// Dim) present, each with its latency histogram. It reads at most
// buckets × distinct (connection, model, key, provider) rollup rows, however many
// requests were logged; the caller folds keys beyond its top ones into OtherKey.
func (s *Store) Usage(q UsageQuery) ([]UsageCell, error) {
	ok := false
	for _, r := range RollupResolutions {
		ok = ok || r.Res == q.BucketMs
	}
	if !q.Dim.valid() || !ok {
		return nil, fmt.Errorf("usage: bad query %+v", q)
	}
	var sums strings.Builder
	for i := 0; i <= len(LatencyBinsMs); i++ {
		fmt.Fprintf(&sums, ", CAST(SUM(l%d) AS BIGINT)", i)
	}
	// SUM is cast back to BIGINT: PostgreSQL widens a BIGINT sum to NUMERIC.
	rows, err := s.db.Raw(`SELECT `+string(q.Dim)+` AS k, (bucket - ?) / ? AS b, CAST(SUM(requests) AS BIGINT), CAST(SUM(errors) AS BIGINT),
		CAST(SUM(tokens_in) AS BIGINT), CAST(SUM(tokens_out) AS BIGINT), CAST(SUM(tokens_cached) AS BIGINT)`+sums.String()+`,
		SUM(cost_usd), SUM(saved_usd), CAST(SUM(unpriced) AS BIGINT)
		FROM usage_rollup WHERE res = ? AND bucket >= ? AND bucket < ? GROUP BY b, k`, q.From, q.BucketMs, q.BucketMs, q.From, q.To).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []UsageCell
	for rows.Next() {
		c := UsageCell{Latency: make([]int64, len(LatencyBinsMs)+1)}
		dst := []any{&c.Key, &c.Bucket, &c.Requests, &c.Errors, &c.TokensIn, &c.TokensOut, &c.TokensCached}
		for i := range c.Latency {
			dst = append(dst, &c.Latency[i])
		}
		dst = append(dst, &c.CostUSD, &c.SavedUSD, &c.Unpriced)
		if err := rows.Scan(dst...); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// StateEvent is one resilience state change (a breaker transition or a
// connection entering or leaving a cooldown) kept for the usage timeline.
type StateEvent struct {
	ID           int64  `gorm:"column:id;primaryKey;autoIncrement"`
	At           int64  `gorm:"column:at"`
	Provider     string `gorm:"column:provider"`
	ConnectionID string `gorm:"column:connection_id"`
	Kind         string `gorm:"column:kind"` // "breaker" or "cooldown"
	State        string `gorm:"column:state"`
	Until        int64  `gorm:"column:until"`
	Detail       string `gorm:"column:detail"`
}

// TableName names the table.
func (StateEvent) TableName() string { return "state_events" }

// InsertStateEvent appends one state change and keeps the newest keep rows.
func (s *Store) InsertStateEvent(e StateEvent, keep int) error {
	if err := s.db.Create(&e).Error; err != nil {
		return err
	}
	if keep > 0 && e.ID%100 == 0 {
		return s.db.Exec(`DELETE FROM state_events WHERE id <= ?`, e.ID-int64(keep)).Error
	}
	return nil
}

// StateEvents returns the state changes in [from, to), oldest first, at most
// limit, plus the last change of each provider/connection before from (so a
// timeline knows the state it starts in).
func (s *Store) StateEvents(from, to int64, limit int) ([]StateEvent, error) {
	var before []StateEvent
	if err := s.db.Raw(`SELECT * FROM state_events WHERE id IN (SELECT MAX(id) FROM state_events WHERE at < ?
		GROUP BY provider, connection_id, kind) ORDER BY id LIMIT ?`, from, limit).Scan(&before).Error; err != nil {
		return nil, err
	}
	// The newest limit changes of the range: when a busy range has more, its
	// oldest stretch is dropped, never the present.
	var in []StateEvent
	err := s.db.Where("at >= ? AND at < ?", from, to).Order("at DESC, id DESC").Limit(limit).Find(&in).Error
	slices.Reverse(in)
	return append(before, in...), err
}

// RebuildUsageRollup recomputes usage_rollup from the request log (the
// migration's backfill; also a repair for a rollup that drifted).
func (s *Store) RebuildUsageRollup() error {
	var bins strings.Builder
	lo := int64(-1)
	for _, ub := range LatencyBinsMs {
		fmt.Fprintf(&bins, ", SUM(CASE WHEN latency_ms > %d AND latency_ms < %d THEN 1 ELSE 0 END)", lo, ub)
		lo = ub - 1
	}
	fmt.Fprintf(&bins, ", SUM(CASE WHEN latency_ms > %d THEN 1 ELSE 0 END)", lo)
	return s.transaction(s.db, func(tx *gorm.DB) error {
		if err := tx.Exec(`DELETE FROM usage_rollup`).Error; err != nil {
			return err
		}
		for _, r := range RollupResolutions {
			if err := tx.Exec(`INSERT INTO usage_rollup (res, bucket, connection_id, model, api_key_id, provider, requests, errors,
				tokens_in, tokens_out, tokens_cached`+rollupLatencyCols+`, cost_usd, saved_usd, unpriced)
				SELECT CAST(? AS BIGINT), (created_at / ?) * ?, connection_id, model, api_key_id, provider, COUNT(*),
				SUM(CASE WHEN status >= 400 THEN 1 ELSE 0 END), SUM(prompt_tokens), SUM(completion_tokens), SUM(cached_tokens)`+bins.String()+`,
				COALESCE(SUM(cost_usd), 0), SUM(saved_usd), SUM(CASE WHEN status < 400 AND cost_usd IS NULL THEN 1 ELSE 0 END)
				FROM request_logs GROUP BY 2, 3, 4, 5, 6`, r.Res, r.Res, r.Res).Error; err != nil {
				return err
			}
		}
		return nil
	})
}

// rollupUpsertSQL adds one (res, bucket, connection, model, key, provider)
// cell to usage_rollup.
func rollupUpsertSQL() string {
	var b strings.Builder
	b.WriteString(`INSERT INTO usage_rollup (res, bucket, connection_id, model, api_key_id, provider, requests, errors, tokens_in, tokens_out, tokens_cached` +
		rollupLatencyCols + `, cost_usd, saved_usd, unpriced) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?` + strings.Repeat(", ?", len(LatencyBinsMs)+1) + ", ?, ?, ?)")
	b.WriteString(rollupAddOnConflict())
	return b.String()
}

// rollupAddOnConflict is the ON CONFLICT clause that adds a new cell's
// counts to the stored cell of the same key (both dialects).
func rollupAddOnConflict() string {
	var b strings.Builder
	b.WriteString(`
ON CONFLICT (res, bucket, connection_id, model, api_key_id, provider) DO UPDATE SET requests = usage_rollup.requests + excluded.requests,
	errors = usage_rollup.errors + excluded.errors, tokens_in = usage_rollup.tokens_in + excluded.tokens_in,
	tokens_out = usage_rollup.tokens_out + excluded.tokens_out, tokens_cached = usage_rollup.tokens_cached + excluded.tokens_cached`)
	for i := 0; i <= len(LatencyBinsMs); i++ {
		fmt.Fprintf(&b, ", l%d = usage_rollup.l%d + excluded.l%d", i, i, i)
	}
	b.WriteString(`, cost_usd = usage_rollup.cost_usd + excluded.cost_usd, saved_usd = usage_rollup.saved_usd + excluded.saved_usd,
	unpriced = usage_rollup.unpriced + excluded.unpriced`)
	return b.String()
}
