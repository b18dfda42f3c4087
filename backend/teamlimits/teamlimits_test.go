package teamlimits

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"omniroute/backend/clock"
	"omniroute/backend/store"
	"omniroute/tests/pgtest"
)

// pg is the throw-away PostgreSQL server of these tests (the shared limits
// exist on a team server only).
var pg *pgtest.Server

func TestMain(m *testing.M) {
	srv, err := pgtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "teamlimits tests:", err)
		os.Exit(1)
	}
	pg = srv
	code := m.Run()
	srv.Stop()
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreAnyFunction("database/sql.(*DB).connectionOpener")); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// flaky is the database, cut on demand (every statement fails as a
// database that does not answer).
type flaky struct {
	*store.Store
	down atomic.Bool
}

var errDown = store.ErrDatabaseUnavailable

func (f *flaky) AcquireSlot(ctx context.Context, c string, max int, h string, now, ttl int64) (store.Slot, bool, error) {
	if f.down.Load() {
		return store.Slot{}, false, errDown
	}
	return f.Store.AcquireSlot(ctx, c, max, h, now, ttl)
}

func (f *flaky) AcquireSlotPair(ctx context.Context, a string, maxA int, b string, maxB int, h string, now, ttl int64) (
	store.Slot, store.Slot, bool, string, error) {
	if f.down.Load() {
		return store.Slot{}, store.Slot{}, false, "", errDown
	}
	return f.Store.AcquireSlotPair(ctx, a, maxA, b, maxB, h, now, ttl)
}

func (f *flaky) ReleaseSlot(ctx context.Context, sl store.Slot, h string) error {
	if f.down.Load() {
		return errDown
	}
	return f.Store.ReleaseSlot(ctx, sl, h)
}

func (f *flaky) RenewSlots(ctx context.Context, h string, now, ttl int64) (int64, error) {
	if f.down.Load() {
		return 0, errDown
	}
	return f.Store.RenewSlots(ctx, h, now, ttl)
}

func (f *flaky) ReservePace(ctx context.Context, c string, iv, now, dl int64) (int64, bool, error) {
	if f.down.Load() {
		return 0, false, errDown
	}
	return f.Store.ReservePace(ctx, c, iv, now, dl)
}

