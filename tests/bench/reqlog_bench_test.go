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
// ns/op is the cost per logged request.
func BenchmarkRequestLogInsert(b *testing.B) {
	for _, n := range []int{1, 16, 64, 256} {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			st, err := store.Open(filepath.Join(b.TempDir(), "omniroute.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = st.Close() })
			batch := make([]store.RequestLog, 0, n)
			flush := func() {
				if err := st.InsertRequestLogs(batch); err != nil {
					b.Fatal(err)
				}
				batch = batch[:0]
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				// A typical successful one-attempt row, as gateway.finishLog builds it.
				batch = append(batch, store.RequestLog{RequestID: fmt.Sprintf("req_%016x", i), CreatedAt: time.Now().UnixMilli(),
					APIKeyID: "key_default", ClientFormat: "openai", Model: "openai-compatible/gpt-4o-mini",
					Provider: "openai-compatible:bench", ConnectionID: "conn_0123456789abcdef", Status: 200, AttemptCount: 1,
					Attempts:  `[{"connectionId":"conn_0123456789abcdef","provider":"openai-compatible:bench","model":"gpt-4o-mini","status":200,"verdict":"success","latencyMs":1}]`,
					LatencyMs: 1, PromptTokens: 9, CompletionTokens: 12})
				if len(batch) == n {
					flush()
				}
			}
			if len(batch) > 0 {
				flush() // the last, partial batch (at most n-1 rows): negligible once b.N ≫ n
			}
		})
	}
}
