package bench

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"omniroute/backend/store"
)

// BenchmarkRequestLogInsert measures the store's cost per request-log row when
// the log writer (backend/reqlog) flushes batches of n rows with one
// InsertRequestLogs call each, as it does every second or every 256 rows. The
// writer's goroutine pays this on the gateway's CPU: off the request path, not
// off its core. One op is one row (b.N rows are written in batches of n), so
// ns/op is the cost per logged request. The "+retention" case also deletes
// what the writer's retention deletes (keeping the default 10,000 rows once
// the log is full: in each batch's transaction, InsertRequestLogsRetaining,
// and PruneRequestLogs every 1,000 rows for the rollup), so at steady state
// every row is also removed: the whole cost of logging a request. cpu-µs/op is the
// process's CPU time per row (the writer's goroutine, the GC and SQLite alike).
func BenchmarkRequestLogInsert(b *testing.B) {
	for _, c := range []struct {
		n     int
		prune bool
	}{{1, false}, {16, false}, {64, false}, {256, false}, {64, true}, {256, true}} {
		n := c.n
		name := fmt.Sprintf("batch=%d", n)
		if c.prune {
			name += "+retention"
		}
		b.Run(name, func(b *testing.B) {
			st, err := store.Open(filepath.Join(b.TempDir(), "omniroute.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = st.Close() })
			batch := make([]store.RequestLog, 0, n)
			const keep = 10_000
			written := 0
			flush := func() {
				insert := st.InsertRequestLogs
				if c.prune { // as the writer does: the retention in the batch too
					insert = func(rows []store.RequestLog) error { return st.InsertRequestLogsRetaining(rows, keep) }
				}
				if err := insert(batch); err != nil {
					b.Fatal(err)
				}
				written += len(batch)
				batch = batch[:0]
				if c.prune && written >= 1000 {
					written = 0
					if err := st.PruneRequestLogs(keep); err != nil {
						b.Fatal(err)
					}
				}
			}
			if c.prune { // start from a full log, as a long-running gateway has
				for i := 0; i < keep; i += n {
					for range n {
						batch = append(batch, benchLogRow(-1-i))
					}
					flush()
				}
			}
			b.ReportAllocs()
			i := 0
			var m meter
			for b.Loop() {
				if i == 0 {
					m = startMeter() // after the setup, as b.Loop's timer
				}
				i++
				batch = append(batch, benchLogRow(i))
				if len(batch) == n {
					flush()
				}
			}
			if len(batch) > 0 {
				flush() // the last, partial batch (at most n-1 rows): negligible once b.N ≫ n
			}
			m.report(b) // cpu-µs/op: the process's CPU per row, steadier than ns/op on a shared machine
		})
	}
}

// benchLogRow is a typical successful one-attempt row, as gateway.finishLog
// builds it.
func benchLogRow(i int) store.RequestLog {
	return store.RequestLog{RequestID: fmt.Sprintf("req_%016x", i), CreatedAt: time.Now().UnixMilli(),
		APIKeyID: "key_default", ClientFormat: "openai", Model: "openai-compatible/gpt-4o-mini",
		Provider: "openai-compatible:bench", ConnectionID: "conn_0123456789abcdef", Status: 200, AttemptCount: 1,
		Attempts:  `[{"connectionId":"conn_0123456789abcdef","provider":"openai-compatible:bench","model":"gpt-4o-mini","status":200,"verdict":"success","latencyMs":1}]`,
		LatencyMs: 1, PromptTokens: 9, CompletionTokens: 12}
}
