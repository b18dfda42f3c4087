package store

import (
	"errors"
	"sync/atomic"
	"testing"
)

// escalateAt is the shape of the rule a team server's instances hand to
// DecideCooldown (cooldown.ApplyStored): a row already cooling at the
// failure's instant at is left alone; otherwise the ladder climbs one rung and
// a 3 s cooldown starts at at.
func escalateAt(at int64) func(CooldownFields) CooldownFields {
	return func(f CooldownFields) CooldownFields {
		if f.RateLimitedUntil > at {
			return f
		}
		f.BackoffLevel++
		f.RateLimitedUntil = at + 3000
		f.LastErrorAt = at
		f.TestStatus = "unavailable"
		return f
	}
}

// TestDecideCooldownSeesTheStoredRow: decide gets the row as stored, and only
// a change is written. Boundaries on the stored deadline: cooling until at+1 ms
// → nothing written, the stored row returned; until at−1 ms → the ladder
// climbs from the stored level.
func TestDecideCooldownSeesTheStoredRow(t *testing.T) {
	const at = int64(1_700_000_000_000)
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		tests := []struct {
			name      string
			until     int64
			wantLevel int
			wantUntil int64
			wantWrote bool
		}{
			{"cooling until at+1ms: no escalation", at + 1, 2, at + 1, false},
			{"until at: escalates", at, 3, at + 3000, true},
			{"until at-1ms: escalates", at - 1, 3, at + 3000, true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s := open(t)
				if err := s.CreateConnection(&Connection{ID: "c1", Provider: "openai", Name: "a", IsActive: true}); err != nil {
					t.Fatal(err)
				}
				if err := s.SaveCooldown("c1", CooldownFields{RateLimitedUntil: tt.until, TestStatus: "unavailable", BackoffLevel: 2, LastErrorAt: at - 6000}); err != nil {
					t.Fatal(err)
				}
				stored, wrote, err := s.DecideCooldown("c1", escalateAt(at))
				if err != nil {
					t.Fatal(err)
				}
				if stored.BackoffLevel != tt.wantLevel || stored.RateLimitedUntil != tt.wantUntil || wrote != tt.wantWrote {
					t.Fatalf("decided level %d until at%+d wrote %v; want %d, at%+d, %v", stored.BackoffLevel, stored.RateLimitedUntil-at, wrote,
						tt.wantLevel, tt.wantUntil-at, tt.wantWrote)
				}
				row, err := s.Connection("c1")
				if err != nil {
					t.Fatal(err)
				}
				if row.BackoffLevel != tt.wantLevel || row.RateLimitedUntil != tt.wantUntil {
					t.Fatalf("row level %d until at%+d after the decision", row.BackoffLevel, row.RateLimitedUntil-at)
				}
			})
		}
		t.Run("missing connection", func(t *testing.T) {
			if _, _, err := open(t).DecideCooldown("nope", escalateAt(at)); !errors.Is(err, ErrNotFound) {
				t.Fatalf("err = %v, want ErrNotFound", err)
			}
		})
	})
}

// TestPostgresDecideCooldownHerdAcrossInstances: 40 failures of one herd,
// decided at the same instant through two store handles (two instances) on
// one PostgreSQL database, raise the level exactly once and write one
// cooldown: the row lock makes every decision after the first see it.
func TestPostgresDecideCooldownHerdAcrossInstances(t *testing.T) {
	const at = int64(1_700_000_000_000)
	a, b := twoInstances(t)
	if err := a.CreateConnection(&Connection{ID: "c1", Provider: "openai", Name: "a", IsActive: true}); err != nil {
		t.Fatal(err)
	}
	var writes atomic.Int32
	acrossInstances(a, b, 40, func(st *Store) {
		stored, wrote, err := st.DecideCooldown("c1", escalateAt(at))
		if err != nil {
			t.Error(err)
			return
		}
		if wrote {
			writes.Add(1)
		}
		if stored.BackoffLevel != 1 || stored.RateLimitedUntil != at+3000 {
			t.Errorf("a decision returned level %d until at%+d, want the one cooldown (1, at+3000)", stored.BackoffLevel, stored.RateLimitedUntil-at)
		}
	})
	if n := writes.Load(); n != 1 {
		t.Fatalf("%d decisions wrote the row, want exactly 1", n)
	}
	row, err := b.Connection("c1")
	if err != nil {
		t.Fatal(err)
	}
	if row.BackoffLevel != 1 || row.RateLimitedUntil != at+3000 {
		t.Fatalf("row level %d until at%+d, want 1 and at+3000", row.BackoffLevel, row.RateLimitedUntil-at)
	}
	// After the cooldown ends, the next failure climbs to level 2.
	stored, wrote, err := b.DecideCooldown("c1", escalateAt(at+3000))
	if err != nil || !wrote || stored.BackoffLevel != 2 {
		t.Fatalf("failure at the deadline: level %d wrote %v err %v, want level 2 written", stored.BackoffLevel, wrote, err)
	}
}

// TestDecideBreaker: the first decision of a provider finds a CLOSED row; on
// PostgreSQL 40 concurrent decisions through two handles (two instances),
// each adding one failure to the row as stored, lose none.
func TestDecideBreaker(t *testing.T) {
	addFailure := func(r BreakerRow) BreakerRow { r.Failures++; return r }
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		stored, wrote, err := s.DecideBreaker("p", func(r BreakerRow) BreakerRow {
			if r.State != "CLOSED" || r.Failures != 0 {
				t.Errorf("a new provider's row: %+v", r)
			}
			return addFailure(r)
		})
		if err != nil || !wrote || stored.Failures != 1 {
			t.Fatalf("first decision: %+v wrote %v err %v", stored, wrote, err)
		}
		if _, wrote, _ := s.DecideBreaker("p", func(r BreakerRow) BreakerRow { return r }); wrote {
			t.Fatal("an unchanged row was written")
		}
	})
	a, b := twoInstances(t)
	acrossInstances(a, b, 40, func(st *Store) {
		if _, _, err := st.DecideBreaker("p", addFailure); err != nil {
			t.Error(err)
		}
	})
	rows, err := a.Breakers()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Failures != 40 {
		t.Fatalf("rows %+v, want one with 40 failures", rows)
	}
}
