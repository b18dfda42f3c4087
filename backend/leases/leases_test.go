package leases

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"omniroute/backend/clock"
	"omniroute/backend/errs"
	"omniroute/backend/httpx"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
	"omniroute/tests/dbtemplate"
)

// freshDB is a migrated SQLite database made once (TestMain): newService
// starts from a copy of it instead of migrating an empty file.
var freshDB *dbtemplate.SQLite

func TestMain(m *testing.M) {
	var err error
	if freshDB, err = dbtemplate.New(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("database/sql.(*DB).connectionOpener"))
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func openStore(t *testing.T, path string) *store.Store {
	t.Helper()
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// newService returns a service over a fresh database file, its fake clock and the file path.
func newService(t *testing.T) (*Service, *clock.Fake, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "leases.db")
	freshDB.WriteTo(t, path)
	clk := clock.NewFake(t0)
	return New(openStore(t, path), clk), clk, path
}

func newOwner() string { return "vlo_" + secrets.RandomToken(32) }

func mustAcquire(t *testing.T, s *Service, key, owner string, eligible ...string) Lease {
	t.Helper()
	l, err := s.Acquire(key, owner, "openai/gpt-4o", eligible, 0)
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	return l
}

// duplicates counts connections and owners with more than one ACTIVE lease.
func duplicates(t *testing.T, st *store.Store) (conns, owners int) {
	t.Helper()
	if err := st.DB().Raw(`SELECT COUNT(*) FROM (SELECT connection_id FROM exclusive_connection_leases
		WHERE state = 'ACTIVE' GROUP BY connection_id HAVING COUNT(*) > 1)`).Scan(&conns).Error; err != nil {
		t.Error(err)
	}
	if err := st.DB().Raw(`SELECT COUNT(*) FROM (SELECT owner_hash FROM exclusive_connection_leases
		WHERE state = 'ACTIVE' GROUP BY owner_hash HAVING COUNT(*) > 1)`).Scan(&owners).Error; err != nil {
		t.Error(err)
	}
	return conns, owners
}

func activeCount(t *testing.T, st *store.Store) int {
	t.Helper()
	var n int
	if err := st.DB().Raw(`SELECT COUNT(*) FROM exclusive_connection_leases WHERE state = 'ACTIVE'`).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func TestValidOwner(t *testing.T) {
	body := strings.Repeat("a", 43)
	tests := []struct {
		name string
		tok  string
		want bool
	}{
		{"canonical", "vlo_" + body, true},
		{"random token", newOwner(), true},
		{"all classes", "vlo_" + "AZaz09-_" + strings.Repeat("x", 35), true},
		{"empty", "", false},
		{"prefix only", "vlo_", false},
		{"no prefix", body + "abcd", false},
		{"upper prefix", "VLO_" + body, false},
		{"other prefix", "vlx_" + body, false},
		{"42 chars", "vlo_" + body[:42], false},
		{"44 chars", "vlo_" + body + "a", false},
		{"plus", "vlo_+" + body[1:], false},
		{"slash", "vlo_/" + body[1:], false},
		{"padding", "vlo_" + body[:42] + "=", false},
		{"space inside", "vlo_ " + body[1:], false},
		{"leading space", " vlo_" + body[:42], false},
		{"trailing newline", "vlo_" + body[:42] + "\n", false},
		{"non-ascii", "vlo_é" + body[2:], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ValidOwner(tt.tok); got != tt.want {
				t.Fatalf("ValidOwner(%q) = %v, want %v", tt.tok, got, tt.want)
			}
			h, err := OwnerHash(tt.tok)
			if tt.want && (err != nil || len(h) != 64 || h == tt.tok) {
				t.Fatalf("OwnerHash = %q, %v", h, err)
			}
			if !tt.want && !errors.Is(err, ErrContextInvalid) {
				t.Fatalf("OwnerHash err = %v, want ErrContextInvalid", err)
			}
		})
	}
}

func TestClampTTL(t *testing.T) {
	tests := []struct {
		in, want time.Duration
	}{
		{0, DefaultTTL},
		{time.Millisecond, time.Second},
		{999 * time.Millisecond, time.Second},
		{time.Second, time.Second},
		{1001 * time.Millisecond, 1001 * time.Millisecond},
		{-5 * time.Second, time.Second},
		{90 * time.Second, 90 * time.Second},
		{30 * time.Minute, 30 * time.Minute},
		{30*time.Minute + time.Millisecond, 30 * time.Minute},
		{1500*time.Millisecond + 700*time.Microsecond, 1500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.in.String(), func(t *testing.T) {
			if got := ClampTTL(tt.in); got != tt.want {
				t.Fatalf("ClampTTL(%v) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
	msTests := []struct {
		ms   int64
		want time.Duration
	}{
		{-1, time.Second}, {0, time.Second}, {999, time.Second}, {1000, time.Second}, {120_000, 2 * time.Minute},
		{1_800_000, 30 * time.Minute}, {1_800_001, 30 * time.Minute}, {1 << 62, 30 * time.Minute},
	}
	for _, tt := range msTests {
		if got := TTLFromMs(tt.ms); got != tt.want {
			t.Errorf("TTLFromMs(%d) = %v, want %v", tt.ms, got, tt.want)
		}
	}
}

func TestAcquireIsIdempotentAndRenews(t *testing.T) {
	s, clk, _ := newService(t)
	owner := newOwner()
	first := mustAcquire(t, s, "k1", owner, "c1", "c2")
	if first.Generation != 1 || first.ConnectionID != "c1" || first.State != store.LeaseActive ||
		first.ExpiresAt != t0.Add(DefaultTTL).UnixMilli() {
		t.Fatalf("first = %+v", first)
	}
	clk.Advance(10 * time.Second)
	again, err := s.Acquire("k1", owner, "openai/gpt-4o", []string{"c1", "c2"}, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID || again.Generation != 1 || again.ConnectionID != "c1" ||
		again.RenewedAt != t0.Add(10*time.Second).UnixMilli() || again.ExpiresAt != t0.Add(40*time.Second).UnixMilli() {
		t.Fatalf("again = %+v", again)
	}
	// A model change keeps the connection while it stays eligible.
	if l := mustAcquire(t, s, "k1", owner, "c2", "c1"); l.ConnectionID != "c1" || l.ID != first.ID {
		t.Fatalf("reacquire with another order = %+v", l)
	}
	// When its connection is no longer eligible the lease follows, same generation.
	moved := mustAcquire(t, s, "k1", owner, "c3")
	if moved.ID != first.ID || moved.ConnectionID != "c3" || moved.Generation != 1 {
		t.Fatalf("moved = %+v", moved)
	}
	if n := activeCount(t, s.st); n != 1 {
		t.Fatalf("active = %d, want 1", n)
	}
}

func TestAcquireErrors(t *testing.T) {
	tests := []struct {
		name     string
		key      string
		owner    string
		eligible []string
		want     error
	}{
		{"malformed owner", "k1", "vlo_short", []string{"c9"}, ErrContextInvalid},
		{"no key", "", newOwner(), []string{"c9"}, ErrAuthenticationRequired},
		{"no eligible", "k1", newOwner(), nil, ErrNoEligibleConnection},
		{"only empty ids", "k1", newOwner(), []string{""}, ErrNoEligibleConnection},
		{"owner bound to another key", "k2", "held", []string{"c9"}, ErrKeyMismatch},
		{"all held by others", "k1", newOwner(), []string{"c1"}, ErrCapacityUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, _ := newService(t)
			holder := newOwner()
			mustAcquire(t, s, "k1", holder, "c1")
			owner := tt.owner
			if owner == "held" {
				owner = holder
			}
			if _, err := s.Acquire(tt.key, owner, "m", tt.eligible, 0); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestCapacityRetryAfterFromEarliestExpiry(t *testing.T) {
	tests := []struct {
		name    string
		ttls    []time.Duration // leases on c1, c2, … in order
		advance time.Duration
		want    int
	}{
		{"earliest of two", []time.Duration{90 * time.Second, 40 * time.Second}, 0, 40},
		{"rounds up", []time.Duration{10*time.Second + 200*time.Millisecond}, 0, 11},
		{"under a second is one", []time.Duration{2 * time.Second}, 1500 * time.Millisecond, 1},
		{"long lease", []time.Duration{30 * time.Minute}, 0, 1800},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, clk, _ := newService(t)
			var eligible []string
			for i, ttl := range tt.ttls {
				conn := fmt.Sprintf("c%d", i+1)
				eligible = append(eligible, conn)
				if _, err := s.Acquire("k1", newOwner(), "m", []string{conn}, ttl); err != nil {
					t.Fatal(err)
				}
			}
			clk.Advance(tt.advance)
			_, err := s.Acquire("k1", newOwner(), "m", eligible, 0)
			var ce *CapacityError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want *CapacityError", err)
			}
			if ce.RetryAfterSeconds() != tt.want || ce.RetryAfter != time.Duration(tt.want)*time.Second ||
				ce.EligibleCount != len(eligible) || ce.FreeCount != 0 {
				t.Fatalf("capacity = %+v (retry %ds), want retry %ds", ce, ce.RetryAfterSeconds(), tt.want)
			}
		})
	}
}

func TestClampRetry(t *testing.T) {
	tests := []struct{ in, want time.Duration }{
		{-time.Second, time.Second}, {0, time.Second}, {time.Millisecond, time.Second}, {time.Second, time.Second},
		{1001 * time.Millisecond, 2 * time.Second}, {time.Hour, time.Hour}, {time.Hour + time.Millisecond, time.Hour},
		{100 * time.Hour, time.Hour},
	}
	for _, tt := range tests {
		if got := clampRetry(tt.in); got != tt.want {
			t.Errorf("clampRetry(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestLifecycleChecks(t *testing.T) {
	type op func(s *Service, key, owner string, gen int64) error
	ops := map[string]op{
		"renew": func(s *Service, key, owner string, gen int64) error {
			_, err := s.Renew(key, owner, gen, 0)
			return err
		},
		"current": func(s *Service, key, owner string, gen int64) error {
			_, err := s.Current(key, owner, gen)
			return err
		},
		"status": func(s *Service, key, owner string, gen int64) error {
			_, _, err := s.Status(key, owner, gen)
			return err
		},
		"release": func(s *Service, key, owner string, gen int64) error {
			_, err := s.Release(key, owner, gen, "")
			return err
		},
		"fence": func(s *Service, key, owner string, gen int64) error {
			return s.Fence(key, owner, gen, "c1")
		},
		"move": func(s *Service, key, owner string, gen int64) error {
			return s.Move(key, owner, gen, "c5")
		},
	}
	tests := []struct {
		name  string
		key   string
		owner string // "mine" is the lease's owner, "other" a valid owner without a lease
		gen   int64
		want  error
	}{
		{"valid", "k1", "mine", 1, nil},
		{"stale generation", "k1", "mine", 2, ErrFenceStale},
		{"zero generation", "k1", "mine", 0, ErrFenceStale},
		{"wrong owner", "k1", "other", 1, ErrLeaseRequired},
		{"wrong key", "k2", "mine", 1, ErrKeyMismatch},
		{"malformed owner", "k1", "vlo_!", 1, ErrContextInvalid},
	}
	for name, fn := range ops {
		for _, tt := range tests {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				s, _, _ := newService(t)
				mine := newOwner()
				mustAcquire(t, s, "k1", mine, "c1")
				owner := tt.owner
				switch owner {
				case "mine":
					owner = mine
				case "other":
					owner = newOwner()
				}
				if err := fn(s, tt.key, owner, tt.gen); !errors.Is(err, tt.want) {
					t.Fatalf("err = %v, want %v", err, tt.want)
				}
			})
		}
	}
}

func TestKeyMismatchIsSentAsFenceStaleButDistinct(t *testing.T) {
	if errors.Is(ErrKeyMismatch, ErrFenceStale) || errors.Is(ErrFenceStale, ErrKeyMismatch) {
		t.Fatal("key mismatch and stale fence must be distinguishable")
	}
	if ErrKeyMismatch.Code != "LEASE_FENCE_STALE" || ErrKeyMismatch.Status != 409 {
		t.Fatalf("ErrKeyMismatch = %+v", ErrKeyMismatch)
	}
}

func TestFenceFollowsTheDatabase(t *testing.T) {
	s, clk, path := newService(t)
	other := New(openStore(t, path), clk) // another process on the same file
	owner := newOwner()
	l := mustAcquire(t, s, "k1", owner, "c1")
	if err := s.Fence("k1", owner, l.Generation, "c1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Fence("k1", owner, l.Generation, "c2"); !errors.Is(err, ErrConnectionMismatch) {
		t.Fatalf("fence on another connection: %v", err)
	}
	// The other process moves the session: this process's fence sees it at once.
	if err := other.Move("k1", owner, l.Generation, "c2"); err != nil {
		t.Fatal(err)
	}
	if err := s.Fence("k1", owner, l.Generation, "c1"); !errors.Is(err, ErrConnectionMismatch) {
		t.Fatalf("fence on the old connection after a move: %v", err)
	}
	if err := s.Fence("k1", owner, l.Generation, "c2"); err != nil {
		t.Fatalf("fence on the new connection: %v", err)
	}
	// The other process releases it and the owner acquires again: the old generation is stale.
	if _, err := other.Release("k1", owner, l.Generation, ReasonClientCancelled); err != nil {
		t.Fatal(err)
	}
	if err := s.Fence("k1", owner, l.Generation, "c2"); !errors.Is(err, ErrLeaseRequired) {
		t.Fatalf("fence after release: %v", err)
	}
	next := mustAcquire(t, other, "k1", owner, "c3")
	if next.Generation != l.Generation+1 {
		t.Fatalf("next generation = %d, want %d", next.Generation, l.Generation+1)
	}
	if err := s.Fence("k1", owner, l.Generation, "c3"); !errors.Is(err, ErrFenceStale) {
		t.Fatalf("fence with the old generation: %v", err)
	}
	if err := s.Fence("k1", owner, next.Generation, "c3"); err != nil {
		t.Fatal(err)
	}
}

func TestLazyExpiry(t *testing.T) {
	tests := []struct {
		name     string
		at       time.Duration // after acquisition
		active   bool
		takeover bool // another owner can acquire the connection
	}{
		{"one ms before", DefaultTTL - time.Millisecond, true, false},
		{"exactly at expiry", DefaultTTL, false, true},
		{"one ms after", DefaultTTL + time.Millisecond, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, clk, _ := newService(t)
			owner := newOwner()
			l := mustAcquire(t, s, "k1", owner, "c1")
			clk.Advance(tt.at)
			_, err := s.Current("k1", owner, l.Generation)
			if tt.active != (err == nil) || (!tt.active && !errors.Is(err, ErrLeaseRequired)) {
				t.Fatalf("Current err = %v, active want %v", err, tt.active)
			}
			if err := s.Fence("k1", owner, l.Generation, "c1"); tt.active != (err == nil) {
				t.Fatalf("Fence err = %v", err)
			}
			if _, _, held := s.HeldBy("c1"); held != tt.active {
				t.Fatalf("HeldBy = %v, want %v", held, tt.active)
			}
			if got := s.CountActive(); got != map[bool]int{true: 1, false: 0}[tt.active] {
				t.Fatalf("CountActive = %d", got)
			}
			_, err = s.Acquire("k1", newOwner(), "m", []string{"c1"}, 0)
			if tt.takeover != (err == nil) {
				t.Fatalf("takeover err = %v, want takeover %v", err, tt.takeover)
			}
			if !tt.takeover {
				var ce *CapacityError
				if !errors.As(err, &ce) || ce.RetryAfterSeconds() != 1 {
					t.Fatalf("err = %v, want capacity with retry 1s", err)
				}
				// Renewing just before expiry keeps it.
				r, err := s.Renew("k1", owner, l.Generation, 0)
				if err != nil || r.ExpiresAt != clk.Now().Add(DefaultTTL).UnixMilli() {
					t.Fatalf("renew = %+v, %v", r, err)
				}
				return
			}
			if _, err := s.Renew("k1", owner, l.Generation, 0); !errors.Is(err, ErrLeaseRequired) {
				t.Fatalf("renew after expiry: %v", err)
			}
			old, _ := s.st.LeaseByID(l.ID)
			if old.State != store.LeaseExpired || old.ReleaseReason != store.LeaseExpiredReason {
				t.Fatalf("expired row = %+v", old)
			}
		})
	}
}

func TestReleaseIsIdempotentAndNextAcquireTakesNextGeneration(t *testing.T) {
	s, _, _ := newService(t)
	owner := newOwner()
	l := mustAcquire(t, s, "k1", owner, "c1")
	r, err := s.Release("k1", owner, l.Generation, "")
	if err != nil || r.State != store.LeaseReleased || r.ReleaseReason != ReasonOwnerExit || r.Generation != 1 {
		t.Fatalf("release = %+v, %v", r, err)
	}
	if r, err := s.Release("k1", owner, l.Generation, ""); err != nil || r.State != store.LeaseReleased {
		t.Fatalf("second release = %+v, %v", r, err)
	}
	if _, err := s.Release("k2", owner, l.Generation, ""); !errors.Is(err, ErrLeaseRequired) {
		t.Fatalf("release by another key: %v", err)
	}
	if _, err := s.Renew("k1", owner, l.Generation, 0); !errors.Is(err, ErrLeaseRequired) {
		t.Fatalf("renew after release: %v", err)
	}
	next := mustAcquire(t, s, "k1", owner, "c1")
	if next.Generation != 2 || next.ID == l.ID {
		t.Fatalf("next = %+v", next)
	}
	if _, err := s.Release("k1", owner, 1, ""); !errors.Is(err, ErrFenceStale) {
		t.Fatalf("release of the old generation: %v", err)
	}
}

func TestReleaseByID(t *testing.T) {
	s, clk, _ := newService(t)
	owner := newOwner()
	l := mustAcquire(t, s, "k1", owner, "c1")
	lapsing := mustAcquire(t, s, "k1", newOwner(), "c2")
	if _, err := s.ReleaseByID("nope", ""); !errors.Is(err, ErrLeaseNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	r, err := s.ReleaseByID(l.ID, "")
	if err != nil || r.State != store.LeaseReleased || r.ReleaseReason != ReasonOperator {
		t.Fatalf("ReleaseByID = %+v, %v", r, err)
	}
	if _, err := s.ReleaseByID(l.ID, ""); !errors.Is(err, ErrLeaseNotFound) {
		t.Fatalf("second ReleaseByID: %v", err)
	}
	if err := s.Fence("k1", owner, l.Generation, "c1"); !errors.Is(err, ErrLeaseRequired) {
		t.Fatalf("fence after operator release: %v", err)
	}
	clk.Advance(DefaultTTL)
	if _, err := s.ReleaseByID(lapsing.ID, ""); !errors.Is(err, ErrLeaseNotFound) {
		t.Fatalf("ReleaseByID of a lapsed lease: %v", err)
	}
	if active, err := s.Active(); err != nil || len(active) != 0 {
		t.Fatalf("Active = %v, %v", active, err)
	}
}

func TestHeldByCacheIsAtMostOneSecondStale(t *testing.T) {
	s, clk, path := newService(t)
	other := New(openStore(t, path), clk)
	owner := newOwner()
	hash, _ := OwnerHash(owner)
	if _, _, held := other.HeldBy("c1"); held {
		t.Fatal("held before any lease")
	}
	l := mustAcquire(t, s, "k1", owner, "c1")
	// The acquiring service sees its own write at once.
	if h, exp, held := s.HeldBy("c1"); !held || h != hash || !exp.Equal(time.UnixMilli(l.ExpiresAt)) {
		t.Fatalf("HeldBy = %q %v %v", h, exp, held)
	}
	// The other process's view is cached: stale for under a second.
	if _, _, held := other.HeldBy("c1"); held {
		t.Fatal("other service reloaded within the cache lifetime")
	}
	clk.Advance(999 * time.Millisecond)
	if _, _, held := other.HeldBy("c1"); held {
		t.Fatal("other service reloaded before one second")
	}
	clk.Advance(time.Millisecond)
	if h, _, held := other.HeldBy("c1"); !held || h != hash {
		t.Fatal("other service still stale after one second")
	}
	if got := other.Held(); len(got) != 1 || got["c1"] != hash {
		t.Fatalf("Held = %v", got)
	}
	if other.CountActive() != 1 {
		t.Fatal("CountActive != 1")
	}
}

func TestMoveKeepsUniqueness(t *testing.T) {
	s, _, _ := newService(t)
	a, b := newOwner(), newOwner()
	la := mustAcquire(t, s, "k1", a, "c1")
	mustAcquire(t, s, "k1", b, "c2")
	err := s.Move("k1", a, la.Generation, "c2")
	var ce *CapacityError
	if !errors.As(err, &ce) || ce.EligibleCount != 1 {
		t.Fatalf("move onto a held connection: %v", err)
	}
	if err := s.Move("k1", a, la.Generation, "c1"); err != nil {
		t.Fatalf("move to its own connection: %v", err)
	}
	if err := s.Move("k1", a, la.Generation, "c3"); err != nil {
		t.Fatal(err)
	}
	if conn, _, err := s.Status("k1", a, la.Generation); err != nil || conn != "c3" {
		t.Fatalf("status after move = %q, %v", conn, err)
	}
	// The freed connection can be acquired by another owner.
	if l := mustAcquire(t, s, "k1", newOwner(), "c1"); l.ConnectionID != "c1" {
		t.Fatalf("freed connection = %+v", l)
	}

	// Concurrent moves and acquisitions over the same targets.
	targets := []string{"c4", "c5", "c6"}
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				_ = s.Move("k1", a, la.Generation, targets[i%len(targets)])
				return
			}
			_, _ = s.Acquire("k1", newOwner(), "m", []string{targets[i%len(targets)]}, 0)
		}()
	}
	wg.Wait()
	if c, o := duplicates(t, s.st); c != 0 || o != 0 {
		t.Fatalf("duplicate active leases: connections %d, owners %d", c, o)
	}
}

func TestConcurrentAcquireHundredOwnersThreeConnections(t *testing.T) {
	s, _, _ := newService(t)
	eligible := []string{"c1", "c2", "c3"}
	const n = 100
	type result struct {
		lease Lease
		err   error
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			l, err := s.Acquire("k1", newOwner(), "openai/gpt-4o", eligible, 0)
			results[i] = result{l, err}
		}()
	}
	close(start)
	wg.Wait()
	won := map[string]bool{}
	capacity := 0
	for _, r := range results {
		var ce *CapacityError
		switch {
		case r.err == nil:
			if won[r.lease.ConnectionID] {
				t.Fatalf("connection %s won twice", r.lease.ConnectionID)
			}
			won[r.lease.ConnectionID] = true
		case errors.As(r.err, &ce):
			capacity++
			if s := ce.RetryAfterSeconds(); s < 1 || s > 3600 || ce.EligibleCount != 3 || ce.FreeCount != 0 {
				t.Fatalf("capacity error = %+v", ce)
			}
		default:
			t.Fatalf("unexpected error: %v", r.err)
		}
	}
	if len(won) != 3 || capacity != 97 {
		t.Fatalf("won %d, capacity errors %d; want 3 and 97", len(won), capacity)
	}
	if got := activeCount(t, s.st); got != 3 {
		t.Fatalf("ACTIVE rows = %d, want 3", got)
	}
	if s.CountActive() != 3 {
		t.Fatalf("CountActive = %d", s.CountActive())
	}
}

func TestTwoProcessesRaceOnOneDatabaseFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	clk := clock.NewFake(t0)
	svcs := []*Service{New(openStore(t, path), clk), New(openStore(t, path), clk)}
	monitor := openStore(t, path)
	eligible := []string{"c1", "c2", "c3"}
	owners := make([]string, 20) // shared by both processes, so owners race too
	for i := range owners {
		owners[i] = newOwner()
	}

	stop := make(chan struct{})
	var violations sync.Map
	var mon sync.WaitGroup
	mon.Add(1)
	go func() {
		defer mon.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if c, o := duplicates(t, monitor); c != 0 || o != 0 {
				violations.Store(fmt.Sprintf("conns=%d owners=%d", c, o), true)
			}
			time.Sleep(time.Millisecond)
		}
	}()

	var wg sync.WaitGroup
	var mu sync.Mutex
	acquired := 0
	for p, svc := range svcs {
		for g := range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				owner := owners[(g+p)%len(owners)]
				for iter := range 4 {
					l, err := svc.Acquire("k1", owner, "m", eligible, 0)
					var ce *CapacityError
					if err != nil && !errors.As(err, &ce) {
						t.Errorf("acquire: %v", err)
						return
					}
					if err != nil {
						continue
					}
					mu.Lock()
					acquired++
					mu.Unlock()
					if err := svc.Fence("k1", owner, l.Generation, l.ConnectionID); err != nil &&
						!errors.Is(err, ErrLeaseRequired) && !errors.Is(err, ErrFenceStale) && !errors.Is(err, ErrConnectionMismatch) {
						t.Errorf("fence: %v", err)
					}
					if (g+iter)%2 == 0 {
						if _, err := svc.Release("k1", owner, l.Generation, ""); err != nil &&
							!errors.Is(err, ErrLeaseRequired) && !errors.Is(err, ErrFenceStale) {
							t.Errorf("release: %v", err)
						}
					}
				}
			}()
		}
	}
	wg.Wait()
	close(stop)
	mon.Wait()
	violations.Range(func(k, _ any) bool {
		t.Errorf("duplicate active leases seen during the race: %v", k)
		return true
	})
	if c, o := duplicates(t, monitor); c != 0 || o != 0 {
		t.Fatalf("duplicate active leases: connections %d, owners %d", c, o)
	}
	if n := activeCount(t, monitor); n > len(eligible) {
		t.Fatalf("ACTIVE rows = %d, more than %d connections", n, len(eligible))
	}
	if acquired == 0 {
		t.Fatal("no acquisition succeeded")
	}
}

