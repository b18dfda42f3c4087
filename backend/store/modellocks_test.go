package store

import (
	"reflect"
	"testing"
)

// TestModelLocks: a lock is stored under (layer, key); a newer write of the
// same key replaces it and an older one is ignored (whatever order two
// instances' writes land in); a tombstone replaces the lock; rows are pruned
// once their expiry is more than keep before now, exactly at the boundary.
func TestModelLocks(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		lock := ModelLockRow{Layer: LayerLockout, Key: "openai:c1:gpt-4o", Provider: "openai", ConnectionID: "c1",
			Model: "gpt-4o", Scope: "model", Reason: "MODEL_NOT_FOUND", Status: 404, FailureCount: 2,
			LockedAt: 1_000, ExpiresAt: 5_000}
		cool := ModelLockRow{Layer: LayerCooldown, Key: lock.Key, Provider: "openai", ConnectionID: "c1",
			Model: "gpt-4o", Scope: "exact", Reason: "RATE_LIMITED", Status: 429, FailureCount: 1,
			LockedAt: 1_000, ExpiresAt: 3_000}
		for _, r := range []ModelLockRow{lock, cool} {
			if err := s.SaveModelLock(r); err != nil {
				t.Fatal(err)
			}
		}
		rows := func(now, keep int64) []ModelLockRow {
			t.Helper()
			out, err := s.ModelLocks(now, keep)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		if got := rows(0, 0); !reflect.DeepEqual(got, []ModelLockRow{cool, lock}) {
			t.Fatalf("rows %+v", got)
		}
		older := lock
		older.LockedAt, older.ExpiresAt, older.FailureCount = 999, 9_000, 7
		if err := s.SaveModelLock(older); err != nil {
			t.Fatal(err)
		}
		if got := rows(0, 0); !reflect.DeepEqual(got[1], lock) {
			t.Fatalf("an older write replaced the lock: %+v", got[1])
		}
		tomb := lock
		tomb.LockedAt, tomb.ExpiresAt, tomb.Cleared = 2_000, 2_000, true
		if err := s.SaveModelLock(tomb); err != nil {
			t.Fatal(err)
		}
		if got := rows(0, 0); !reflect.DeepEqual(got, []ModelLockRow{cool, tomb}) {
			t.Fatalf("after the clear %+v", got)
		}
		// Pruning: expires_at < now − keep goes; keep = 100 ms.
		if got := rows(2_100, 100); len(got) != 2 {
			t.Fatalf("tombstone at its pruning boundary was dropped: %+v", got)
		}
		if got := rows(2_101, 100); !reflect.DeepEqual(got, []ModelLockRow{cool}) {
			t.Fatalf("1 ms past the tombstone's boundary %+v", got)
		}
		if got := rows(3_101, 100); len(got) != 0 {
			t.Fatalf("1 ms past the lock's boundary %+v", got)
		}
	})
}
