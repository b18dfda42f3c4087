package gate

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func keys(acct, model int) []Key {
	return []Key{{Name: "global"}, {Name: "provider:p"}, {Name: "account:c", Limit: acct}, {Name: "model:c/m", Limit: model}}
}

func mustAcquire(t *testing.T, g *Gate, ks []Key) *Permit {
	t.Helper()
	p, err := g.Acquire(context.Background(), ks, 0)
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	return p
}

// A composite permit is all or none: while one counter is full, the others
// are not held by the waiting caller.
func TestAllOrNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New()
		a := mustAcquire(t, g, []Key{{Name: "A", Limit: 1}})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		done := make(chan error, 1)
		go func() {
			p, err := g.Acquire(ctx, []Key{{Name: "B", Limit: 1}, {Name: "A", Limit: 1}}, 0)
			if err == nil {
				p.Release()
			}
			done <- err
		}()
		synctest.Wait()
		if got := g.Get("B"); got.InFlight != 0 || got.Waiting != 1 {
			t.Fatalf("B while the composite waits = %+v, want not held and 1 waiting", got)
		}
		b := mustAcquire(t, g, []Key{{Name: "B", Limit: 1}}) // B alone is free: no partial hold
		b.Release()
		a.Release()
		if err := <-done; err != nil {
			t.Fatalf("composite after release: %v", err)
		}
		if !g.Idle() {
			t.Fatalf("gate not idle: %+v", g.Snapshot())
		}
	})
}

// The wait budget boundary: a slot freed 1 ms before the budget ends is taken,
// 1 ms after it the caller has already got SEMAPHORE_TIMEOUT.
func TestTimeoutBoundary(t *testing.T) {
	for _, tc := range []struct {
		name      string
		releaseAt time.Duration
		wantErr   bool
	}{
		{"freed at budget-1ms", 99 * time.Millisecond, false},
		{"freed at budget+1ms", 101 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := New()
				held := mustAcquire(t, g, keys(1, 0))
				released := make(chan struct{})
				go func() {
					time.Sleep(tc.releaseAt)
					held.Release()
					close(released)
				}()
				start := time.Now()
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				defer cancel()
				p, err := g.Acquire(ctx, keys(1, 0), 0)
				if tc.wantErr {
					var ge *Error
					if !errors.As(err, &ge) || ge.Code != CodeTimeout || ge.Key != "account:c" || ge.Limit != 1 {
						t.Fatalf("err = %v, want SEMAPHORE_TIMEOUT on account:c", err)
					}
					if waited := time.Since(start); waited != 100*time.Millisecond {
						t.Fatalf("gave up after %v, want exactly the 100ms budget", waited)
					}
				} else {
					if err != nil {
						t.Fatalf("err = %v, want the slot", err)
					}
					if waited := time.Since(start); waited != tc.releaseAt {
						t.Fatalf("got the slot after %v, want %v", waited, tc.releaseAt)
					}
					p.Release()
				}
				<-released
				if !g.Idle() {
					t.Fatalf("gate not idle: %+v", g.Snapshot())
				}
			})
		})
	}
}

// maxWaiting: with depth-1 callers waiting one more is queued, with depth
// callers waiting the next is refused at once with SEMAPHORE_QUEUE_FULL.
func TestQueueFullBoundary(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const depth = 2
		g := New()
		held := mustAcquire(t, g, keys(0, 1))
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for i := 0; i < depth; i++ { // the last of these is admitted with depth-1 waiting
			wg.Add(1)
			go func() {
				defer wg.Done()
				if p, err := g.Acquire(ctx, keys(0, 1), depth); err == nil {
					p.Release()
				}
			}()
			synctest.Wait()
			if got := g.Get("model:c/m").Waiting; got != i+1 {
				t.Fatalf("waiting = %d, want %d", got, i+1)
			}
		}
		_, err := g.Acquire(ctx, keys(0, 1), depth)
		var ge *Error
		if !errors.As(err, &ge) || ge.Code != CodeQueueFull || ge.Key != "model:c/m" {
			t.Fatalf("err = %v, want SEMAPHORE_QUEUE_FULL on the model", err)
		}
		cancel()
		wg.Wait()
		held.Release()
		if !g.Idle() {
			t.Fatalf("gate not idle: %+v", g.Snapshot())
		}
	})
}

// The most restrictive level wins: account cap 1 holds even though the model allows 3.
func TestMostRestrictiveWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New()
		p := mustAcquire(t, g, keys(1, 3))
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		if _, err := g.Acquire(ctx, keys(1, 3), 0); !IsTimeout(err) {
			t.Fatalf("second request under account cap 1: %v, want timeout", err)
		}
		p.Release()
		p.Release() // idempotent
		if !g.Idle() {
			t.Fatalf("gate not idle: %+v", g.Snapshot())
		}
	})
}

