package store

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
)

// TestKeyTokenWindow: a key's token window admits while what it counts is
// below the limit (the request that crosses it is admitted, the next one
// refused until the oldest tokens leave the window — exactly at their
// expiry, not 1 ms before); a settled hold counts its answer's tokens, an
// unserved one (0 tokens) nothing.
func TestKeyTokenWindow(t *testing.T) {
	ctx := context.Background()
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		a, err := s.TakeKeyTokens(ctx, "k", 100, 60, 1000, 60_000)
		if err != nil || a.Hold == 0 || a.Used != 0 {
			t.Fatalf("first take = %+v %v", a, err)
		}
		b, err := s.TakeKeyTokens(ctx, "k", 100, 60, 1001, 60_000)
		if err != nil || b.Hold == 0 || b.Used != 60 {
			t.Fatalf("second take (60 of 100 counted) = %+v %v", b, err)
		}
		if c, err := s.TakeKeyTokens(ctx, "k", 100, 1, 1002, 60_000); err != nil || c.Hold != 0 || c.Used != 120 || c.Oldest != 61_000 {
			t.Fatalf("third take at 120 of 100 = %+v %v; want refused, oldest leaving at 61000", c, err)
		}
		if o, err := s.TakeKeyTokens(ctx, "other", 100, 1, 1002, 60_000); err != nil || o.Hold == 0 {
			t.Fatalf("another key refused: %+v %v", o, err)
		}
		// b was not served, a used 100 tokens (counted until 2000+60000).
		if err := s.SettleKeyTokens(ctx, "k", b.Hold, 0, 2000, 60_000); err != nil {
			t.Fatal(err)
		}
		if err := s.SettleKeyTokens(ctx, "k", a.Hold, 100, 2000, 60_000); err != nil {
			t.Fatal(err)
		}
		if c, _ := s.TakeKeyTokens(ctx, "k", 100, 1, 61_999, 60_000); c.Hold != 0 || c.Used != 100 {
			t.Fatalf("1 ms before the charge leaves the window: %+v, want refused at 100", c)
		}
		if c, _ := s.TakeKeyTokens(ctx, "k", 100, 1, 62_000, 60_000); c.Hold == 0 || c.Used != 0 {
			t.Fatalf("when the charge leaves the window: %+v, want admitted at 0", c)
		}
		// A hold that lapsed and was pruned is charged anew.
		if err := s.SettleKeyTokens(ctx, "k", 999_999, 7, 62_000, 60_000); err != nil {
			t.Fatal(err)
		}
		if c, _ := s.TakeKeyTokens(ctx, "k", 100, 1, 62_001, 60_000); c.Used != 8 {
			t.Fatalf("after a lapsed hold's charge the window counts %d, want 1+7", c.Used)
		}
	})
}

// TestSettleNamesTheKey: a settlement names its hold by id and key, so an
// id that now belongs to another key's hold (the unlogged table and its id
// sequence start over after a server crash) changes nothing.
func TestSettleNamesTheKey(t *testing.T) {
	ctx := context.Background()
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		other, err := s.TakeKeyTokens(ctx, "other", 100, 60, 1000, 60_000)
		if err != nil || other.Hold == 0 {
			t.Fatal(other, err)
		}
		if err := s.SettleKeyTokens(ctx, "k", other.Hold, 0, 1000, 60_000); err != nil {
			t.Fatal(err)
		}
		if err := s.SettleKeyTokens(ctx, "k", other.Hold, 1, 1000, 60_000); err != nil {
			t.Fatal(err)
		}
		if c, _ := s.TakeKeyTokens(ctx, "other", 100, 1, 1001, 60_000); c.Used != 60 {
			t.Fatalf("the other key's window counts %d, want its 60", c.Used)
		}
	})
}

// TestPostgresTeamLimitTablesUnlogged: the team-wide limits' tables write no
// WAL (migration 0018), so their statements' commits do not wait for a
// flush to disk.
func TestPostgresTeamLimitTablesUnlogged(t *testing.T) {
	s := openDialect(t, Postgres)
	for _, table := range []string{"connection_slots", "connection_pacing", "key_rate_tokens"} {
		var p string
		if err := s.DB().Raw(`SELECT relpersistence FROM pg_class WHERE relname = ?`, table).Scan(&p).Error; err != nil {
			t.Fatal(err)
		}
		if p != "u" {
			t.Errorf("%s: relpersistence %q, want u (unlogged)", table, p)
		}
	}
}

