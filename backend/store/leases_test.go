package store

import (
	"errors"
	"testing"
)

func lease(id, owner, conn string, gen, expiresAt int64) *Lease {
	return &Lease{ID: id, OwnerHash: owner, APIKeyID: "k1", ConnectionID: conn, Generation: gen, State: LeaseActive,
		Model: "openai/gpt-4o", AcquiredAt: 1000, RenewedAt: 1000, ExpiresAt: expiresAt}
}

func mustInsert(t *testing.T, s *Store, l *Lease) {
	t.Helper()
	if err := s.InsertLease(l); err != nil {
		t.Fatalf("insert %s: %v", l.ID, err)
	}
}

func TestInsertLeasePartialUniqueIndexes(t *testing.T) {
	tests := []struct {
		name    string
		setup   []*Lease
		release string // id released before the insert
		insert  *Lease
		want    error
	}{
		{"free connection", nil, "", lease("b", "o2", "c2", 1, 5000), nil},
		{"connection held", []*Lease{lease("a", "o1", "c1", 1, 5000)}, "", lease("b", "o2", "c1", 1, 5000), ErrConflict},
		{"owner holds another", []*Lease{lease("a", "o1", "c1", 1, 5000)}, "", lease("b", "o1", "c2", 2, 5000), ErrConflict},
		{"connection released", []*Lease{lease("a", "o1", "c1", 1, 5000)}, "a", lease("b", "o2", "c1", 1, 5000), nil},
		{"owner released", []*Lease{lease("a", "o1", "c1", 1, 5000)}, "a", lease("b", "o1", "c2", 2, 5000), nil},
		{"other connection and owner", []*Lease{lease("a", "o1", "c1", 1, 5000)}, "", lease("b", "o2", "c2", 1, 5000), nil},
	}
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s := open(t)
				for _, l := range tt.setup {
					mustInsert(t, s, l)
				}
				if tt.release != "" {
					if err := s.ReleaseLease(tt.release, 1, 2000, "OWNER_EXIT"); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.InsertLease(tt.insert); !errors.Is(err, tt.want) {
					t.Fatalf("InsertLease err = %v, want %v", err, tt.want)
				}
			})
		}
	})
}

func TestLeaseLookups(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		mustInsert(t, s, lease("a", "o1", "c1", 1, 5000))
		if err := s.ReleaseLease("a", 1, 2000, "OWNER_EXIT"); err != nil {
			t.Fatal(err)
		}
		mustInsert(t, s, lease("b", "o1", "c1", 2, 6000))
		mustInsert(t, s, lease("c", "o2", "c2", 1, 7000))

		got, err := s.LeaseByOwner("o1")
		if err != nil || got.ID != "b" {
			t.Fatalf("LeaseByOwner(o1) = %+v, %v; want b", got, err)
		}
		if _, err := s.LeaseByOwner("o3"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("LeaseByOwner(o3) err = %v", err)
		}
		old, err := s.LeaseByOwnerGeneration("o1", 1)
		if err != nil || old.ID != "a" || old.State != LeaseReleased || old.ReleaseReason != "OWNER_EXIT" || old.ReleasedAt != 2000 {
			t.Fatalf("LeaseByOwnerGeneration = %+v, %v", old, err)
		}
		if g, err := s.MaxLeaseGeneration("o1"); err != nil || g != 2 {
			t.Fatalf("MaxLeaseGeneration(o1) = %d, %v; want 2", g, err)
		}
		if g, err := s.MaxLeaseGeneration("nobody"); err != nil || g != 0 {
			t.Fatalf("MaxLeaseGeneration(nobody) = %d, %v; want 0", g, err)
		}
		if l, err := s.LeaseByID("c"); err != nil || l.OwnerHash != "o2" {
			t.Fatalf("LeaseByID = %+v, %v", l, err)
		}
		if _, err := s.LeaseByID("zz"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("LeaseByID(zz) err = %v", err)
		}
		active, err := s.ActiveLeases()
		if err != nil || len(active) != 2 {
			t.Fatalf("ActiveLeases = %d rows, %v; want 2", len(active), err)
		}
	})
}

func TestExpireLeasesBoundary(t *testing.T) {
	tests := []struct {
		name    string
		now     int64
		changed int64
		state   string
	}{
		{"one ms before", 4999, 0, LeaseActive},
		{"exactly at expiry", 5000, 1, LeaseExpired},
		{"after expiry", 5001, 1, LeaseExpired},
	}
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s := open(t)
				mustInsert(t, s, lease("a", "o1", "c1", 1, 5000))
				n, err := s.ExpireLeases(tt.now)
				if err != nil || n != tt.changed {
					t.Fatalf("ExpireLeases = %d, %v; want %d", n, err, tt.changed)
				}
				l, _ := s.LeaseByID("a")
				if l.State != tt.state {
					t.Fatalf("state = %s, want %s", l.State, tt.state)
				}
				if tt.state == LeaseExpired && (l.ReleaseReason != LeaseExpiredReason || l.ReleasedAt != 5000) {
					t.Fatalf("expired row = %+v", l)
				}
				if tt.state == LeaseExpired {
					// The expired lease no longer blocks its owner or its connection.
					mustInsert(t, s, lease("b", "o1", "c1", 2, 9000))
				}
			})
		}
	})
}

