package store

import "testing"

// TestKeySpendChargesAtomically: charges of one period add up, a newer
// period replaces the stored one, a late charge for an older one is dropped,
// and a seed never overwrites the period's charges.
func TestKeySpendChargesAtomically(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		if _, ok, err := s.KeySpendIn("k", 100); ok || err != nil {
			t.Fatalf("empty: %v %v", ok, err)
		}
		if err := s.SeedKeySpend("k", 100, KeySpend{USD: 1, Tokens: 10}); err != nil {
			t.Fatal(err)
		}
		if got, err := s.ChargeKeySpend("k", 100, 0.5, 5); err != nil || got != (KeySpend{1.5, 15}) {
			t.Fatalf("charge: %+v %v", got, err)
		}
		if err := s.SeedKeySpend("k", 100, KeySpend{USD: 9, Tokens: 9}); err != nil {
			t.Fatal(err)
		}
		if got, ok, _ := s.KeySpendIn("k", 100); !ok || got != (KeySpend{1.5, 15}) {
			t.Fatalf("a seed overwrote the period's charges: %+v", got)
		}
		if got, _ := s.ChargeKeySpend("k", 200, 0.25, 2); got != (KeySpend{0.25, 2}) {
			t.Fatalf("new period: %+v", got)
		}
		if got, _ := s.ChargeKeySpend("k", 100, 7, 7); got != (KeySpend{0.25, 2}) {
			t.Fatalf("a late charge of the old period: %+v", got)
		}
		if _, ok, _ := s.KeySpendIn("k", 100); ok {
			t.Fatal("the old period is gone")
		}
	})
}

// TestReserveKeySpendStopsAtTheCap: a hold is added while the period's spend
// is under both caps and refused once it reached either; another period (or
// none) is refused too, for the caller to start the period.
func TestReserveKeySpendStopsAtTheCap(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		if _, ok, err := s.ReserveKeySpend("k", 100, 1, 1, 10, 100); ok || err != nil {
			t.Fatalf("no row: %v %v", ok, err)
		}
		if err := s.SeedKeySpend("k", 100, KeySpend{USD: 9.99, Tokens: 10}); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := s.ReserveKeySpend("k", 100, 0.5, 5, 10, 100); !ok || err != nil || got != (KeySpend{10.49, 15}) {
			t.Fatalf("a cent under the cap: %+v %v %v", got, ok, err)
		}
		if _, ok, _ := s.ReserveKeySpend("k", 100, 0.5, 5, 10, 100); ok {
			t.Fatal("held over the USD cap")
		}
		if _, ok, _ := s.ReserveKeySpend("k", 100, 0.5, 5, 100, 15); ok {
			t.Fatal("held at the token cap")
		}
		if got, ok, _ := s.ReserveKeySpend("k", 100, 0.25, 1, 100, 16); !ok || got.Tokens != 16 {
			t.Fatalf("a token under the cap: %+v %v", got, ok)
		}
		if _, ok, _ := s.ReserveKeySpend("k", 200, 0.5, 5, 100, 100); ok {
			t.Fatal("held in another period")
		}
	})
}
