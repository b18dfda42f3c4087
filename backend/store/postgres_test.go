package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"omniroute/migrations"
	"omniroute/tests/pgtest"
)

// TestPostgresMigrationsMirrorSQLite: both dialects have the same numbered
// steps, so a schema version means the same thing in either.
func TestPostgresMigrationsMirrorSQLite(t *testing.T) {
	names := func(files fs.FS) []string {
		all, err := loadMigrations(files)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range all {
			out = append(out, m.name)
		}
		return out
	}
	lite, pgs := names(migrations.Files), names(migrations.Postgres())
	if strings.Join(lite, ",") != strings.Join(pgs, ",") {
		t.Fatalf("SQLite migrations %v, PostgreSQL migrations %v: every step needs both", lite, pgs)
	}
}

// TestPostgresMigratesOnceWhenInstancesStartTogether: several instances
// opening one empty database at the same moment all start, and each
// migration is applied exactly once (the advisory lock serialises them).
func TestPostgresMigratesOnceWhenInstancesStartTogether(t *testing.T) {
	url := pg.NewDatabase(t)
	const n = 4
	var wg sync.WaitGroup
	stores := make([]*Store, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stores[i], errs[i] = OpenPostgres(url)
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("instance %d: %v", i, errs[i])
		}
		defer stores[i].Close()
	}
	latest, count := latestMigration(t)
	var rows, distinct int
	if err := stores[0].DB().Raw(`SELECT COUNT(*), COUNT(DISTINCT version) FROM schema_migrations`).Row().Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if rows != count || distinct != count {
		t.Fatalf("schema_migrations has %d rows (%d versions), want %d once each", rows, distinct, count)
	}
	for i, s := range stores {
		if v, err := s.SchemaVersion(); err != nil || v != latest {
			t.Fatalf("instance %d at version %d, %v; want %d", i, v, err, latest)
		}
	}
}

// TestPostgresNewerSchemaRefusedAtOpen: a database migrated by a newer binary
// is refused at start, naming the variable to change.
func TestPostgresNewerSchemaRefusedAtOpen(t *testing.T) {
	url := pg.NewDatabase(t)
	s, err := OpenPostgres(url)
	if err != nil {
		t.Fatal(err)
	}
	latest, _ := latestMigration(t)
	if err := s.DB().Exec(`INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, 'future.sql', 0)`, latest+1).Error; err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	_, err = OpenPostgres(url)
	if !errors.Is(err, ErrSchemaTooNew) || !strings.Contains(err.Error(), "OMNIROUTE_DATABASE_URL") {
		t.Fatalf("err = %v, want ErrSchemaTooNew naming OMNIROUTE_DATABASE_URL", err)
	}
}

func TestValidDatabaseURL(t *testing.T) {
	tests := []struct {
		url string
		ok  bool
	}{
		{"postgres://u:p@127.0.0.1:5432/omniroute", true},
		{"postgresql://127.0.0.1/omniroute?sslmode=disable", true},
		{"mysql://127.0.0.1/x", false},
		{"/var/lib/omniroute.db", false},
		{"postgres:///nohost", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			err := ValidDatabaseURL(tt.url)
			if (err == nil) != tt.ok {
				t.Fatalf("ValidDatabaseURL(%q) = %v, want ok=%v", tt.url, err, tt.ok)
			}
			if !tt.ok && !errors.Is(err, ErrBadDatabaseURL) {
				t.Fatalf("err = %v, want ErrBadDatabaseURL", err)
			}
		})
	}
}

