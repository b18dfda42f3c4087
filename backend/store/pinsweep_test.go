package store

import (
	"testing"
)

// TestDeleteExpiredPinsAtExpiry: a pin expiring at T survives the sweep at
// T − 1 ms and is gone after the sweep at T + 1 ms; a later pin stays, and
// a second sweep at the same time deletes nothing (every instance of a team
// server may run it).
func TestDeleteExpiredPinsAtExpiry(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		const expiry = int64(1_800_000_000_000) // T
		for _, p := range []AffinityPin{
			{SessionKey: "at-t", ConnectionID: "a", Provider: "p", ExpiresAt: expiry, UpdatedAt: 1},
			{SessionKey: "later", ConnectionID: "b", Provider: "p", ExpiresAt: expiry + 1000, UpdatedAt: 1},
		} {
			if err := s.SavePin(p); err != nil {
				t.Fatal(err)
			}
		}
		stored := func() map[string]bool {
			var rows []AffinityPin
			if err := s.db.Find(&rows).Error; err != nil {
				t.Fatal(err)
			}
			out := map[string]bool{}
			for _, r := range rows {
				out[r.SessionKey] = true
			}
			return out
		}
		steps := []struct {
			name    string
			nowMs   int64
			deleted int64
			left    []string
		}{
			{"T − 1 ms: both live", expiry - 1, 0, []string{"at-t", "later"}},
			{"T + 1 ms: the pin expiring at T is gone", expiry + 1, 1, []string{"later"}},
			{"again at T + 1 ms: nothing more", expiry + 1, 0, []string{"later"}},
		}
		for _, st := range steps {
			n, err := s.DeleteExpiredPins(st.nowMs)
			if err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			left := stored()
			if n != st.deleted || len(left) != len(st.left) {
				t.Fatalf("%s: deleted %d, stored %v; want %d deleted, %v stored", st.name, n, left, st.deleted, st.left)
			}
			for _, k := range st.left {
				if !left[k] {
					t.Fatalf("%s: %s deleted; stored %v", st.name, k, left)
				}
			}
		}
	})
}
