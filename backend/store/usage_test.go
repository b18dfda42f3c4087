package store

import (
	"database/sql"
	"io/fs"
	"testing"

	"omniroute/migrations"
)

// usageMigration adds cached tokens, the usage rollup (with its backfill) and
// the state-change log.
const usageMigration = "0004_usage.sql"

// TestUsageRollupBackfillAndBatches: the usage migration rolls up the logs
// written before it, every later batch adds to the rollup, and a chart query at
// each resolution sees both, with errors, tokens and latency bins.
//
// On PostgreSQL, which has no database older than the usage migration, the
// old row is rolled up by RebuildUsageRollup (the repair the backfill mirrors).
func TestUsageRollupBackfillAndBatches(t *testing.T) {
	eachDialect(t, testUsageRollup)
}

func testUsageRollup(t *testing.T, open func(t *testing.T) *Store) {
	s := open(t)
	db := s.DB()
	const oldRow = `INSERT INTO request_logs (request_id, created_at, connection_id, model, api_key_id, provider, status, latency_ms, prompt_tokens, completion_tokens)
		VALUES ('old', 60000, 'c1', 'm1', 'k1', 'openai', 503, 120, 10, 2)`
	if s.Dialect() == Postgres {
		if err := db.Exec(oldRow).Error; err != nil {
			t.Fatal(err)
		}
		if err := s.RebuildUsageRollup(); err != nil {
			t.Fatalf("RebuildUsageRollup: %v", err)
		}
	} else {
		// The database as it was before the usage migration, with one logged request.
		for _, q := range []string{"DROP TABLE usage_rollup", "DROP TABLE state_events", "ALTER TABLE request_logs DROP COLUMN cached_tokens"} {
			if err := db.Exec(q).Error; err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		if err := db.Exec(oldRow).Error; err != nil {
			t.Fatal(err)
		}
		// The migration itself, whatever its number among the others.
		sql, err := fs.ReadFile(migrations.Files, usageMigration)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Exec(string(sql)).Error; err != nil {
			t.Fatalf("%s: %v", usageMigration, err)
		}
		// The columns later migrations added to the rollup.
		for _, q := range []string{"ALTER TABLE usage_rollup ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0",
			"ALTER TABLE usage_rollup ADD COLUMN saved_usd REAL NOT NULL DEFAULT 0", "ALTER TABLE usage_rollup ADD COLUMN unpriced INTEGER NOT NULL DEFAULT 0"} {
			if err := db.Exec(q).Error; err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	if err := s.InsertRequestLogs([]RequestLog{
		{RequestID: "a", CreatedAt: 61_000, ConnectionID: "c1", Model: "m1", APIKeyID: "k1", Provider: "openai", Status: 200, LatencyMs: 40, PromptTokens: 5, CompletionTokens: 1, CachedTokens: 3,
			CostUSD: sql.NullFloat64{Float64: 0.25, Valid: true}, SavedUSD: 0.5},
		{RequestID: "b", CreatedAt: 119_999, ConnectionID: "c2", Model: "m1", APIKeyID: "k1", Provider: "openai", Status: 200, LatencyMs: 999_999},
	}); err != nil {
		t.Fatal(err)
	}
	for _, res := range RollupResolutions {
		cells, err := s.Usage(UsageQuery{From: 0, To: res.Res * 10, BucketMs: res.Res, Dim: ByConnection})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]UsageCell{}
		for _, c := range cells {
			got[c.Key] = c
		}
		c1, c2 := got["c1"], got["c2"]
		if c1.Requests != 2 || c1.Errors != 1 || c1.TokensIn != 15 || c1.TokensCached != 3 || c1.Latency[LatencyBin(40)] != 1 || c1.Latency[LatencyBin(120)] != 1 {
			t.Fatalf("res %d: c1 %+v", res.Res, c1)
		}
		if c1.CostUSD != 0.25 || c1.SavedUSD != 0.5 || c1.Unpriced != 0 || c2.CostUSD != 0 || c2.Unpriced != 1 {
			t.Fatalf("res %d: spend c1 %+v c2 %+v", res.Res, c1, c2)
		}
		if c2.Requests != 1 || c2.Latency[len(LatencyBinsMs)] != 1 {
			t.Fatalf("res %d: c2 %+v", res.Res, c2)
		}
		wantBucket := 1 // 60 000 ms / 60 000
		if res.Res > 60_000 {
			wantBucket = 0
		}
		if c1.Bucket != wantBucket {
			t.Fatalf("res %d: bucket %d, want %d", res.Res, c1.Bucket, wantBucket)
		}
	}
	if _, err := s.Usage(UsageQuery{From: 0, To: 1, BucketMs: 1234, Dim: ByModel}); err == nil {
		t.Fatal("a resolution the rollup does not keep must be refused")
	}
	if _, err := s.Usage(UsageQuery{From: 0, To: 1, BucketMs: 60_000, Dim: "colour; DROP TABLE x"}); err == nil {
		t.Fatal("an unknown dimension must be refused")
	}
}

func TestLatencyBin(t *testing.T) {
	for ms, want := range map[int64]int{0: 0, 49: 0, 50: 1, 99: 1, 100: 2, 119_999: len(LatencyBinsMs) - 1, 120_000: len(LatencyBinsMs)} {
		if got := LatencyBin(ms); got != want {
			t.Errorf("LatencyBin(%d) = %d, want %d", ms, got, want)
		}
	}
}
