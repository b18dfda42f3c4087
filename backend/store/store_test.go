package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"testing/fstest"

	"omniroute/migrations"
)

func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, path
}

// latestMigration is the newest embedded migration's number and the count.
func latestMigration(t *testing.T) (int, int) {
	t.Helper()
	all, err := loadMigrations(migrations.Files)
	if err != nil || len(all) == 0 {
		t.Fatalf("embedded migrations: %v", err)
	}
	return all[len(all)-1].version, len(all)
}

func TestMigrationsApplyOnceAndRecordVersion(t *testing.T) {
	s, path := openTemp(t)
	latest, count := latestMigration(t)
	v, err := s.SchemaVersion()
	if err != nil || v != latest {
		t.Fatalf("version = %d, %v; want %d", v, err, latest)
	}
	var mode string
	s.DB().Raw("PRAGMA journal_mode").Scan(&mode)
	if mode != "wal" {
		t.Fatalf("journal_mode = %q, want wal", mode)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer again.Close()
	var n int
	again.DB().Raw("SELECT COUNT(*) FROM schema_migrations").Scan(&n)
	if n != count {
		t.Fatalf("schema_migrations rows = %d, want %d", n, count)
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		if err := s.DB().Exec("INSERT INTO schema_migrations(version, name, applied_at) VALUES (99, '0099_future.sql', 0)").Error; err != nil {
			t.Fatal(err)
		}
		err := s.migrate(fstest.MapFS{"0001_init.sql": {Data: []byte("SELECT 1;")}})
		if !errors.Is(err, ErrSchemaTooNew) {
			t.Fatalf("err = %v, want ErrSchemaTooNew", err)
		}
	})
}

// TestMigrationBelowTheNewestIsStillApplied: migrations go by the recorded
// set; one numbered below an applied one (merged from a parallel branch after
// a database was migrated past it) is applied, and only once.
func TestMigrationBelowTheNewestIsStillApplied(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		latest, _ := latestMigration(t)
		gap := fstest.MapFS{
			fmt.Sprintf("%04d_init.sql", latest):    {Data: []byte("SELECT 1;")},
			fmt.Sprintf("%04d_later.sql", latest+2): {Data: []byte("CREATE TABLE later_one (id INTEGER);")},
		}
		if err := s.migrate(gap); err != nil {
			t.Fatal(err)
		}
		filled := fstest.MapFS{
			fmt.Sprintf("%04d_init.sql", latest):     {Data: []byte("SELECT 1;")},
			fmt.Sprintf("%04d_merged.sql", latest+1): {Data: []byte("CREATE TABLE merged_one (id INTEGER);")},
			fmt.Sprintf("%04d_later.sql", latest+2):  {Data: []byte("CREATE TABLE later_one (id INTEGER);")},
		}
		for range 2 {
			if err := s.migrate(filled); err != nil {
				t.Fatalf("migrate with the gap filled: %v", err)
			}
		}
		if err := s.DB().Exec("SELECT 1 FROM merged_one").Error; err != nil {
			t.Fatalf("the migration below the newest was skipped: %v", err)
		}
		var n int
		s.DB().Raw("SELECT COUNT(*) FROM schema_migrations WHERE version = ?", latest+1).Scan(&n)
		if n != 1 {
			t.Fatalf("recorded %d times, want once", n)
		}
	})
}

func TestFailedMigrationRollsBack(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		latest, _ := latestMigration(t)
		files := fstest.MapFS{
			fmt.Sprintf("%04d_init.sql", latest):  {Data: []byte("SELECT 1;")},
			fmt.Sprintf("%04d_bad.sql", latest+1): {Data: []byte("CREATE TABLE half_done (id INTEGER);\nTHIS IS NOT SQL;")},
		}
		if err := s.migrate(files); err == nil {
			t.Fatal("bad migration applied")
		}
		if err := s.DB().Exec("SELECT 1 FROM half_done").Error; err == nil {
			t.Fatal("a failed migration left a table behind")
		}
		v, _ := s.SchemaVersion()
		if v != latest {
			t.Fatalf("version = %d after failed migration, want %d", v, latest)
		}
	})
}

