package store

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// populate writes a little of everything into s.
func populate(t *testing.T, s *Store) {
	t.Helper()
	mc, off := 4, false
	for i, c := range []Connection{
		{ID: "c1", Provider: "openai", Name: "work", AuthType: "apikey", Priority: 1, IsActive: true, MaxConcurrent: &mc,
			RateLimitProtection: &off, APIKeyEnc: "sealed-1", Models: `["gpt-4o"]`, DiscoveredModels: `["gpt-4o-mini"]`,
			ProviderSpecificData: "{}", RateLimitOverrides: "{}", TestStatus: "active", CreatedAt: 10, UpdatedAt: 11},
		{ID: "c2", Provider: "claude", Name: "sub", AuthType: "oauth", Priority: 2, IsActive: false, AccessTokenEnc: "a",
			RefreshTokenEnc: "r", ExpiresAt: 99, Models: "[]", DiscoveredModels: "[]", ProviderSpecificData: `{"accountId":"x"}`,
			RateLimitOverrides: "{}", TestStatus: "banned", RateLimitedUntil: 1234, BackoffLevel: 3, CreatedAt: 20, UpdatedAt: 21},
	} {
		if err := s.CreateConnection(&c); err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
	}
	for i, k := range []APIKey{
		{ID: "k1", Name: "Default key", KeyHash: "h1", KeyEnc: "e1", KeyPrefix: "sk-omni-ab", Scopes: `["inference"]`,
			AllowedConnections: "[]", AllowedModels: "[]", IsDefault: true, CreatedAt: 5, LastUsedAt: 6},
		{ID: "k2", Name: "ci", KeyHash: "h2", Scopes: `["inference","lease:exclusive"]`, AllowedConnections: `["c1"]`, AllowedModels: "[]", CreatedAt: 7,
			Private: true},
	} {
		if err := s.CreateAPIKey(&k); err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
	}
	if err := s.CreateCombo(&Combo{ID: "x", Name: "fast", Strategy: "priority", Targets: `["openai/gpt-4o"]`, Config: "{}", CreatedAt: 1, UpdatedAt: 2}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetValue("settings", "general", `{"maxAttempts":4}`); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveRequestBodies(&RequestBodies{RequestID: "r1", CreatedAt: 8, APIKeyID: "k1", Model: "m", ClientFormat: "anthropic",
		UpstreamFormat: "openai", Stream: true, ClientRequest: `{"a":1}`, UpstreamRequest: `{"b":2}`, UpstreamResponse: "data: {}\n\n",
		ClientResponse: "event: x\ndata: {}\n\n", Bytes: 40, Truncated: 3}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveBreaker(BreakerRow{Provider: "openai", State: "OPEN", Failures: 5, OpenCycles: 1, OpenedAt: 100, StateChangedAt: 100}); err != nil {
		t.Fatal(err)
	}
	if err := s.SavePin(AffinityPin{SessionKey: "s1", ConnectionID: "c1", Provider: "openai", ExpiresAt: 1 << 50, UpdatedAt: 3}); err != nil {
		t.Fatal(err)
	}
	mustInsert(t, s, lease("l1", "o1", "c1", 1, 1<<50))
	if err := s.SaveModelLock(ModelLockRow{Layer: LayerLockout, Key: "openai:c1:gpt-4o", Provider: "openai", ConnectionID: "c1",
		Model: "gpt-4o", Scope: "model", Status: 404, FailureCount: 1, LockedAt: 1, ExpiresAt: 2, Cleared: true}); err != nil {
		t.Fatal(err)
	}
	var logs []RequestLog
	for i := range 450 { // more than two insert batches
		logs = append(logs, RequestLog{RequestID: fmt.Sprintf("r%d", i), CreatedAt: int64(60_000 + i*1000), APIKeyID: "k1",
			Model: "gpt-4o", Provider: "openai", ConnectionID: "c1", Status: 200 + (i%2)*300, Stream: i%3 == 0,
			Attempts: "[]", LatencyMs: int64(i), PromptTokens: i, CompletionTokens: 1, CachedTokens: i % 5})
	}
	if err := s.InsertRequestLogs(logs); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertStateEvent(StateEvent{At: 5, Provider: "openai", Kind: "breaker", State: "OPEN", Until: 9, Detail: "d"}, 0); err != nil {
		t.Fatal(err)
	}
}

func tableCounts(t *testing.T, s *Store) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, tbl := range copyTables {
		var n int64
		if err := s.DB().Raw(`SELECT COUNT(*) FROM ` + tbl).Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		out[tbl] = n
	}
	return out
}

// TestCopySQLiteIntoPostgres: a populated SQLite database copied into an
// empty PostgreSQL one keeps every row of every table (counts), every value
// (spot checks of each model, flags and NULLs included), the usage charts,
// and new rows continue the ids; a non-empty destination is refused.
func TestCopySQLiteIntoPostgres(t *testing.T) {
	src, dst := openDialect(t, SQLite), openDialect(t, Postgres)
	populate(t, src)
	counts, err := src.CopyInto(dst)
	if err != nil {
		t.Fatal(err)
	}
	want, got := tableCounts(t, src), tableCounts(t, dst)
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("row counts: source %v, destination %v", want, got)
	}
	for _, c := range counts {
		if c.Rows != want[c.Table] {
			t.Fatalf("CopyInto reported %d rows for %s, the source has %d", c.Rows, c.Table, want[c.Table])
		}
	}
	if want["request_logs"] != 450 || want["usage_rollup"] == 0 {
		t.Fatalf("the source was not populated as planned: %v", want)
	}
	same := func(what string, a, b any, ea, eb error) {
		t.Helper()
		if ea != nil || eb != nil {
			t.Fatalf("%s: %v / %v", what, ea, eb)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s differ:\nsource      %+v\ndestination %+v", what, a, b)
		}
	}
	c1, e1 := src.Connections()
	c2, e2 := dst.Connections()
	same("connections", c1, c2, e1, e2)
	k1, e1 := src.APIKeys()
	k2, e2 := dst.APIKeys()
	same("keys", k1, k2, e1, e2)
	cb1, e1 := src.Combos()
	cb2, e2 := dst.Combos()
	same("combos", cb1, cb2, e1, e2)
	b1, e1 := src.Breakers()
	b2, e2 := dst.Breakers()
	same("breakers", b1, b2, e1, e2)
	p1, e1 := src.LivePins(0)
	p2, e2 := dst.LivePins(0)
	same("pins", p1, p2, e1, e2)
	l1, e1 := src.ActiveLeases()
	l2, e2 := dst.ActiveLeases()
	same("leases", l1, l2, e1, e2)
	r1, e1 := src.RecentRequestLogs(1000)
	r2, e2 := dst.RecentRequestLogs(1000)
	same("request logs", r1, r2, e1, e2)
	ev1, e1 := src.StateEvents(0, 1<<50, 100)
	ev2, e2 := dst.StateEvents(0, 1<<50, 100)
	same("state events", ev1, ev2, e1, e2)
	ml1, e1 := src.ModelLocks(0, 0)
	ml2, e2 := dst.ModelLocks(0, 0)
	same("model locks", ml1, ml2, e1, e2)
	q := UsageQuery{From: 0, To: 1 << 40, BucketMs: 900_000, Dim: ByModel}
	u1, e1 := src.Usage(q)
	u2, e2 := dst.Usage(q)
	same("usage", u1, u2, e1, e2)
	v, ok, err := dst.GetValue("settings", "general")
	if err != nil || !ok || v != `{"maxAttempts":4}` {
		t.Fatalf("setting: %q %v %v", v, ok, err)
	}

	// New rows continue after the copied ids.
	if err := dst.InsertRequestLogs([]RequestLog{{RequestID: "after", CreatedAt: 1, Attempts: "[]"}}); err != nil {
		t.Fatalf("a log after the copy: %v", err)
	}
	if err := dst.InsertStateEvent(StateEvent{At: 6, Provider: "openai", Kind: "breaker", State: "CLOSED"}, 0); err != nil {
		t.Fatalf("an event after the copy: %v", err)
	}
	if _, err := src.CopyInto(dst); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("copy into a populated database: %v, want ErrNotEmpty", err)
	}
}