// A waiter blocked on model A does not hold up a later request for model B.
func TestOtherModelNotBlocked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New()
		mA := func() []Key { return []Key{{Name: "account:c", Limit: 4}, {Name: "model:c/A", Limit: 1}} }
		mB := []Key{{Name: "account:c", Limit: 4}, {Name: "model:c/B", Limit: 1}}
		a1 := mustAcquire(t, g, mA())
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		waitA := make(chan error, 1)
		go func() {
			p, err := g.Acquire(ctx, mA(), 0)
			if err == nil {
				p.Release()
			}
			waitA <- err
		}()
		synctest.Wait()
		b, err := g.Acquire(ctx, mB, 0)
		if err != nil {
			t.Fatalf("model B behind a waiting model A: %v", err)
		}
		if got := g.Get("account:c"); got.InFlight != 2 || got.Waiting != 1 {
			t.Fatalf("account = %+v, want 2 in flight, 1 waiting", got)
		}
		b.Release()
		a1.Release()
		if err := <-waitA; err != nil {
			t.Fatal(err)
		}
		if !g.Idle() {
			t.Fatalf("gate not idle: %+v", g.Snapshot())
		}
	})
}

// FIFO on a saturated counter: waiters are served in arrival order.
func TestFIFO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New()
		held := mustAcquire(t, g, keys(1, 0))
		var mu sync.Mutex
		var order []int
		var wg sync.WaitGroup
		for i := 0; i < 5; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p, err := g.Acquire(context.Background(), keys(1, 0), 0)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				time.Sleep(time.Millisecond)
				p.Release()
			}()
			synctest.Wait()
		}
		held.Release()
		wg.Wait()
		for i, v := range order {
			if v != i {
				t.Fatalf("order = %v, want arrival order", order)
			}
		}
	})
}

// A cancelled waiter leaves nothing behind and reports the cancellation.
func TestCancelledWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New()
		held := mustAcquire(t, g, keys(1, 1))
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := g.Acquire(ctx, keys(1, 1), 0)
			errc <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		held.Release()
		if !g.Idle() {
			t.Fatalf("gate not idle: %+v", g.Snapshot())
		}
	})
}

// Many goroutines taking random overlapping key sets in random orders never
// deadlock, never exceed a limit, and leave every counter at zero.
func TestNoDeadlockNoOvershoot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New()
		names := []string{"global", "provider:a", "provider:b", "account:1", "account:2", "model:1/x", "model:2/y"}
		limits := map[string]int{"account:1": 2, "account:2": 1, "model:1/x": 1, "model:2/y": 1, "provider:b": 2}
		var mu sync.Mutex
		inUse := map[string]int{}
		var wg sync.WaitGroup
		for i := 0; i < 200; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(i), 7))
				var ks []Key
				for _, j := range r.Perm(len(names))[:1+r.IntN(len(names))] {
					ks = append(ks, Key{Name: names[j], Limit: limits[names[j]]})
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(r.IntN(50))*time.Millisecond)
				defer cancel()
				p, err := g.Acquire(ctx, ks, 0)
				if err != nil {
					if !IsTimeout(err) {
						t.Error(err)
					}
					return
				}
				mu.Lock()
				for _, k := range ks {
					inUse[k.Name]++
					if k.Limit > 0 && inUse[k.Name] > k.Limit {
						t.Errorf("%s: %d in use over limit %d", k.Name, inUse[k.Name], k.Limit)
					}
				}
				mu.Unlock()
				time.Sleep(time.Duration(r.IntN(5)) * time.Millisecond)
				mu.Lock()
				for _, k := range ks {
					inUse[k.Name]--
				}
				mu.Unlock()
				p.Release()
			}()
		}
		wg.Wait()
		if !g.Idle() {
			t.Fatalf("gate not idle: %+v", g.Snapshot())
		}
	})
}

func TestTryAcquire(t *testing.T) {
	g := New()
	p, ok := g.TryAcquire(keys(1, 0))
	if !ok {
		t.Fatal("a free gate refused TryAcquire")
	}
	if _, ok := g.TryAcquire(keys(1, 0)); ok {
		t.Fatal("TryAcquire over the cap")
	}
	if q, ok := g.TryAcquire([]Key{{Name: "account:other", Limit: 1}}); !ok {
		t.Fatal("another counter refused")
	} else {
		q.Release()
	}
	p.Release()
	if !g.Idle() {
		t.Fatalf("gate not idle: %+v", g.Snapshot())
	}
}
