package routing

import (
	"path/filepath"
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/providers/registry"
	"omniroute/backend/resilience/breaker"
	"omniroute/backend/resilience/lockout"
	"omniroute/backend/store"
)

// sharedEngine is scopeEngine on the shared clock, saving its model locks to
// locks (nil: not shared).
func sharedEngine(t *testing.T, clk *clock.Fake, p scopePolicy, locks LockStore) (*Engine, Candidate, Candidate) {
	t.Helper()
	reg := NewRegistry(registry.Catalog(nil))
	if err := reg.Load([]store.Connection{{ID: "c", Provider: "openai-compatible", Name: "c", BaseURL: "http://x/v1",
		Prefix: "p", IsActive: true, Models: `["m1","m2"]`}}, plainBox{}); err != nil {
		t.Fatal(err)
	}
	breakers := breaker.NewRegistry(clk, func(string) breaker.Profile { return breaker.DefaultProfile("apikey") }, nil)
	e := NewEngine(EngineDeps{Registry: reg, Clock: clk, Breakers: breakers, Lockouts: lockout.New(clk),
		Store: nopStore{}, Policy: p, Locks: locks})
	conn := reg.All()[0]
	return e, Candidate{Conn: conn, Model: "m1"}, Candidate{Conn: conn, Model: "m2"}
}

// TestSharedModelLocks: two engines on one database (two instances of a team
// server). A model locked through A — a model cooldown, or a model lockout
// with the layer on — is excluded by B once B adopts the rows; clearing it on
// B writes a tombstone, and A releases the model once it adopts that; the
// sibling model is never touched.
func TestSharedModelLocks(t *testing.T) {
	for _, tc := range []struct {
		lockoutOn bool
		reason    string
	}{{false, "model_cooldown"}, {true, "model_lockout"}} {
		t.Run(tc.reason, func(t *testing.T) {
			st, err := store.Open(filepath.Join(t.TempDir(), "shared.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			p := scopePolicy{lockout: tc.lockoutOn}
			a, a1, _ := sharedEngine(t, clk, p, st)
			b, b1, b2 := sharedEngine(t, clk, p, st)
			adopt := func(e *Engine) {
				t.Helper()
				rows, err := st.ModelLocks(clk.Now().UnixMilli(), time.Minute.Milliseconds())
				if err != nil {
					t.Fatal(err)
				}
				e.AdoptModelLocks(rows)
			}

			finish(t, a, a1, classify(429, map[string]string{"Retry-After": "30"}, clk.Now()))
			if x := a.Check(a1); x == nil || x.Reason != tc.reason {
				t.Fatalf("A: %+v, want %s", x, tc.reason)
			}
			if x := b.Check(b1); x != nil {
				t.Fatalf("B excluded the model before adopting: %+v", *x)
			}
			adopt(b)
			if x := b.Check(b1); x == nil || x.Reason != tc.reason {
				t.Fatalf("B after adopting: %+v, want %s", x, tc.reason)
			}
			if x := b.Check(b2); x != nil {
				t.Fatalf("B excluded the sibling model: %+v", *x)
			}
			if locks := b.ModelLocks(); len(locks) != 1 || locks[0].Model != "m1" {
				t.Fatalf("B lists %+v", locks)
			}

			clk.Advance(time.Millisecond)
			if n := b.ClearModelLocks("", "c", "m1"); n != 1 {
				t.Fatalf("B cleared %d", n)
			}
			adopt(a) // A's own lock row was replaced by B's tombstone
			if x := a.Check(a1); x != nil {
				t.Fatalf("A still excludes the model B cleared: %+v", *x)
			}
			adopt(b) // the tombstone brings nothing back
			if x := b.Check(b1); x != nil {
				t.Fatalf("B: %+v after its own clear came back", *x)
			}
		})
	}
}