// TestCopyRoundTrip: SQLite → PostgreSQL → a new SQLite file keeps every row
// and value (`omniroute export` after `import-db`).
func TestCopyRoundTrip(t *testing.T) {
	src, mid, back := openDialect(t, SQLite), openDialect(t, Postgres), openDialect(t, SQLite)
	populate(t, src)
	if _, err := src.CopyInto(mid); err != nil {
		t.Fatal(err)
	}
	if _, err := mid.CopyInto(back); err != nil {
		t.Fatal(err)
	}
	if want, got := tableCounts(t, src), tableCounts(t, back); !reflect.DeepEqual(want, got) {
		t.Fatalf("row counts: source %v, round trip %v", want, got)
	}
	c1, _ := src.Connections()
	c2, err := back.Connections()
	if err != nil || !reflect.DeepEqual(c1, c2) {
		t.Fatalf("connections after the round trip differ (%v):\n%+v\n%+v", err, c1, c2)
	}
	k1, _ := src.APIKeys()
	k2, err := back.APIKeys()
	if err != nil || !reflect.DeepEqual(k1, k2) || !k2[1].Private {
		t.Fatalf("keys after the round trip differ (%v):\n%+v\n%+v", err, k1, k2)
	}
	b1, _ := src.RequestBodies("r1")
	b2, err := back.RequestBodies("r1")
	if err != nil || b1 != b2 || !b2.Stream {
		t.Fatalf("captured bodies after the round trip differ (%v):\n%+v\n%+v", err, b1, b2)
	}
	r1, _ := src.RecentRequestLogs(1000)
	r2, err := back.RecentRequestLogs(1000)
	if err != nil || !reflect.DeepEqual(r1, r2) {
		t.Fatalf("request logs after the round trip differ (%v)", err)
	}
	if err := back.InsertRequestLogs([]RequestLog{{RequestID: "after", CreatedAt: 1, Attempts: "[]"}}); err != nil {
		t.Fatalf("a log after the copy: %v", err)
	}
}

// TestCopyCoversEveryTable: every table the migrations create is copied (a
// new table needs its place in copyTables), in both dialects.
func TestCopyCoversEveryTable(t *testing.T) {
	queries := map[Dialect]string{
		SQLite:   `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('schema_migrations', 'sqlite_sequence')`,
		Postgres: `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name <> 'schema_migrations'`,
	}
	for d, q := range queries {
		t.Run(string(d), func(t *testing.T) {
			s := openDialect(t, d)
			var tables []string
			if err := s.DB().Raw(q).Scan(&tables).Error; err != nil {
				t.Fatal(err)
			}
			copied := map[string]bool{}
			for _, c := range copyTables {
				copied[c] = true
			}
			for _, tbl := range tables {
				if !copied[tbl] {
					t.Errorf("table %s is not in copyTables: import-db and export would lose it", tbl)
				}
			}
			if len(tables) != len(copyTables) {
				t.Errorf("%d tables in the schema, %d copied: %v", len(tables), len(copyTables), tables)
			}
		})
	}
}