func TestMigrationNamesValidated(t *testing.T) {
	tests := []struct {
		name  string
		files fstest.MapFS
	}{
		{"no number", fstest.MapFS{"init.sql": {Data: []byte("SELECT 1;")}}},
		{"duplicate", fstest.MapFS{"0001_a.sql": {Data: []byte("SELECT 1;")}, "0001_b.sql": {Data: []byte("SELECT 1;")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := loadMigrations(tt.files); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestLeaseUniquenessIsEnforcedByTheDatabase(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		ins := func(id, owner, conn, state string) error {
			return s.DB().Exec(`INSERT INTO exclusive_connection_leases(id, owner_hash, api_key_id, connection_id, generation, state, acquired_at, renewed_at, expires_at)
				VALUES (?, ?, 'k', ?, 1, ?, 0, 0, 0)`, id, owner, conn, state).Error
		}
		if err := ins("1", "o1", "c1", "ACTIVE"); err != nil {
			t.Fatal(err)
		}
		if err := ins("2", "o2", "c1", "ACTIVE"); err == nil {
			t.Fatal("two active leases on one connection")
		}
		if err := ins("3", "o1", "c2", "ACTIVE"); err == nil {
			t.Fatal("two active leases for one owner")
		}
		if err := ins("4", "o2", "c1", "RELEASED"); err != nil {
			t.Fatalf("released lease rejected: %v", err)
		}
	})
}

func TestConnectionCRUDAndCooldownColumns(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		c := Connection{ID: "c1", Provider: "openai", Name: "a", AuthType: "apikey", Priority: 2, IsActive: true,
			Models: "[]", ProviderSpecificData: "{}", RateLimitOverrides: "{}", TestStatus: "active", CreatedAt: 1, UpdatedAt: 1}
		if err := s.CreateConnection(&c); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveCooldown("c1", CooldownFields{RateLimitedUntil: 12345, TestStatus: "unavailable", BackoffLevel: 2, ErrorCode: "X"}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Connection("c1")
		if err != nil {
			t.Fatal(err)
		}
		if got.RateLimitedUntil != 12345 || got.BackoffLevel != 2 || got.TestStatus != "unavailable" || got.Name != "a" {
			t.Fatalf("got %+v", got)
		}
		if err := s.DeleteConnection("c1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Connection("c1"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("err = %v after delete", err)
		}
		if err := s.DeleteConnection("c1"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("second delete err = %v", err)
		}
	})
}

func TestKeyValueUpsert(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		if _, ok, _ := s.GetValue("settings", "general"); ok {
			t.Fatal("value before write")
		}
		for _, v := range []string{`{"a":1}`, `{"a":2}`} {
			if err := s.SetValue("settings", "general", v); err != nil {
				t.Fatal(err)
			}
		}
		v, ok, err := s.GetValue("settings", "general")
		if err != nil || !ok || v != `{"a":2}` {
			t.Fatalf("GetValue = %q %v %v", v, ok, err)
		}
	})
}

