package store

import (
	"errors"

	"gorm.io/gorm"
)

// Lease states as stored in exclusive_connection_leases.state. Only ACTIVE rows
// take part in the partial unique indexes (one per owner, one per connection).
const (
	LeaseActive   = "ACTIVE"
	LeaseReleased = "RELEASED"
	LeaseExpired  = "EXPIRED"
)

// LeaseExpiredReason is the release_reason written when a lease runs out.
const LeaseExpiredReason = "TTL_EXPIRED"

// Lease is one row of exclusive_connection_leases: an exclusive session lease
// on a connection. OwnerHash is the hex SHA-256 of the owner token (the token
// itself is never stored). Times are unix milliseconds.
type Lease struct {
	ID            string `gorm:"column:id;primaryKey"`
	OwnerHash     string `gorm:"column:owner_hash"`
	APIKeyID      string `gorm:"column:api_key_id"`
	ConnectionID  string `gorm:"column:connection_id"`
	Generation    int64  `gorm:"column:generation"`
	State         string `gorm:"column:state"`
	Model         string `gorm:"column:model"`
	AcquiredAt    int64  `gorm:"column:acquired_at"`
	RenewedAt     int64  `gorm:"column:renewed_at"`
	ExpiresAt     int64  `gorm:"column:expires_at"`
	ReleasedAt    int64  `gorm:"column:released_at"`
	ReleaseReason string `gorm:"column:release_reason"`
}

// TableName names the table.
func (Lease) TableName() string { return "exclusive_connection_leases" }

// ExpireLeases marks every ACTIVE lease whose expires_at is at or before nowMs
// as EXPIRED (released_at = expires_at, reason TTL_EXPIRED) and returns how many
// rows changed. It is the lazy expiry: callers run it before deciding.
func (s *Store) ExpireLeases(nowMs int64) (int64, error) {
	res := s.db.Exec(`UPDATE exclusive_connection_leases
		SET state = ?, released_at = expires_at, release_reason = ?
		WHERE state = ? AND expires_at <= ?`, LeaseExpired, LeaseExpiredReason, LeaseActive, nowMs)
	return res.RowsAffected, res.Error
}

// ClampLeases bounds every ACTIVE lease's expires_at to maxMs (now + the
// longest lease TTL) and returns how many rows changed: a lease written while
// the clock was ahead would otherwise hold its connection until then.
func (s *Store) ClampLeases(maxMs int64) (int64, error) {
	res := s.db.Exec(`UPDATE exclusive_connection_leases SET expires_at = ? WHERE state = ? AND expires_at > ?`,
		maxMs, LeaseActive, maxMs)
	return res.RowsAffected, res.Error
}

// InsertLease inserts a lease. When the partial unique indexes reject it (the
// owner or the connection already has an ACTIVE lease) it returns ErrConflict.
func (s *Store) InsertLease(l *Lease) error {
	if l.State == "" {
		l.State = LeaseActive
	}
	err := s.db.Create(l).Error
	if isUniqueViolation(err) {
		return ErrConflict
	}
	return err
}

// ActiveLeases returns every ACTIVE lease (expired ones included until
// ExpireLeases runs), oldest first.
func (s *Store) ActiveLeases() ([]Lease, error) {
	var out []Lease
	err := s.db.Where("state = ?", LeaseActive).Order("acquired_at ASC, id ASC").Find(&out).Error
	return out, err
}

// LeaseByOwner returns the owner's ACTIVE lease, or ErrNotFound.
func (s *Store) LeaseByOwner(ownerHash string) (Lease, error) {
	return s.takeLease(s.db.Where("owner_hash = ? AND state = ?", ownerHash, LeaseActive))
}

// LeaseByID returns one lease in any state, or ErrNotFound.
func (s *Store) LeaseByID(id string) (Lease, error) {
	return s.takeLease(s.db.Where("id = ?", id))
}

// LeaseByOwnerGeneration returns the owner's most recent lease of that
// generation in any state, or ErrNotFound.
func (s *Store) LeaseByOwnerGeneration(ownerHash string, generation int64) (Lease, error) {
	return s.takeLease(s.db.Where("owner_hash = ? AND generation = ?", ownerHash, generation).
		Order("acquired_at DESC, id DESC"))
}

func (s *Store) takeLease(q *gorm.DB) (Lease, error) {
	var l Lease
	err := q.Take(&l).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return l, ErrNotFound
	}
	return l, err
}

// MaxLeaseGeneration returns the highest generation the owner ever held (0 for
// a new owner), so a new lease can take the next one.
func (s *Store) MaxLeaseGeneration(ownerHash string) (int64, error) {
	var g int64
	err := s.db.Raw(`SELECT COALESCE(MAX(generation), 0) FROM exclusive_connection_leases WHERE owner_hash = ?`, ownerHash).
		Scan(&g).Error
	return g, err
}

// guarded maps an UPDATE result: 0 rows means the guard did not match.
func guarded(res *gorm.DB) error {
	if isUniqueViolation(res.Error) {
		return ErrConflict
	}
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// RenewLease sets renewed_at = nowMs and expires_at on the lease with this id
// and generation, if it is ACTIVE and not yet expired at nowMs; otherwise it
// returns ErrNotFound.
func (s *Store) RenewLease(id string, generation, nowMs, expiresAtMs int64) error {
	return guarded(s.db.Exec(`UPDATE exclusive_connection_leases SET renewed_at = ?, expires_at = ?
		WHERE id = ? AND generation = ? AND state = ? AND expires_at > ?`,
		nowMs, expiresAtMs, id, generation, LeaseActive, nowMs))
}

// ReleaseLease marks the lease with this id and generation RELEASED at nowMs
// with reason, if it is ACTIVE and not yet expired at nowMs; otherwise it
// returns ErrNotFound.
func (s *Store) ReleaseLease(id string, generation, nowMs int64, reason string) error {
	return guarded(s.db.Exec(`UPDATE exclusive_connection_leases SET state = ?, released_at = ?, release_reason = ?
		WHERE id = ? AND generation = ? AND state = ? AND expires_at > ?`,
		LeaseReleased, nowMs, reason, id, generation, LeaseActive, nowMs))
}

// MoveLease moves the ACTIVE, unexpired lease with this id and generation from
// one connection to another, keeping its generation (the session is the same;
// the connection fence catches dispatches to the old connection). In one
// transaction it first expires a lapsed lease still marked ACTIVE on the
// target, then updates guarded by id, generation and the current connection.
// It returns ErrNotFound when the guard does not match and ErrConflict when
// another owner holds the target (the unique index decides).
func (s *Store) MoveLease(id string, generation int64, fromConnection, toConnection string, nowMs int64) error {
	return s.transaction(s.db, func(tx *gorm.DB) error {
		if err := tx.Exec(`UPDATE exclusive_connection_leases
			SET state = ?, released_at = expires_at, release_reason = ?
			WHERE connection_id = ? AND state = ? AND expires_at <= ?`,
			LeaseExpired, LeaseExpiredReason, toConnection, LeaseActive, nowMs).Error; err != nil {
			return err
		}
		return guarded(tx.Exec(`UPDATE exclusive_connection_leases SET connection_id = ?
			WHERE id = ? AND generation = ? AND connection_id = ? AND state = ? AND expires_at > ?`,
			toConnection, id, generation, fromConnection, LeaseActive, nowMs))
	})
}