// TestPostgresRefusesABadURLWithoutLeakingThePassword: a server that does not
// answer is an error that keeps the password out.
func TestPostgresRefusesABadURLWithoutLeakingThePassword(t *testing.T) {
	_, err := OpenPostgres("postgres://u:s3cr3t-pw@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
	if err == nil {
		t.Fatal("opened a database that does not exist")
	}
	if strings.Contains(err.Error(), "s3cr3t-pw") {
		t.Fatalf("error leaks the password: %v", err)
	}
}

// TestPostgresLeasesAcrossHandles: 100 concurrent acquisitions from two
// handles (two instances) for 3 connections leave exactly 3 ACTIVE leases,
// one per connection: the partial unique indexes decide.
func TestPostgresLeasesAcrossHandles(t *testing.T) {
	a, b := twoInstances(t)
	conns := []string{"c1", "c2", "c3"}
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := map[string]int{}
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := a
			if i%2 == 1 {
				s = b
			}
			for _, c := range conns {
				err := s.InsertLease(lease(fmt.Sprintf("l%d-%s", i, c), fmt.Sprintf("o%d", i), c, 1, 1<<50))
				if err == nil {
					mu.Lock()
					won[c]++
					mu.Unlock()
					return
				}
				if !errors.Is(err, ErrConflict) {
					t.Errorf("insert: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	active, err := a.ActiveLeases()
	if err != nil {
		t.Fatal(err)
	}
	if len(active) != 3 || won["c1"] != 1 || won["c2"] != 1 || won["c3"] != 1 {
		t.Fatalf("%d active leases, wins per connection %v; want exactly one on each of 3", len(active), won)
	}
}

// TestPostgresChangeFeed: an instance watching the database hears another
// instance's writes of connections, keys, combos, settings, cooldowns and
// breakers within a second, each under its topic, and is not woken by a key's
// last use or an instance heartbeat.
func TestPostgresChangeFeed(t *testing.T) {
	a, b := twoInstances(t)
	got := make(chan string, 64)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.WatchChanges(ctx, func(table string) { got <- table }, func(err error) { t.Errorf("watch: %v", err) })
	}()
	defer func() { cancel(); <-done }()
	expect := func(want ...string) {
		t.Helper()
		var seen []string
		deadline := time.After(time.Second)
		for len(seen) < len(want) {
			select {
			case tbl := <-got:
				seen = append(seen, tbl)
			case <-deadline:
				t.Fatalf("heard %v within 1 s, want %v", seen, want)
			}
		}
		sort.Strings(seen)
		sort.Strings(want)
		if strings.Join(seen, ",") != strings.Join(want, ",") {
			t.Fatalf("heard %v, want %v", seen, want)
		}
	}
	quiet := func() {
		t.Helper()
		select {
		case tbl := <-got:
			t.Fatalf("woken by %q", tbl)
		case <-time.After(300 * time.Millisecond):
		}
	}
	expect("") // the reconcile after connecting
	c := Connection{ID: "c1", Provider: "openai", Name: "a", AuthType: "apikey", IsActive: true, Models: "[]",
		ProviderSpecificData: "{}", RateLimitOverrides: "{}", TestStatus: "active"}
	if err := b.CreateConnection(&c); err != nil {
		t.Fatal(err)
	}
	expect(TableConnections)
	if err := b.CreateAPIKey(&APIKey{ID: "k1", Name: "k", KeyHash: "h1", Scopes: "[]", AllowedConnections: "[]", AllowedModels: "[]"}); err != nil {
		t.Fatal(err)
	}
	expect(TableAPIKeys)
	if err := b.SetValue("settings", "general", `{}`); err != nil {
		t.Fatal(err)
	}
	expect(TableSettings)
	if err := b.CreateCombo(&Combo{ID: "x", Name: "x", Strategy: "priority", Targets: "[]", Config: "{}"}); err != nil {
		t.Fatal(err)
	}
	expect(TableCombos)
	// A cooldown is its own topic (adopted, not a configuration reload),
	// and so is a breaker transition.
	if err := b.SaveCooldown("c1", CooldownFields{RateLimitedUntil: 5, TestStatus: "unavailable"}); err != nil {
		t.Fatal(err)
	}
	expect(TopicCooldowns)
	if err := b.SaveBreaker(BreakerRow{Provider: "openai", State: "OPEN", StateChangedAt: 9}); err != nil {
		t.Fatal(err)
	}
	expect(TableBreakers)
	if err := b.SavePin(AffinityPin{SessionKey: "s1", ConnectionID: "c1", Provider: "openai", ExpiresAt: 50, UpdatedAt: 1}); err != nil {
		t.Fatal(err)
	}
	expect(TablePins)
	if err := b.SaveModelLock(ModelLockRow{Layer: LayerCooldown, Key: "openai:c1:exact:m", Provider: "openai", ConnectionID: "c1",
		Model: "m", Scope: "exact", LockedAt: 1, ExpiresAt: 60}); err != nil {
		t.Fatal(err)
	}
	expect(TableModelLocks)
	// Marking a key used, an instance heartbeat and dropping expired pins and
	// model locks wake nobody.
	if _, err := b.LivePins(100); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ModelLocks(100, 0); err != nil { // prunes the lock above
		t.Fatal(err)
	}
	if err := b.DB().Exec(`UPDATE api_keys SET last_used_at = 7`).Error; err != nil {
		t.Fatal(err)
	}
	if err := b.SetValue("instances", "b", `{}`); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteValue("instances", "b"); err != nil {
		t.Fatal(err)
	}
	quiet()
	if err := b.DeleteValue("settings", "general"); err != nil {
		t.Fatal(err)
	}
	expect(TableSettings)
	c.Name = "renamed"
	if err := b.SaveConnection(&c); err != nil {
		t.Fatal(err)
	}
	expect(TableConnections, TopicCooldowns) // every column is written
}

// TestSQLiteHasNoChangeFeed: one instance per SQLite file, so WatchChanges
// returns at once.
func TestSQLiteHasNoChangeFeed(t *testing.T) {
	s := openDialect(t, SQLite)
	if s.Shared() {
		t.Fatal("SQLite store reports shared")
	}
	done := make(chan struct{})
	go func() {
		s.WatchChanges(context.Background(), func(string) { t.Error("change on SQLite") }, nil)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("WatchChanges blocked on SQLite")
	}
}

// TestPostgresOneDefaultKey: instances starting together on an empty database
// cannot both create a default key; the loser sees ErrConflict.
func TestPostgresOneDefaultKey(t *testing.T) {
	s := openDialect(t, Postgres)
	mk := func(id string) *APIKey {
		return &APIKey{ID: id, Name: "Default key", KeyHash: "h-" + id, Scopes: "[]", AllowedConnections: "[]", AllowedModels: "[]", IsDefault: true}
	}
	if err := s.CreateAPIKey(mk("a")); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAPIKey(mk("b")); !errors.Is(err, ErrConflict) {
		t.Fatalf("second default key: %v, want ErrConflict", err)
	}
}

func TestWithConnectTimeout(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u@h/db":                                   "postgres://u@h/db?connect_timeout=5",
		"postgres://u@h/db?sslmode=disable":                   "postgres://u@h/db?connect_timeout=5&sslmode=disable",
		"postgres://u@h/db?connect_timeout=2&sslmode=disable": "postgres://u@h/db?connect_timeout=2&sslmode=disable",
	} {
		if got := withConnectTimeout(in); got != want {
			t.Errorf("withConnectTimeout(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPostgresChangeFeedSurvivesAnOutage: with the server stopped the
// listener reports the outage once (not every retry), reconnects when the
// server returns, asks for a full reconcile ("") and hears writes again.
func TestPostgresChangeFeedSurvivesAnOutage(t *testing.T) {
	srv, err := pgtest.StartOwned() // its own cluster: the test stops it
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	url := srv.NewDatabase(t)
	s, err := OpenPostgres(url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := make(chan string, 64)
	var mu sync.Mutex
	reports := 0
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.WatchChanges(ctx, func(topic string) { got <- topic }, func(error) { mu.Lock(); reports++; mu.Unlock() })
	}()
	defer func() { cancel(); <-done }()
	wait := func(want string, within time.Duration) {
		t.Helper()
		deadline := time.After(within)
		for {
			select {
			case topic := <-got:
				if topic == want {
					return
				}
			case <-deadline:
				t.Fatalf("no %q within %v", want, within)
			}
		}
	}
	wait("", time.Second)
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // several reconnect attempts (100, 200, 400, 800 ms backoff)
	mu.Lock()
	n := reports
	mu.Unlock()
	if n != 1 {
		t.Fatalf("the outage was reported %d times, want once", n)
	}
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	wait("", 8*time.Second) // reconnected (backoff at most 5 s): reconcile everything
	if err := s.SetValue("settings", "general", `{}`); err != nil {
		t.Fatal(err)
	}
	wait(TableSettings, time.Second)
}

// twoInstances opens two store handles on one fresh PostgreSQL database, as
// two team-server instances would, closed when the test ends.
func twoInstances(t *testing.T) (a, b *Store) {
	t.Helper()
	url := pg.NewDatabase(t)
	for _, dst := range []**Store{&a, &b} {
		s, err := OpenPostgres(url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		*dst = s
	}
	return a, b
}

// acrossInstances runs decide n times at once, alternately through a and b
// (two instances on one database): every goroutine is started, then all are
// let go together. It waits for them all.
func acrossInstances(a, b *Store, n int, decide func(st *Store)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		st := a
		if i%2 == 1 {
			st = b
		}
		wg.Go(func() {
			<-start
			decide(st)
		})
	}
	close(start)
	wg.Wait()
}
