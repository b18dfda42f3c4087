package lockout_test

import (
	"testing"
	"time"

	"omniroute/backend/resilience/lockout"
)

// TestAdopt: another instance's entry is taken when it is newer than this
// table's (a later LockedAt, or no local entry) — a lock while it is still
// active, a tombstone by deleting the local entry; an entry as new or older
// is ignored, and so is a lock expired at now (boundaries ±1 ms).
func TestAdopt(t *testing.T) {
	t0 := start()
	ms := time.Millisecond
	local := t0.Add(-time.Second) // the local lock's LockedAt; it expires at t0 + 1 min
	remote := func(lockedAt, expiresAt time.Time, cleared bool) lockout.Remote {
		return lockout.Remote{Entry: lockout.Entry{Provider: "zeta", ConnectionID: "c1", Model: "gpt-4o",
			Scope: lockout.ScopeExact, Reason: "RATE_LIMITED", Status: 429, FailureCount: 3,
			LockedAt: lockedAt, ExpiresAt: expiresAt}, Cleared: cleared}
	}
	tests := []struct {
		name      string
		hasLocal  bool
		remote    lockout.Remote
		taken     int
		locked    bool
		expiresAt time.Time // of the lock in force afterwards
	}{
		{"new lock", false, remote(t0.Add(-time.Second), t0.Add(time.Minute), false), 1, true, t0.Add(time.Minute)},
		{"new lock expiring in 1 ms", false, remote(t0.Add(-time.Second), t0.Add(ms), false), 1, true, t0.Add(ms)},
		{"new lock expiring now", false, remote(t0.Add(-time.Second), t0, false), 0, false, time.Time{}},
		{"new lock expired 1 ms ago", false, remote(t0.Add(-time.Second), t0.Add(-ms), false), 0, false, time.Time{}},
		{"newer than ours by 1 ms", true, remote(local.Add(ms), t0.Add(2*time.Minute), false), 1, true, t0.Add(2 * time.Minute)},
		{"as new as ours", true, remote(local, t0.Add(2*time.Minute), false), 0, true, local.Add(time.Minute)},
		{"older than ours by 1 ms", true, remote(local.Add(-ms), t0.Add(2*time.Minute), false), 0, true, local.Add(time.Minute)},
		{"newer but expired", true, remote(local.Add(ms), t0, false), 0, true, local.Add(time.Minute)},
		{"tombstone newer by 1 ms", true, remote(local.Add(ms), local.Add(ms), true), 1, false, time.Time{}},
		{"tombstone as new as ours", true, remote(local, local, true), 0, true, local.Add(time.Minute)},
		{"tombstone older by 1 ms", true, remote(local.Add(-ms), local.Add(-ms), true), 0, true, local.Add(time.Minute)},
		{"tombstone of nothing", false, remote(t0, t0, true), 0, false, time.Time{}},
		// Written with a clock a year ahead: held MaxLock from now at most.
		{"a year ahead", false, remote(t0.Add(365*24*time.Hour), t0.Add(365*24*time.Hour+time.Minute), false), 1, true, t0.Add(lockout.MaxLock)},
		{"1 ms past MaxLock", false, remote(t0, t0.Add(lockout.MaxLock+ms), false), 1, true, t0.Add(lockout.MaxLock)},
		{"at MaxLock", false, remote(t0, t0.Add(lockout.MaxLock), false), 1, true, t0.Add(lockout.MaxLock)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tbl, clk := newTable()
			if tt.hasLocal {
				clk.Set(local)
				tbl.LockFor("zeta", "c1", "gpt-4o", time.Minute, "RATE_LIMITED")
				clk.Set(t0)
			}
			if n := tbl.Adopt([]lockout.Remote{tt.remote}); n != tt.taken {
				t.Fatalf("adopted %d, want %d", n, tt.taken)
			}
			e, ok := tbl.Locked("zeta", "c1", "gpt-4o")
			if ok != tt.locked {
				t.Fatalf("locked %v, want %v", ok, tt.locked)
			}
			if ok && !e.ExpiresAt.Equal(tt.expiresAt) {
				t.Fatalf("lock expires at %v, want %v", e.ExpiresAt, tt.expiresAt)
			}
			if ok && tt.taken == 1 && (e.FailureCount != 3 || e.Key != "zeta:c1:exact:gpt-4o") {
				t.Fatalf("adopted entry %+v", e)
			}
		})
	}
}

// TestAdoptedLockExpires: an adopted lock holds until 1 ms before its expiry
// and is gone at it.
func TestAdoptedLockExpires(t *testing.T) {
	tbl, clk := newTable()
	t0 := start()
	tbl.Adopt([]lockout.Remote{{Entry: lockout.Entry{Provider: "p", ConnectionID: "c", Model: "m",
		Scope: lockout.ScopeModel, LockedAt: t0, ExpiresAt: t0.Add(time.Second)}}})
	clk.Set(t0.Add(time.Second - time.Millisecond))
	if _, ok := tbl.Locked("p", "c", "m"); !ok {
		t.Fatal("unlocked 1 ms before expiry")
	}
	clk.Set(t0.Add(time.Second))
	if _, ok := tbl.Locked("p", "c", "m"); ok {
		t.Fatal("still locked at expiry")
	}
}

// TestClearEntriesReturnsWhatWent: the clears and the decay name the entries
// they removed, so they can be told to other instances.
func TestClearEntriesReturnsWhatWent(t *testing.T) {
	tbl, _ := newTable()
	tbl.LockFor("p", "c1", "m1", time.Minute, "x")
	tbl.LockFor("p", "c1", "m2", time.Minute, "x")
	tbl.LockFor("p", "c2", "m1", time.Minute, "x")
	if n, gone := tbl.ClearEntries("p", "c1", "m1"); n != 1 || len(gone) != 1 || gone[0].Model != "m1" || gone[0].ConnectionID != "c1" {
		t.Fatalf("ClearEntries: %d %+v", n, gone)
	}
	if n, gone := tbl.ClearConnectionEntries("c1"); n != 1 || len(gone) != 1 || gone[0].Model != "m2" {
		t.Fatalf("ClearConnectionEntries: %d %+v", n, gone)
	}
	tbl.LockFor("p", "c3", "m1", time.Minute, "x")
	if n, gone := tbl.DecayEntries("p", "c3", "m1"); n != 1 || len(gone) != 1 || gone[0].ConnectionID != "c3" {
		t.Fatalf("DecayEntries: %d %+v", n, gone)
	}
	if n, gone := tbl.ClearAllEntries(); n != 1 || len(gone) != 1 || gone[0].ConnectionID != "c2" {
		t.Fatalf("ClearAllEntries: %d %+v", n, gone)
	}
}