func TestErrorsMapToTheEnvelope(t *testing.T) {
	tests := []struct {
		err    error
		code   string
		status int
	}{
		{ErrAuthenticationRequired, "LEASE_AUTHENTICATION_REQUIRED", 401},
		{ErrAPIKeyInvalid, "LEASE_API_KEY_INVALID", 401},
		{ErrContentTypeRequired, "LEASE_CONTENT_TYPE_REQUIRED", 415},
		{ErrActionInvalid, "LEASE_ACTION_INVALID", 400},
		{ErrContextInvalid, "LEASE_CONTEXT_INVALID", 400},
		{ErrModelInvalid.WithMessage("model %q is unknown", "x"), "LEASE_MODEL_INVALID", 400},
		{ErrScopeRequired, "LEASE_SCOPE_REQUIRED", 403},
		{ErrKeyConfigurationInvalid, "LEASE_KEY_CONFIGURATION_INVALID", 403},
		{ErrNoEligibleConnection, "LEASE_NO_ELIGIBLE_CONNECTION", 409},
		{ErrFenceStale, "LEASE_FENCE_STALE", 409},
		{ErrKeyMismatch, "LEASE_FENCE_STALE", 409},
		{ErrLeaseRequired, "LEASE_REQUIRED", 409},
		{ErrConnectionMismatch, "LEASE_CONNECTION_MISMATCH", 409},
		{&CapacityError{EligibleCount: 2, RetryAfter: 37 * time.Second}, "LEASE_CAPACITY_UNAVAILABLE", 429},
		{ErrLeaseNotFound, "LEASE_NOT_FOUND", 404},
		{ErrServiceUnavailable, "LEASE_SERVICE_UNAVAILABLE", 503},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			e := errs.As(fmt.Errorf("wrapped: %w", tt.err))
			if e.Code != tt.code || e.Type != ErrorType || httpx.Status(e.Class) != tt.status || e.Message == "" {
				t.Fatalf("errs = %+v (status %d)", e, httpx.Status(e.Class))
			}
		})
	}
	e := errs.As(&CapacityError{EligibleCount: 2, RetryAfter: 36500 * time.Millisecond})
	if e.RetryAfter != 37*time.Second || e.Top["retryAfter"] != 37 || e.Top["state"] != "WAITING_FOR_CAPACITY" ||
		e.Top["reason"] != "NO_FREE_ELIGIBLE_CONNECTION" || e.Top["eligibleCount"] != 2 || e.Top["freeCount"] != 0 {
		t.Fatalf("capacity envelope = %+v", e)
	}
	if !errors.Is(ErrModelInvalid.WithMessage("x"), ErrModelInvalid) {
		t.Fatal("a WithMessage copy must match its sentinel")
	}
}

