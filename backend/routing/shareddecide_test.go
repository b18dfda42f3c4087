package routing

import (
	"path/filepath"
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/providers/registry"
	"omniroute/backend/resilience/breaker"
	"omniroute/backend/resilience/cooldown"
	"omniroute/backend/resilience/lockout"
	"omniroute/backend/store"
)

// queuedDecider is a team server's write-behind in miniature: the engine's
// cooldown decisions wait in a queue until the test lets the (real, shared)
// store decide them, as the writer goroutine would, one call each.
type queuedDecider struct {
	t  *testing.T
	st *store.Store
	q  []func()
}

func (d *queuedDecider) SaveCooldown(id string, f store.CooldownFields) error {
	d.t.Fatal("a shared store's engine saved a cooldown outright")
	return nil
}

func (d *queuedDecider) DecideCooldown(id string, step func(store.CooldownFields) store.CooldownFields, done func(store.CooldownFields, bool)) {
	d.q = append(d.q, func() {
		stored, wrote, err := d.st.DecideCooldown(id, step)
		if err != nil {
			d.t.Fatal(err)
		}
		if done != nil {
			done(stored, wrote)
		}
	})
}

// run lets the database decide everything queued.
func (d *queuedDecider) run() {
	for len(d.q) > 0 {
		f := d.q[0]
		d.q = d.q[1:]
		f()
	}
}

// TestSharedCooldownDecisions: two engines on one database (two instances).
// A herd's failures through A and B, each decided locally first, leave the
// stored row with the first cooldown decided — level 1, its deadline — and
// every engine adopts it (a later herd member's longer local deadline is
// replaced); a decision overtaken by a newer local change (an operator clear)
// is not adopted; a failure at the stored deadline climbs to level 2.
func TestSharedCooldownDecisions(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "shared.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	row := store.Connection{ID: "c", Provider: "openai-compatible", Name: "c", BaseURL: "http://x/v1", Prefix: "p", IsActive: true,
		Models: `["m1"]`, TestStatus: "active"}
	if err := st.CreateConnection(&row); err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t0 := clk.Now()
	instance := func() (*Engine, Candidate, *queuedDecider) {
		reg := NewRegistry(registry.Catalog(nil))
		if err := reg.Load([]store.Connection{row}, plainBox{}); err != nil {
			t.Fatal(err)
		}
		d := &queuedDecider{t: t, st: st}
		breakers := breaker.NewRegistry(clk, func(string) breaker.Profile { return breaker.DefaultProfile("apikey") }, nil)
		e := NewEngine(EngineDeps{Registry: reg, Clock: clk, Breakers: breakers, Lockouts: lockout.New(clk), Store: d, Policy: scopePolicy{}})
		return e, Candidate{Conn: reg.All()[0], Model: "m1"}, d
	}
	a, ca, da := instance()
	b, cb, db := instance()
	// The upstream's 429 with account-wide evidence, no hint.
	v := classify(429, map[string]string{"X-RateLimit-Scope": "account"}, t0)
	if !v.CoolConnection {
		t.Fatalf("verdict %+v does not cool the connection", v)
	}
	// The herd: two requests in flight on A, one on B.
	a1, x1 := a.Admit(ca)
	a2, x2 := a.Admit(ca)
	b1, x3 := b.Admit(cb)
	if x1 != nil || x2 != nil || x3 != nil {
		t.Fatalf("admission refused: %v %v %v", x1, x2, x3)
	}
	a1.Finish(v)
	clk.Advance(time.Millisecond)
	b1.Finish(v) // B does not know A's cooldown yet: its own, 1 ms later
	clk.Advance(time.Millisecond)
	a2.Finish(v) // A's herd member: locally it moves A's deadline 2 ms later
	first := t0.Add(3 * time.Second)
	if got := ca.Conn.Cooldown(); got.BackoffLevel != 1 || !got.RateLimitedUntil.Equal(first.Add(2*time.Millisecond)) {
		t.Fatalf("A before the database answers: %+v", got)
	}
	da.run()
	db.run()
	stored, err := st.Connection("c")
	if err != nil {
		t.Fatal(err)
	}
	if stored.BackoffLevel != 1 || stored.RateLimitedUntil != first.UnixMilli() {
		t.Fatalf("stored level %d until %+d ms, want 1 and the first failure's deadline", stored.BackoffLevel, stored.RateLimitedUntil-first.UnixMilli())
	}
	for name, c := range map[string]Candidate{"A": ca, "B": cb} {
		if got := c.Conn.Cooldown(); got.BackoffLevel != 1 || !got.RateLimitedUntil.Equal(first) {
			t.Fatalf("%s after the decisions: level %d until %v, want the stored cooldown", name, got.BackoffLevel, got.RateLimitedUntil.Sub(t0))
		}
	}

	// At the stored deadline the next failure (through A) climbs one rung.
	clk.Set(first)
	finish(t, a, ca, v)
	da.run()
	if stored, _ = st.Connection("c"); stored.BackoffLevel != 2 || stored.RateLimitedUntil != first.Add(6*time.Second).UnixMilli() {
		t.Fatalf("stored after a failure at the deadline: level %d until %+d ms", stored.BackoffLevel, stored.RateLimitedUntil-first.UnixMilli())
	}

	// B, not yet told, takes a failure too (its own view: level 1, expired),
	// then its operator clears the connection before the database answers:
	// the failure's decision (the stored level-2 cooldown stands) is not
	// adopted over the clear, and the clear is stored after it.
	finish(t, b, cb, v)
	if err := b.SetCooldown(cb.Conn, cooldown.State{TestStatus: cooldown.StatusActive}); err != nil {
		t.Fatal(err)
	}
	db.run()
	if got := cb.Conn.Cooldown(); got.BackoffLevel != 0 || !got.RateLimitedUntil.IsZero() {
		t.Fatalf("B after its clear: %+v, want clear", got)
	}
	if stored, _ = st.Connection("c"); stored.BackoffLevel != 0 || stored.RateLimitedUntil != 0 {
		t.Fatalf("stored after the clear: level %d until %d", stored.BackoffLevel, stored.RateLimitedUntil)
	}
}
