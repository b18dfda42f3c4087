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