func open(t testing.TB) *flaky {
	t.Helper()
	st, err := store.OpenPostgres(pg.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return &flaky{Store: st}
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TestMaxConcurrentOneAcrossInstances: three instances' limits on one
// database, 30 requests on a maxConcurrent-1 connection: never two at once,
// all served.
func TestMaxConcurrentOneAcrossInstances(t *testing.T) {
	st := open(t)
	clk := clock.Real{}
	insts := []*Limits{New(st, clk, "A", roomy()), New(st, clk, "B", roomy()), New(st, clk, "C", roomy())}
	var running, peak, served atomic.Int32
	var wg sync.WaitGroup
	for i := range 30 {
		l := insts[i%3]
		wg.Go(func() {
			release, ok, err := l.Slot(context.Background(), "c", 1, time.Now().Add(30*time.Second))
			if err != nil || !ok || release == nil {
				t.Errorf("slot: %v %v (release %v)", ok, err, release != nil)
				return
			}
			n := running.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(2 * time.Millisecond) // the request's work, not a timing assertion
			running.Add(-1)
			served.Add(1)
			release()
		})
	}
	wg.Wait()
	if peak.Load() != 1 || served.Load() != 30 {
		t.Fatalf("peak %d in flight, %d served; want 1 and 30", peak.Load(), served.Load())
	}
}

// TestDeadInstanceSlotFreesAtLeaseEnd: an instance holding the only slot
// stops (no release, no renewal): another instance waiting for it gets it
// when the lease lapses — not 1 ms before — and the dead one's late release
// leaves it alone. A live holder's renewal keeps the slot past the lease.
func TestDeadInstanceSlotFreesAtLeaseEnd(t *testing.T) {
	st := open(t)
	clk := clock.NewFake(t0)
	lease := func() time.Duration { return 3 * time.Second }
	a := New(st, clk, "A", Options{Lease: lease})
	b := New(st, clk, "B", Options{Lease: lease})
	relA, ok, _ := a.Slot(context.Background(), "c", 1, t0.Add(time.Second))
	if !ok || relA == nil {
		t.Fatal("A got no slot")
	}
	// A live holder renews: at lease−1 ms A renews, so B still waits after
	// the first lease.
	clk.Advance(3*time.Second - time.Millisecond)
	a.Tick()
	clk.Advance(time.Millisecond)
	if _, ok, _ := b.Slot(context.Background(), "c", 1, clk.Now()); ok {
		t.Fatal("B took a slot A renewed")
	}
	// A dies now: its slot lapses 3 s after the renewal.
	clk.Advance(3*time.Second - 2*time.Millisecond)
	if _, ok, _ := b.Slot(context.Background(), "c", 1, clk.Now()); ok {
		t.Fatal("B took A's slot 1 ms before its lease ended")
	}
	clk.Advance(time.Millisecond)
	relB, ok, err := b.Slot(context.Background(), "c", 1, clk.Now().Add(time.Second))
	if !ok || relB == nil || err != nil {
		t.Fatalf("B did not get the dead instance's slot at its lease end: %v %v", ok, err)
	}
	relA() // the dead instance's late release: fenced out
	if n, _ := st.HeldSlots("c", clk.Now().UnixMilli()); n != 1 {
		t.Fatalf("%d slots held after A's late release, want B's 1", n)
	}
	relB()
	if n, _ := st.HeldSlots("c", clk.Now().UnixMilli()); n != 0 {
		t.Fatalf("%d slots held after B's release", n)
	}
}

// TestOutageFailsOpenAndQueuesReleases: with the database cut, a slot is
// granted with nothing to hold (the instance's own limit applies) and the
// database is left alone for RetryAfterDown; a release refused during the
// outage waits, is not renewed meanwhile, and is applied at the first tick
// after the database answers.
func TestOutageFailsOpenAndQueuesReleases(t *testing.T) {
	st := open(t)
	clk := clock.NewFake(t0)
	var errsSeen atomic.Int32
	l := New(st, clk, "A", Options{OnError: func(error) { errsSeen.Add(1) }})
	rel, ok, _ := l.Slot(context.Background(), "c", 1, t0.Add(time.Second))
	if !ok || rel == nil {
		t.Fatal("no slot")
	}
	st.down.Store(true)
	rel()
	if l.Pending() != 1 {
		t.Fatalf("%d releases pending, want 1", l.Pending())
	}
	r2, ok, err := l.Slot(context.Background(), "c", 1, t0.Add(time.Second))
	if !ok || r2 != nil || err != nil {
		t.Fatalf("during the outage: %v %v (release %v); want granted with nothing to hold", ok, err, r2 != nil)
	}
	st.down.Store(false)
	if n, _ := st.HeldSlots("c", clk.Now().UnixMilli()); n != 1 {
		t.Fatalf("the slot was freed before the release was applied (%d held)", n)
	}
	l.Tick()
	if l.Pending() != 0 {
		t.Fatal("the queued release was not applied on reconnect")
	}
	if n, _ := st.HeldSlots("c", clk.Now().UnixMilli()); n != 0 {
		t.Fatalf("%d held after the queued release, want 0", n)
	}
	if errsSeen.Load() == 0 {
		t.Fatal("the outage was not reported")
	}
}

// TestPerInstanceOption: with team.limits per instance, nothing is held in
// the database and pacing is left to the instance.
func TestPerInstanceOption(t *testing.T) {
	st := open(t)
	l := New(st, clock.NewFake(t0), "A", Options{Shared: func() bool { return false }})
	for range 3 {
		if rel, ok, _ := l.Slot(context.Background(), "c", 1, t0); !ok || rel != nil {
			t.Fatal("a per-instance slot touched the database")
		}
	}
	if _, _, shared, _ := l.Pace(context.Background(), "c", time.Second, t0, t0); shared {
		t.Fatal("per-instance pacing was shared")
	}
}

// TestPaceAcrossInstances: requestsPerMinute 6 (10 s interval) across three
// instances asking every second for one minute without waiting: 6 turns.
func TestPaceAcrossInstances(t *testing.T) {
	st := open(t)
	clk := clock.NewFake(t0)
	insts := []*Limits{New(st, clk, "A", roomy()), New(st, clk, "B", roomy()), New(st, clk, "C", roomy())}
	taken := 0
	for i := range 60 {
		_, refused, shared, err := insts[i%3].Pace(context.Background(), "c", 10*time.Second, clk.Now(), clk.Now())
		if err != nil || !shared {
			t.Fatalf("pace: %v shared %v", err, shared)
		}
		if refused.IsZero() {
			taken++
		}
		clk.Advance(time.Second)
	}
	if taken != 6 {
		t.Fatalf("%d turns in a minute at requestsPerMinute 6 across three instances, want 6", taken)
	}
}

// roomy is the options of the tests whose statements must not time out: the
// whole suite runs under -race on two loaded cores, where a statement can
// take longer than the request path's one-second bound (the tests of what a
// failing database does use a store that fails at once).
func roomy() Options { return Options{CallTimeout: 30 * time.Second} }
