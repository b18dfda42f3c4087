package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// RequestLogSink is what the request-log writer (backend/reqlog) hands its
// batches to.
type RequestLogSink interface {
	InsertRequestLogs(rows []RequestLog) error
	PruneRequestLogs(keep int) error
}

// RequestLogSink returns where request-log batches go: the store itself on
// SQLite; on PostgreSQL a sink that sends a batch — its rows and its usage
// rollup — in one round trip (pgRequestLogs).
func (s *Store) RequestLogSink() RequestLogSink {
	if s.dialect == Postgres {
		return pgRequestLogs{s}
	}
	return s
}

// pgRequestLogs writes request-log batches to PostgreSQL as two statements
// pipelined in one round trip (one implicit transaction): the rows as column
// arrays unnested by one INSERT, and the batch's usage rollup as column
// arrays unnested by one upsert. Both statements have a fixed text whatever
// the batch size, so pgx prepares each once per connection. The portable
// path of InsertRequestLogs (multi-row INSERTs of 16 rows and one upsert per
// rollup cell in a transaction) costs the gateway's writer goroutine a round
// trip per statement instead: two dozen per 256-row batch.
type pgRequestLogs struct{ s *Store }

// PruneRequestLogs is the store's.
func (p pgRequestLogs) PruneRequestLogs(keep int) error { return p.s.PruneRequestLogs(keep) }

// pgRequestLogInsert inserts the unnested column arrays in array order.
const pgRequestLogInsert = `INSERT INTO request_logs (request_id, created_at, api_key_id, client_format, model, provider,
	connection_id, status, stream, attempt_count, attempts, latency_ms, error_code, prompt_tokens, completion_tokens,
	queue_ms, queue_reason, cached_tokens, cost_usd, saved_usd)
SELECT c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, c17, c18, c19, c20
FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[],
	$9::boolean[], $10::bigint[], $11::text[], $12::bigint[], $13::text[], $14::bigint[], $15::bigint[], $16::bigint[],
	$17::text[], $18::bigint[], $19::float8[], $20::float8[]) WITH ORDINALITY AS t(c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, c17, c18, c19, c20, ord)
ORDER BY ord`

// pgRollupUpsert adds the unnested rollup rows to usage_rollup (the keys
// are distinct: one statement may not update a row twice).
var pgRollupUpsert = func() string {
	var b strings.Builder
	b.WriteString(`INSERT INTO usage_rollup (res, bucket, connection_id, model, api_key_id, provider, requests, errors, tokens_in, tokens_out, tokens_cached` +
		rollupLatencyCols + `, cost_usd, saved_usd, unpriced)
SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[]`)
	last := 11 + len(LatencyBinsMs) + 1
	for i := 7; i <= last; i++ {
		fmt.Fprintf(&b, ", $%d::bigint[]", i)
	}
	fmt.Fprintf(&b, ", $%d::float8[], $%d::float8[], $%d::bigint[])", last+1, last+2, last+3)
	b.WriteString(rollupAddOnConflict())
	return b.String()
}()

// InsertRequestLogs writes rows and their usage rollup in one round trip.
func (p pgRequestLogs) InsertRequestLogs(rows []RequestLog) error {
	if len(rows) == 0 {
		return nil
	}
	return p.s.noteErr(p.insert(rows))
}

// insert sends one batch (InsertRequestLogs notes its outcome).
func (p pgRequestLogs) insert(rows []RequestLog) error {
	n := len(rows)
	var (
		reqID, key, format, model, provider, conn, attempts, errCode, queueReason = make([]string, n), make([]string, n),
			make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		created, status, attemptCount, latency, prompt, completion, queueMs, cached = make([]int64, n), make([]int64, n),
			make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
		stream = make([]bool, n)
		cost   = make([]*float64, n) // nil: NULL
		saved  = make([]float64, n)
	)
	for i, r := range rows {
		reqID[i], created[i], key[i], format[i], model[i], provider[i], conn[i] = r.RequestID, r.CreatedAt, r.APIKeyID, r.ClientFormat, r.Model, r.Provider, r.ConnectionID
		status[i], stream[i], attemptCount[i], attempts[i], latency[i], errCode[i] = int64(r.Status), r.Stream, int64(r.AttemptCount), r.Attempts, r.LatencyMs, r.ErrorCode
		prompt[i], completion[i], queueMs[i], queueReason[i], cached[i] = int64(r.PromptTokens), int64(r.CompletionTokens), r.QueueMs, r.QueueReason, int64(r.CachedTokens)
		saved[i] = r.SavedUSD
		if r.CostUSD.Valid {
			cost[i] = &rows[i].CostUSD.Float64
		}
	}
	batch := &pgx.Batch{}
	batch.Queue(pgRequestLogInsert, reqID, created, key, format, model, provider, conn, status, stream, attemptCount, attempts,
		latency, errCode, prompt, completion, queueMs, queueReason, cached, cost, saved)
	batch.Queue(pgRollupUpsert, rollupColumns(rows)...)

	sqlDB, err := p.s.db.DB()
	if err != nil {
		return err
	}
	ctx := context.Background()
	c, err := sqlDB.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Raw(func(driverConn any) error {
		sc, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("store: PostgreSQL connection of unexpected type %T", driverConn)
		}
		return sc.Conn().SendBatch(ctx, batch).Close()
	})
}

// rollupColumns sums rows into their usage_rollup cells (rollupCells) and
// returns the cells as pgRollupUpsert's column arrays.
func rollupColumns(rows []RequestLog) []any {
	agg := rollupCells(rows)
	n := len(agg)
	resCol, bucket := make([]int64, 0, n), make([]int64, 0, n)
	conn, model, key, provider := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	counts := make([][]int64, 5+len(LatencyBinsMs)+1) // requests, errors, in, out, cached, l0…
	for i := range counts {
		counts[i] = make([]int64, 0, n)
	}
	cost, saved, unpriced := make([]float64, 0, n), make([]float64, 0, n), make([]int64, 0, n)
	for k, a := range agg {
		cost, saved, unpriced = append(cost, a.cost), append(saved, a.saved), append(unpriced, a.unpriced)
		resCol, bucket = append(resCol, k.res), append(bucket, k.bucket)
		conn, model, key, provider = append(conn, k.conn), append(model, k.model), append(key, k.keyID), append(provider, k.provider)
		for j, v := range [5]int64{a.requests, a.errors, a.in, a.out, a.cached} {
			counts[j] = append(counts[j], v)
		}
		for j := 0; j <= len(LatencyBinsMs); j++ {
			counts[5+j] = append(counts[5+j], a.lat[j])
		}
	}
	out := []any{resCol, bucket, conn, model, key, provider}
	for _, c := range counts {
		out = append(out, c)
	}
	return append(out, cost, saved, unpriced)
}
