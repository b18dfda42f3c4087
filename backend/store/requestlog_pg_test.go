package store

import (
	"cmp"
	"database/sql"
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// TestRequestLogSink: on each database the sink the request-log writer uses
// stores every column of every row in order (newest first when read back) and
// the same usage rollup as the store's own InsertRequestLogs — on PostgreSQL
// the one-round-trip pgRequestLogs, checked against InsertRequestLogs into a
// second database.
func TestRequestLogSink(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		viaSink, viaInsert := open(t), open(t)
		if _, pgSink := viaSink.RequestLogSink().(pgRequestLogs); pgSink != (viaSink.Dialect() == Postgres) {
			t.Fatalf("%s store gave sink %T", viaSink.Dialect(), viaSink.RequestLogSink())
		}
		total := 0
		for _, n := range []int{1, 7, 64} {
			rows := make([]RequestLog, n)
			for i := range rows {
				id := total + i
				rows[i] = RequestLog{RequestID: fmt.Sprintf("req_%04d", id), CreatedAt: int64(1_700_000_000_000 + 50_000*id), APIKeyID: fmt.Sprint("k", id%2),
					ClientFormat: "openai", Model: fmt.Sprint("m", id%3), Provider: "p", ConnectionID: "c", Status: 200 + 229*(id%2), Stream: id%2 == 1,
					AttemptCount: 1 + id%3, Attempts: `[{"a":1}]`, LatencyMs: int64(40 * id), ErrorCode: fmt.Sprint("E", id), PromptTokens: id,
					CompletionTokens: 2 * id, QueueMs: int64(3 * id), QueueReason: "q'\"", CachedTokens: 4 * id,
					CostUSD: sql.NullFloat64{Float64: float64(id) / 8, Valid: id%3 != 0}, SavedUSD: float64(id%2) / 4}
			}
			if err := viaSink.RequestLogSink().InsertRequestLogs(rows); err != nil {
				t.Fatalf("sink, batch of %d: %v", n, err)
			}
			if err := viaInsert.InsertRequestLogs(rows); err != nil {
				t.Fatalf("insert, batch of %d: %v", n, err)
			}
			total += n
		}
		got, err := viaSink.RecentRequestLogs(total + 10)
		if err != nil {
			t.Fatal(err)
		}
		want, err := viaInsert.RecentRequestLogs(total + 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != total || len(want) != total {
			t.Fatalf("read back %d and %d rows, want %d", len(got), len(want), total)
		}
		for i := range got {
			if got[i].RequestID != fmt.Sprintf("req_%04d", total-1-i) {
				t.Fatalf("row %d is %s: not newest first in insertion order", i, got[i].RequestID)
			}
			got[i].ID, want[i].ID = 0, 0
			if got[i] != want[i] {
				t.Fatalf("row %d:\n sink   %+v\n insert %+v", i, got[i], want[i])
			}
		}
		for _, dim := range []UsageDimension{ByConnection, ByModel, ByKey} {
			q := UsageQuery{From: 1_700_000_000_000 - 3_600_000, To: 1_700_000_000_000 + 10_000_000, BucketMs: 900_000, Dim: dim}
			a, err := viaSink.Usage(q)
			if err != nil {
				t.Fatal(err)
			}
			b, err := viaInsert.Usage(q)
			if err != nil {
				t.Fatal(err)
			}
			for _, cells := range [][]UsageCell{a, b} { // GROUP BY has no order
				slices.SortFunc(cells, func(x, y UsageCell) int { return cmp.Or(cmp.Compare(x.Bucket, y.Bucket), cmp.Compare(x.Key, y.Key)) })
			}
			if len(a) == 0 || !reflect.DeepEqual(a, b) {
				t.Fatalf("usage by %s:\n sink   %+v\n insert %+v", dim, a, b)
			}
		}
	})
}