// TestStaleViewIsReloadedOutsideTheLock: while the caller that found the
// held-connections view stale reads the database, every other caller is
// served the view it had at once (before, they all queued behind that query,
// which ran under the service's lock: a slow disk stalled every request's
// routing); the reader then publishes the new view. A local write during the
// read keeps the read from publishing a view that misses it.
func TestStaleViewIsReloadedOutsideTheLock(t *testing.T) {
	s, clk, path := newService(t)
	other := New(openStore(t, path), clk)
	owner := newOwner()
	if _, _, held := other.HeldBy("c1"); held { // other's view: loaded, empty
		t.Fatal("held before any lease")
	}
	mustAcquire(t, s, "k1", owner, "c1")
	clk.Advance(heldCacheTTL)

	entered, release := make(chan struct{}), make(chan struct{})
	read := other.readHeld
	other.readHeld = func() (map[string]holder, error) {
		close(entered)
		<-release
		return read()
	}
	reader := make(chan bool)
	go func() { _, _, held := other.HeldBy("c1"); reader <- held }()
	<-entered
	served := make(chan bool)
	go func() { _, _, held := other.HeldBy("c1"); served <- held }()
	select {
	case held := <-served:
		if held {
			t.Fatal("a caller during the reload saw a view that was not loaded yet")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a caller waited for another caller's database read")
	}
	close(release)
	if !<-reader {
		t.Fatal("the reloading caller did not get the new view")
	}
	if _, _, held := other.HeldBy("c1"); !held {
		t.Fatal("the new view was not published")
	}

	// A local write during a reload: that read is not kept.
	clk.Advance(heldCacheTTL)
	entered, release = make(chan struct{}), make(chan struct{})
	other.readHeld = func() (map[string]holder, error) {
		close(entered)
		<-release
		return map[string]holder{}, nil // what the database held before the write
	}
	go func() { other.HeldBy("c1"); reader <- true }()
	<-entered
	other.invalidate()
	close(release)
	<-reader
	other.readHeld = read
	if _, _, held := other.HeldBy("c1"); !held {
		t.Fatal("a read begun before a local write was kept as the view")
	}
}