// TestPostgresKeyTokensAcrossInstances: 40 admissions of 10 tokens under a
// limit of 100, at once through two handles: exactly 10 admitted (each
// counts the ones before it).
func TestPostgresKeyTokensAcrossInstances(t *testing.T) {
	a, b := twoInstances(t)
	var won atomic.Int32
	var mu sync.Mutex
	acrossInstances(a, b, 40, func(st *Store) {
		got, err := st.TakeKeyTokens(context.Background(), "k", 100, 10, 1000, 60_000)
		if err != nil {
			mu.Lock()
			t.Error(err)
			mu.Unlock()
		}
		if got.Hold != 0 {
			won.Add(1)
		}
	})
	if won.Load() != 10 {
		t.Fatalf("%d admissions of 10 tokens under 100 tokens per minute, want 10", won.Load())
	}
}

// TestClaimBudgetAlert: each alert is claimed once per key, period, budget
// and level; 20 claims at once through two handles: one wins.
func TestClaimBudgetAlert(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		for _, c := range []struct {
			key    string
			period int64
			budget string
			pct    int
			want   bool
		}{
			{"k", 1000, "usd=10", 80, true},
			{"k", 1000, "usd=10", 80, false},
			{"k", 1000, "usd=10", 100, true},
			{"k", 2000, "usd=10", 80, true},  // the next period
			{"k", 1000, "usd=20", 80, true},  // the budget changed
			{"k2", 1000, "usd=10", 80, true}, // another key
		} {
			if got, err := s.ClaimBudgetAlert(c.key, c.period, c.budget, c.pct, 5); err != nil || got != c.want {
				t.Fatalf("%+v: claimed %v (%v)", c, got, err)
			}
		}
	})
	a, b := twoInstances(t)
	var won atomic.Int32
	acrossInstances(a, b, 20, func(st *Store) {
		if ok, err := st.ClaimBudgetAlert("k", 0, "tokens=100", 100, 1); err == nil && ok {
			won.Add(1)
		}
	})
	if won.Load() != 1 {
		t.Fatalf("%d claims won one alert", won.Load())
	}
}

// TestTakeKeyRates: a key's two windows at once (2 rpm, 100 tokens): both
// taken or neither — the RPM window full refuses and the TPM window keeps
// its count, and the other way round.
func TestTakeKeyRates(t *testing.T) {
	ctx := context.Background()
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		for i := range 2 {
			got, err := s.TakeKeyRates(ctx, "k", "rpm|k", 2, 100, 30, 1000+int64(i), 60_000)
			if err != nil || got.TPM.Hold == 0 || got.RPM.Hold == 0 {
				t.Fatalf("request %d: %+v %v", i, got, err)
			}
		}
		got, err := s.TakeKeyRates(ctx, "k", "rpm|k", 2, 100, 30, 1002, 60_000)
		if err != nil || got.TPM.Hold != 0 || got.RPM.Hold != 0 || got.RPM.Used != 2 || got.RPM.Oldest != 61_000 || got.TPM.Used != 60 {
			t.Fatalf("RPM full: %+v %v", got, err)
		}
		got, err = s.TakeKeyRates(ctx, "k", "rpm|k", 5, 60, 30, 1003, 60_000)
		if err != nil || got.TPM.Hold != 0 || got.TPM.Used != 60 || got.RPM.Used != 2 {
			t.Fatalf("TPM full: %+v %v", got, err)
		}
		if c, _ := s.TakeKeyTokens(ctx, "rpm|k", 3, 1, 1004, 60_000); c.Hold == 0 || c.Used != 2 {
			t.Fatalf("the RPM window counts %d after the refusals, want 2", c.Used)
		}
	})
}

// TestDeleteExpiredKeyRates: the sweep deletes every key's rows that left
// their window at or before its bound (not 1 ms after), and no live row.
func TestDeleteExpiredKeyRates(t *testing.T) {
	ctx := context.Background()
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		for _, k := range []string{"idle", "rpm|idle"} {
			if got, err := s.TakeKeyTokens(ctx, k, 10, 5, 1000, 60_000); err != nil || got.Hold == 0 {
				t.Fatalf("take %s: %+v %v", k, got, err)
			}
		}
		if got, _ := s.TakeKeyTokens(ctx, "live", 10, 5, 2000, 60_000); got.Hold == 0 {
			t.Fatal("live key refused")
		}
		if n, err := s.DeleteExpiredKeyRates(ctx, 60_999); err != nil || n != 0 {
			t.Fatalf("1 ms before the rows expired the sweep deleted %d (%v)", n, err)
		}
		if n, err := s.DeleteExpiredKeyRates(ctx, 61_000); err != nil || n != 2 {
			t.Fatalf("the sweep deleted %d rows (%v), want the idle key's 2", n, err)
		}
		if n, _ := s.KeyRateRows("live"); n != 1 {
			t.Fatalf("the live key has %d rows after the sweep, want 1", n)
		}
	})
}
