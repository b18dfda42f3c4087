package store

import (
	"context"
	"sync"
	"testing"
)

// TestClaimPin: the first writer's pin stands until it expires (exactly at
// its expiry another claim wins); a refresh of the same connection and a
// move from the stored connection are written; a move from a connection
// the pin no longer names is not.
func TestClaimPin(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		pin := func(conn string, exp int64) AffinityPin {
			return AffinityPin{SessionKey: "s1", ConnectionID: conn, Provider: "p", ExpiresAt: exp, UpdatedAt: exp - 1000}
		}
		steps := []struct {
			name string
			p    AffinityPin
			prev string
			now  int64
			want string
		}{
			{"first claim", pin("a", 2000), "", 1000, "a"},
			{"a second claim loses", pin("b", 2100), "", 1100, "a"},
			{"refresh of the same connection", pin("a", 2200), "", 1200, "a"},
			{"a move from a stale connection loses", pin("b", 2300), "c", 1300, "a"},
			{"a move from the stored connection wins", pin("b", 2400), "a", 1400, "b"},
			{"one ms before expiry the pin stands", pin("c", 3000), "", 2399, "b"},
			{"at expiry another claim wins", pin("c", 3400), "", 2400, "c"},
		}
		for _, st := range steps {
			got, err := s.ClaimPin(context.Background(), st.p, st.prev, st.now)
			if err != nil || got.ConnectionID != st.want {
				t.Fatalf("%s: ClaimPin = %+v, %v; want connection %s", st.name, got, err, st.want)
			}
		}
		if err := s.MovePin(pin("d", 4000), "x", 2500); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.ClaimPin(context.Background(), pin("e", 4000), "", 2500); got.ConnectionID != "c" {
			t.Fatalf("after a refused MovePin the pin is %q, want c", got.ConnectionID)
		}
	})
}

// TestPostgresClaimPinAcrossInstances: 40 first claims of one session through
// two handles at once, each naming its own connection, all get the same pin.
func TestPostgresClaimPinAcrossInstances(t *testing.T) {
	a, b := twoInstances(t)
	var mu sync.Mutex
	seen := map[string]int{}
	i := 0
	acrossInstances(a, b, 40, func(st *Store) {
		mu.Lock()
		i++
		conn := string(rune('a' + i%5))
		mu.Unlock()
		got, err := st.ClaimPin(context.Background(), AffinityPin{SessionKey: "herd", ConnectionID: conn, Provider: "p", ExpiresAt: 10_000, UpdatedAt: 1}, "", 1)
		if err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		seen[got.ConnectionID]++
		mu.Unlock()
	})
	if len(seen) != 1 {
		t.Fatalf("concurrent claims saw pins %v, want one connection for all", seen)
	}
}