// TestSaveDiscoveredModels writes the discovery columns only and reports an
// unknown connection.
func TestSaveDiscoveredModels(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		c := Connection{ID: "c1", Provider: "glm", Name: "g", AuthType: "apikey", Models: `["mine"]`, DiscoveredModels: "[]",
			ProviderSpecificData: "{}", RateLimitOverrides: "{}", TestStatus: "active", BackoffLevel: 3, CreatedAt: 1, UpdatedAt: 1}
		if err := s.CreateConnection(&c); err != nil {
			t.Fatal(err)
		}
		d := DiscoveredModels{Models: `["glm-4.6"]`, Source: "catalog", Error: "GET /models answered 500", RefreshedAt: 42}
		if err := s.SaveDiscoveredModels("c1", d); err != nil {
			t.Fatal(err)
		}
		got, err := s.Connection("c1")
		if err != nil {
			t.Fatal(err)
		}
		if got.DiscoveredModels != d.Models || got.ModelsSource != d.Source || got.ModelsError != d.Error || got.ModelsRefreshedAt != 42 ||
			got.Models != `["mine"]` || got.BackoffLevel != 3 {
			t.Fatalf("row after save: %+v", got)
		}
		if err := s.SaveDiscoveredModels("nope", d); !errors.Is(err, ErrNotFound) {
			t.Fatalf("unknown connection: %v", err)
		}
	})
}

func TestValuesAndDeleteValue(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		for _, kv := range [][3]string{{"instances", "a", "1"}, {"instances", "b", "2"}, {"settings", "general", "{}"}} {
			if err := s.SetValue(kv[0], kv[1], kv[2]); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Values("instances")
		if err != nil || len(got) != 2 || got["a"] != "1" || got["b"] != "2" {
			t.Fatalf("Values = %v, %v", got, err)
		}
		if err := s.DeleteValue("instances", "a"); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteValue("instances", "never"); err != nil {
			t.Fatalf("deleting an absent value: %v", err)
		}
		if got, _ := s.Values("instances"); len(got) != 1 || got["b"] != "2" {
			t.Fatalf("after delete: %v", got)
		}
		if _, ok, _ := s.GetValue("settings", "general"); !ok {
			t.Fatal("another namespace lost its value")
		}
	})
}

// TestClaimProbe: one claim per provider at a time; the owner may claim
// again; another owner wins once the claim is ttl old (exactly: 1 ms before
// it still loses).
func TestClaimProbe(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		steps := []struct {
			owner string
			now   int64
			want  bool
		}{
			{"a", 1000, true},
			{"b", 1000, false},
			{"a", 1200, true}, // the owner again: renewed at 1200
			{"b", 1699, false},
			{"b", 1700, true}, // 500 ms after the last claim
			{"a", 1700, false},
		}
		for i, st := range steps {
			got, err := s.ClaimProbe("openai", st.owner, st.now, 500)
			if err != nil || got != st.want {
				t.Fatalf("step %d (%s at %d): %v, %v; want %v", i, st.owner, st.now, got, err, st.want)
			}
		}
		if won, _ := s.ClaimProbe("other", "a", 1700, 500); !won {
			t.Fatal("a claim on one provider blocked another")
		}
	})
}

// TestClaimProbeConcurrent: instances racing for one probe on one database:
// exactly one wins.
func TestClaimProbeConcurrent(t *testing.T) {
	url := pg.NewDatabase(t)
	var stores []*Store
	for range 2 {
		s, err := OpenPostgres(url)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores = append(stores, s)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			won, err := stores[i%2].ClaimProbe("openai", fmt.Sprintf("i%d", i), 5000, 30_000)
			if err != nil {
				t.Error(err)
			}
			if won {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d claimers won one probe", wins)
	}
}

// TestPinsUpdatedSince: the live pins written after a time, and no others.
func TestPinsUpdatedSince(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		for _, p := range []AffinityPin{
			{SessionKey: "old", ConnectionID: "c", Provider: "p", ExpiresAt: 10_000, UpdatedAt: 100},
			{SessionKey: "new", ConnectionID: "c", Provider: "p", ExpiresAt: 10_000, UpdatedAt: 201},
			{SessionKey: "dead", ConnectionID: "c", Provider: "p", ExpiresAt: 5_000, UpdatedAt: 300},
		} {
			if err := s.SavePin(p); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.PinsUpdatedSince(200, 5_000)
		if err != nil || len(got) != 1 || got[0].SessionKey != "new" {
			t.Fatalf("PinsUpdatedSince = %+v, %v; want the new live pin only", got, err)
		}
	})
}
