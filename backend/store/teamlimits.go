package store

import (
	"context"
	"strings"
)

// MaxSlotLeaseMs is the longest slot lease (team.slotLeaseMs' upper bound).
const MaxSlotLeaseMs = 120_000

// Slot is one held connection slot: which of the connection's numbered
// slots, and the fence the acquisition set (a release or renewal naming an
// older fence changes nothing).
type Slot struct {
	ConnectionID string
	Slot         int
	Fence        int64
}

// AcquireSlot takes one of the connection's max slots for holder until
// nowMs+ttlMs, if one is free at nowMs (never taken, released, or lapsed),
// bumping its fence. ok is false when all max are held. One statement: the
// free slot is chosen and taken together, and the row's conditional update
// settles two holders choosing the same slot (the loser takes nothing and
// the caller tries again). A slot whose expiry lies further than
// MaxSlotLeaseMs ahead (written by an instance whose clock was ahead) counts
// as lapsed, so a wrong clock cannot hold a slot for longer than that.
func (s *Store) AcquireSlot(ctx context.Context, connectionID string, max int, holder string, nowMs, ttlMs int64) (Slot, bool, error) {
	var got []struct {
		Slot  int   `gorm:"column:slot"`
		Fence int64 `gorm:"column:fence"`
	}
	err := s.db.WithContext(ctx).Raw(`WITH RECURSIVE n(slot) AS (SELECT 0 UNION ALL SELECT slot + 1 FROM n WHERE slot + 1 < ?),
		free AS (SELECT n.slot FROM n WHERE NOT EXISTS (
			SELECT 1 FROM connection_slots c WHERE c.connection_id = ? AND c.slot = n.slot AND c.expires_at > ? AND c.expires_at <= ?)
			ORDER BY n.slot LIMIT 1)
		INSERT INTO connection_slots (connection_id, slot, holder, fence, expires_at)
		SELECT ?, free.slot, ?, 1, ? FROM free WHERE true
		ON CONFLICT (connection_id, slot) DO UPDATE SET holder = excluded.holder,
			fence = connection_slots.fence + 1, expires_at = excluded.expires_at
		WHERE connection_slots.expires_at <= ? OR connection_slots.expires_at > ?
		RETURNING slot, fence`,
		max, connectionID, nowMs, nowMs+MaxSlotLeaseMs, connectionID, holder, nowMs+ttlMs, nowMs, nowMs+MaxSlotLeaseMs).Scan(&got).Error
	if err != nil || len(got) == 0 {
		return Slot{}, false, err
	}
	return Slot{ConnectionID: connectionID, Slot: got[0].Slot, Fence: got[0].Fence}, true, nil
}

// ReleaseSlot frees a held slot (its expiry set to 0), if holder still holds
// it under this fence. A slot that lapsed and was taken by another holder is
// left alone.
func (s *Store) ReleaseSlot(ctx context.Context, sl Slot, holder string) error {
	return s.db.WithContext(ctx).Exec(`UPDATE connection_slots SET expires_at = 0
		WHERE connection_id = ? AND slot = ? AND fence = ? AND holder = ?`,
		sl.ConnectionID, sl.Slot, sl.Fence, holder).Error
}

// RenewSlots extends every unexpired slot of holder to nowMs+ttlMs and
// returns how many it extended (a lapsed slot is not revived: another
// holder may have it).
func (s *Store) RenewSlots(ctx context.Context, holder string, nowMs, ttlMs int64) (int64, error) {
	res := s.db.WithContext(ctx).Exec(`UPDATE connection_slots SET expires_at = ? WHERE holder = ? AND expires_at > ?`,
		nowMs+ttlMs, holder, nowMs)
	return res.RowsAffected, res.Error
}

// HeldSlots counts the connection's slots held at nowMs (tests, status).
func (s *Store) HeldSlots(connectionID string, nowMs int64) (int, error) {
	var n int
	err := s.db.Raw(`SELECT COUNT(*) FROM connection_slots WHERE connection_id = ? AND expires_at > ?`, connectionID, nowMs).
		Scan(&n).Error
	return n, err
}

// ReservePace takes the connection's next dispatch turn for pacing of one
// request per intervalMs: the turn is the later of nowMs and the stored next
// turn, and the stored next turn moves one interval past it. A turn after
// deadlineMs is not taken: ok is false and turnMs says when it would come.
func (s *Store) ReservePace(ctx context.Context, connectionID string, intervalMs, nowMs, deadlineMs int64) (turnMs int64, ok bool, err error) {
	greatest := "GREATEST"
	if s.dialect != Postgres {
		greatest = "MAX"
	}
	var next []int64
	q := strings.ReplaceAll(`INSERT INTO connection_pacing (connection_id, next_at) VALUES (?, ?)
		ON CONFLICT (connection_id) DO UPDATE SET next_at = GREATEST(connection_pacing.next_at, ?) + ?
		WHERE GREATEST(connection_pacing.next_at, ?) <= ?
		RETURNING next_at`, "GREATEST", greatest)
	if err := s.db.WithContext(ctx).Raw(q, connectionID, nowMs+intervalMs, nowMs, intervalMs, nowMs, deadlineMs).
		Scan(&next).Error; err != nil {
		return 0, false, err
	}
	if len(next) == 1 {
		return next[0] - intervalMs, true, nil
	}
	var stored []int64
	if err := s.db.WithContext(ctx).Raw(`SELECT next_at FROM connection_pacing WHERE connection_id = ?`, connectionID).
		Scan(&stored).Error; err != nil {
		return 0, false, err
	}
	if len(stored) == 0 {
		return nowMs, false, nil
	}
	return max(stored[0], nowMs), false, nil
}

// CancelPace hands back a turn ReservePace gave (turnMs) when it is still the
// last one taken, so a caller that went away does not cost the next one a
// whole interval.
func (s *Store) CancelPace(ctx context.Context, connectionID string, turnMs, intervalMs int64) error {
	return s.db.WithContext(ctx).Exec(`UPDATE connection_pacing SET next_at = ? WHERE connection_id = ? AND next_at = ?`,
		turnMs, connectionID, turnMs+intervalMs).Error
}
