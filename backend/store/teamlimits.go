package store

import (
	"context"
	"errors"
	"strings"

	"gorm.io/gorm"
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
	return acquireSlot(s.db.WithContext(ctx), connectionID, max, holder, nowMs, ttlMs)
}

func acquireSlot(db *gorm.DB, connectionID string, max int, holder string, nowMs, ttlMs int64) (Slot, bool, error) {
	var got []struct {
		Slot  int   `gorm:"column:slot"`
		Fence int64 `gorm:"column:fence"`
	}
	err := db.Raw(`WITH RECURSIVE n(slot) AS (SELECT 0 UNION ALL SELECT slot + 1 FROM n WHERE slot + 1 < ?),
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

// AcquireSlotPair takes one of a's maxA slots and one of b's maxB slots for
// holder until nowMs+ttlMs, both or neither (a request under a connection's
// maxConcurrent and a model's cap). ok false: full names the limit whose
// slots were all held (the first asked; both may be). On PostgreSQL it is
// one statement (the function omniroute_acquire_slot_pair: each slot taken
// as AcquireSlot takes one, the first given back in the same transaction
// when the second is full, the rows locked in the names' order as
// RenewSlots locks them); on SQLite one transaction. a and b differ.
func (s *Store) AcquireSlotPair(ctx context.Context, a string, maxA int, b string, maxB int, holder string,
	nowMs, ttlMs int64) (sa, sb Slot, ok bool, full string, err error) {
	if s.dialect == Postgres {
		var row struct {
			ASlot  int    `gorm:"column:a_slot"`
			AFence int64  `gorm:"column:a_fence"`
			BSlot  int    `gorm:"column:b_slot"`
			BFence int64  `gorm:"column:b_fence"`
			Full   string `gorm:"column:full_name"`
		}
		err = s.db.WithContext(ctx).Raw(`SELECT a_slot, a_fence, b_slot, b_fence, full_name FROM omniroute_acquire_slot_pair(?, ?, ?, ?, ?, ?, ?, ?)`,
			a, maxA, b, maxB, holder, nowMs, ttlMs, int64(MaxSlotLeaseMs)).Scan(&row).Error
		if err != nil || row.Full != "" {
			return Slot{}, Slot{}, false, row.Full, err
		}
		return Slot{ConnectionID: a, Slot: row.ASlot, Fence: row.AFence}, Slot{ConnectionID: b, Slot: row.BSlot, Fence: row.BFence},
			true, "", nil
	}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var got bool
		if sa, got, err = acquireSlot(tx, a, maxA, holder, nowMs, ttlMs); err != nil || !got {
			full = a
			return err
		}
		if sb, got, err = acquireSlot(tx, b, maxB, holder, nowMs, ttlMs); err != nil || !got {
			full = b
			if err == nil {
				err = errPairRefused
			}
			return err
		}
		return nil
	})
	if errors.Is(err, errPairRefused) {
		return Slot{}, Slot{}, false, full, nil
	}
	if err != nil || full != "" {
		return Slot{}, Slot{}, false, full, err
	}
	return sa, sb, true, "", nil
}

// errPairRefused rolls back AcquireSlotPair's first slot on SQLite.
var errPairRefused = errors.New("store: the second slot of a pair is full")

// RenewSlots extends every unexpired slot of holder to nowMs+ttlMs and
// returns how many it extended (a lapsed slot is not revived: another
// holder may have it). On PostgreSQL the rows are locked in the order of
// their names and slots, as omniroute_acquire_slot_pair locks its two, so
// a renewal and a pair's acquisition never wait for each other in a cycle.
func (s *Store) RenewSlots(ctx context.Context, holder string, nowMs, ttlMs int64) (int64, error) {
	if s.dialect == Postgres {
		res := s.db.WithContext(ctx).Exec(`UPDATE connection_slots c SET expires_at = ?
			FROM (SELECT connection_id, slot FROM connection_slots WHERE holder = ? AND expires_at > ?
				ORDER BY connection_id, slot FOR UPDATE) o
			WHERE c.connection_id = o.connection_id AND c.slot = o.slot`, nowMs+ttlMs, holder, nowMs)
		return res.RowsAffected, res.Error
	}
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

// SlotOwner is the connection a shared limit's name belongs to (the
// connection_id column of connection_slots and connection_pacing): the name
// itself for a connection's maxConcurrent and pacing, else its second
// '|'-separated part ("queue|<id>", "model|<id>|<model>": the gateway's
// TeamQueueKey and TeamModelKey).
func SlotOwner(name string) string {
	kind, rest, ok := strings.Cut(name, "|")
	if !ok {
		return kind
	}
	owner, _, _ := strings.Cut(rest, "|")
	return owner
}

// limitTables hold the shared limits of a team server's connections, by
// name (SlotOwner).
var limitTables = [...]string{"connection_slots", "connection_pacing"}

// deleteLimitsOwned deletes the shared limits' rows whose owner (SlotOwner
// of their name) is gone, and returns how many it deleted. goneNow is asked
// for each table after its names were read (so what it reads is at least as
// recent as they are).
func deleteLimitsOwned(db *gorm.DB, goneNow func() (func(owner string) bool, error)) (int64, error) {
	var deleted int64
	for _, table := range limitTables {
		var names []string
		if err := db.Raw(`SELECT DISTINCT connection_id FROM ` + table).Scan(&names).Error; err != nil {
			return deleted, err
		}
		if len(names) == 0 {
			continue
		}
		gone, err := goneNow()
		if err != nil {
			return deleted, err
		}
		var doomed []string
		for _, n := range names {
			if gone(SlotOwner(n)) {
				doomed = append(doomed, n)
			}
		}
		if len(doomed) == 0 {
			continue
		}
		res := db.Exec(`DELETE FROM `+table+` WHERE connection_id IN ?`, doomed)
		if res.Error != nil {
			return deleted, res.Error
		}
		deleted += res.RowsAffected
	}
	return deleted, nil
}

// DeleteOrphanLimits deletes the shared limits' rows (slots, queue tickets,
// model caps, pacing turns) of connections that no longer exist, and returns
// how many it deleted: the periodic sweep of a team server
// (teamlimits.Limits.Sweep), for rows a deletion left behind (an instance's
// late acquisition on a connection another instance deleted, or rows from
// before DeleteConnection removed them). A table's names are read before
// the connections, so a connection created meanwhile is never taken for
// gone. Idempotent: every instance may run it.
func (s *Store) DeleteOrphanLimits(ctx context.Context) (int64, error) {
	db := s.db.WithContext(ctx)
	return deleteLimitsOwned(db, func() (func(string) bool, error) {
		var ids []string
		if err := db.Model(&Connection{}).Pluck("id", &ids).Error; err != nil {
			return nil, err
		}
		live := make(map[string]bool, len(ids))
		for _, id := range ids {
			live[id] = true
		}
		return func(owner string) bool { return !live[owner] }, nil
	})
}

// LimitRows counts the shared limits' rows (slots and pacing) a connection
// owns, live or not (tests).
func (s *Store) LimitRows(connectionID string) (int64, error) {
	var total int64
	for _, table := range limitTables {
		var names []string
		if err := s.db.Raw(`SELECT connection_id FROM ` + table).Scan(&names).Error; err != nil {
			return total, err
		}
		for _, n := range names {
			if SlotOwner(n) == connectionID {
				total++
			}
		}
	}
	return total, nil
}