func TestLeaseGuardedUpdates(t *testing.T) {
	tests := []struct {
		name string
		op   func(s *Store) error
		want error
	}{
		{"renew ok", func(s *Store) error { return s.RenewLease("a", 1, 2000, 8000) }, nil},
		{"renew wrong generation", func(s *Store) error { return s.RenewLease("a", 2, 2000, 8000) }, ErrNotFound},
		{"renew unknown id", func(s *Store) error { return s.RenewLease("zz", 1, 2000, 8000) }, ErrNotFound},
		{"renew lapsed", func(s *Store) error { return s.RenewLease("a", 1, 5000, 9000) }, ErrNotFound},
		{"release ok", func(s *Store) error { return s.ReleaseLease("a", 1, 2000, "OWNER_EXIT") }, nil},
		{"release wrong generation", func(s *Store) error { return s.ReleaseLease("a", 7, 2000, "OWNER_EXIT") }, ErrNotFound},
		{"release twice", func(s *Store) error {
			if err := s.ReleaseLease("a", 1, 2000, "OWNER_EXIT"); err != nil {
				return err
			}
			return s.ReleaseLease("a", 1, 2001, "OWNER_EXIT")
		}, ErrNotFound},
		{"release lapsed", func(s *Store) error { return s.ReleaseLease("a", 1, 5000, "OWNER_EXIT") }, ErrNotFound},
		{"move to free", func(s *Store) error { return s.MoveLease("a", 1, "c1", "c3", 2000) }, nil},
		{"move to held", func(s *Store) error { return s.MoveLease("a", 1, "c1", "c2", 2000) }, ErrConflict},
		{"move wrong generation", func(s *Store) error { return s.MoveLease("a", 2, "c1", "c3", 2000) }, ErrNotFound},
		{"move from stale connection", func(s *Store) error { return s.MoveLease("a", 1, "c9", "c3", 2000) }, ErrNotFound},
		{"move lapsed", func(s *Store) error { return s.MoveLease("a", 1, "c1", "c3", 5000) }, ErrNotFound},
		{"move onto a lapsed holder", func(s *Store) error {
			if err := s.InsertLease(lease("x", "o9", "c4", 1, 1500)); err != nil {
				return err
			}
			return s.MoveLease("a", 1, "c1", "c4", 2000)
		}, nil},
	}
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s := open(t)
				mustInsert(t, s, lease("a", "o1", "c1", 1, 5000))
				mustInsert(t, s, lease("b", "o2", "c2", 1, 5000))
				if err := tt.op(s); !errors.Is(err, tt.want) {
					t.Fatalf("err = %v, want %v", err, tt.want)
				}
				var dupConn, dupOwner int
				if err := s.DB().Raw(`SELECT COUNT(*) FROM (SELECT connection_id FROM exclusive_connection_leases WHERE state='ACTIVE'
					GROUP BY connection_id HAVING COUNT(*) > 1) AS d`).Scan(&dupConn).Error; err != nil {
					t.Fatal(err)
				}
				if err := s.DB().Raw(`SELECT COUNT(*) FROM (SELECT owner_hash FROM exclusive_connection_leases WHERE state='ACTIVE'
					GROUP BY owner_hash HAVING COUNT(*) > 1) AS d`).Scan(&dupOwner).Error; err != nil {
					t.Fatal(err)
				}
				if dupConn != 0 || dupOwner != 0 {
					t.Fatalf("duplicate active leases: connections %d, owners %d", dupConn, dupOwner)
				}
			})
		}
	})
}

func TestMoveLeaseKeepsGenerationAndRollsBackOnConflict(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		mustInsert(t, s, lease("a", "o1", "c1", 3, 5000))
		mustInsert(t, s, lease("b", "o2", "c2", 1, 5000))
		if err := s.MoveLease("a", 3, "c1", "c3", 2000); err != nil {
			t.Fatal(err)
		}
		l, _ := s.LeaseByID("a")
		if l.ConnectionID != "c3" || l.Generation != 3 || l.State != LeaseActive {
			t.Fatalf("moved lease = %+v", l)
		}
		if err := s.MoveLease("a", 3, "c3", "c2", 2000); !errors.Is(err, ErrConflict) {
			t.Fatalf("move onto held err = %v", err)
		}
		l, _ = s.LeaseByID("a")
		if l.ConnectionID != "c3" {
			t.Fatalf("a failed move changed the lease: %+v", l)
		}
		// The freed connection is free for others.
		mustInsert(t, s, lease("c", "o3", "c1", 1, 5000))
	})
}

// TestClampLeases: an ACTIVE lease expiring past the bound is brought to it
// (1 ms past included); one at the bound, earlier, or no longer active is not.
func TestClampLeases(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		const bound = 10_000
		mustInsert(t, s, lease("far", "o1", "c1", 1, bound+365*24*3600*1000))
		mustInsert(t, s, lease("past1", "o2", "c2", 1, bound+1))
		mustInsert(t, s, lease("at", "o3", "c3", 1, bound))
		mustInsert(t, s, lease("released", "o4", "c4", 1, bound+5000))
		if err := s.ReleaseLease("released", 1, 2000, "OWNER_EXIT"); err != nil {
			t.Fatal(err)
		}
		n, err := s.ClampLeases(bound)
		if err != nil || n != 2 {
			t.Fatalf("ClampLeases = %d, %v; want 2", n, err)
		}
		want := map[string]int64{"far": bound, "past1": bound, "at": bound, "released": bound + 5000}
		for id, exp := range want {
			var l Lease
			if err := s.DB().Where("id = ?", id).Take(&l).Error; err != nil {
				t.Fatal(err)
			}
			if l.ExpiresAt != exp {
				t.Errorf("%s expires at %d, want %d", id, l.ExpiresAt, exp)
			}
		}
	})
}
