package bench

import (
	"fmt"
	"testing"
	"time"

	"omniroute/backend/store"
	"omniroute/tests/pgtest"
)

// BenchmarkPostgresRequestLog measures what a team server's request-log
// writer costs the gateway process per logged request on PostgreSQL, in the
// writer's batches (backend/reqlog, 256 rows): "insert" is the store's
// InsertRequestLogs (on PostgreSQL its portable path: 16-row multi-row INSERTs
// and one upsert per rollup cell in a transaction), "sink" is what the writer uses, Store.RequestLogSink (the
// rows and the rollup as column arrays, one round trip). cpu-ns/row is this
// process's CPU only (the server is another process); ns/op is wall time.
// Needs PostgreSQL (OMNIROUTE_TEST_PG_URL, or initdb/pg_ctl installed).
func BenchmarkPostgresRequestLog(b *testing.B) {
	srv, err := pgtest.Start()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Stop)
	for _, variant := range []string{"insert", "sink"} {
		b.Run(variant, func(b *testing.B) {
			st, err := store.OpenPostgres(srv.NewDatabase(b))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = st.Close() })
			write := st.InsertRequestLogs
			if variant == "sink" {
				write = st.RequestLogSink().InsertRequestLogs
			}
			const n = 256
			batch := make([]store.RequestLog, 0, n)
			b.ReportAllocs()
			cpu0 := processCPU()
			i := 0
			for b.Loop() {
				i++
				batch = append(batch, store.RequestLog{RequestID: fmt.Sprintf("req_%016x", i), CreatedAt: time.Now().UnixMilli(),
					APIKeyID: "key_default", ClientFormat: "openai", Model: "openai-compatible/gpt-4o-mini",
					Provider: "openai-compatible:bench", ConnectionID: "conn_0123456789abcdef", Status: 200, AttemptCount: 1,
					Attempts:  `[{"connectionId":"conn_0123456789abcdef","provider":"openai-compatible:bench","model":"gpt-4o-mini","status":200,"verdict":"success","latencyMs":1}]`,
					LatencyMs: 1, PromptTokens: 9, CompletionTokens: 12})
				if len(batch) == n {
					if err := write(batch); err != nil {
						b.Fatal(err)
					}
					batch = batch[:0]
				}
			}
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/row")
		})
	}
}
