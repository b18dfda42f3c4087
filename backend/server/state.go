package server

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"omniroute/backend/api"
	"omniroute/backend/clock"
	"omniroute/backend/config"
	"omniroute/backend/datadir"
	"omniroute/backend/oauth"
	provregistry "omniroute/backend/providers/registry"
	"omniroute/backend/resilience/affinity"
	"omniroute/backend/resilience/breaker"
	"omniroute/backend/routing"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
)

// TokenFile is the management token's file name in the data directory.
const TokenFile = "management.token"

// LoadOrCreateToken returns the management token, creating it (0600) at first start.
func LoadOrCreateToken(dir string) (string, error) {
	path := filepath.Join(dir, TokenFile)
	b, err := os.ReadFile(path)
	if err == nil {
		if t := strings.TrimSpace(string(b)); t != "" {
			return t, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	t := "omt_" + secrets.RandomToken(32)
	if err := os.WriteFile(path, []byte(t+"\n"), 0o600); err != nil {
		return "", err
	}
	return t, nil
}

func ensureDefaultKey(st *store.Store, box *secrets.Box, clk clock.Clock) error {
	rows, err := st.APIKeys()
	if err != nil {
		return err
	}
	for _, r := range rows {
		if r.IsDefault {
			return nil
		}
	}
	_, _, err = api.NewClientKey(st, box, "Default key", true, clk.Now().UnixMilli())
	if errors.Is(err, store.ErrConflict) {
		return nil // another instance sharing the database made it first
	}
	return err
}

// OpenStore opens the process's database without starting a gateway: the
// PostgreSQL database of OMNIROUTE_DATABASE_URL when set, else the data
// directory's SQLite file.
func OpenStore(proc config.Process) (*store.Store, error) {
	if proc.DatabaseURL != "" {
		return store.OpenPostgres(proc.DatabaseURL)
	}
	st, err := store.OpenWith(filepath.Join(proc.DataDir, datadir.DBFile),
		store.OpenOptions{RequireSchema: datadir.ExpectsSchemaAt(proc.DataDir)})
	if errors.Is(err, store.ErrNoSchema) {
		return nil, datadir.NoSchemaError(proc.DataDir)
	}
	return st, err
}

// DefaultKeyFromDataDir reads the default client key without starting a gateway
// (for `omniroute setup` and `omniroute run`).
func DefaultKeyFromDataDir(proc config.Process) (string, error) {
	dir := proc.DataDir
	st, err := OpenStore(proc)
	if err != nil {
		return "", err
	}
	defer st.Close()
	key, _, err := secrets.LoadKeyFrom(os.Getenv, filepath.Join(dir, "secret.key"))
	if err != nil {
		return "", err
	}
	box, err := secrets.New(key)
	if err != nil {
		return "", err
	}
	rows, err := st.APIKeys()
	if err != nil {
		return "", err
	}
	for _, r := range rows {
		if r.IsDefault {
			return box.Open(r.KeyEnc)
		}
	}
	return "", errors.New("no default key")
}

// DefaultKey returns the default client key's value.
func (s *Server) DefaultKey() (string, error) {
	key, _, err := secrets.LoadKeyFrom(s.opts.Getenv, filepath.Join(s.opts.Process.DataDir, "secret.key"))
	if err != nil {
		return "", err
	}
	box, err := secrets.New(key)
	if err != nil {
		return "", err
	}
	rows, err := s.store.APIKeys()
	if err != nil {
		return "", err
	}
	for _, r := range rows {
		if r.IsDefault {
			return box.Open(r.KeyEnc)
		}
	}
	return "", errors.New("no default key")
}

func msOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func timeOrZero(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

func breakerRow(s breaker.Snapshot) store.BreakerRow {
	return store.BreakerRow{Provider: s.Provider, State: string(s.State), Failures: s.Failures,
		ConsecutiveSuccesses: s.ConsecutiveSuccesses, OpenCycles: s.OpenCycles,
		LastFailureAt: msOrZero(s.LastFailureAt), OpenedAt: msOrZero(s.OpenedAt), StateChangedAt: msOrZero(s.StateChangedAt)}
}

func snapshots(rows []store.BreakerRow) []breaker.Snapshot {
	out := make([]breaker.Snapshot, 0, len(rows))
	for _, r := range rows {
		out = append(out, breaker.Snapshot{Provider: r.Provider, State: breaker.State(r.State), Failures: r.Failures,
			ConsecutiveSuccesses: r.ConsecutiveSuccesses, OpenCycles: r.OpenCycles, LastFailureAt: timeOrZero(r.LastFailureAt),
			OpenedAt: timeOrZero(r.OpenedAt), StateChangedAt: timeOrZero(r.StateChangedAt)})
	}
	return out
}

// pinSaver writes session pins through to the store, stamped with the
// injected clock's time.
type pinSaver struct {
	st  stateWriter
	clk clock.Clock
}

func (p pinSaver) SavePin(pin affinity.Pin) error {
	return p.st.SavePin(store.AffinityPin{SessionKey: pin.SessionKey, ConnectionID: pin.ConnectionID, Provider: pin.Provider,
		ExpiresAt: pin.ExpiresAt.UnixMilli(), UpdatedAt: p.clk.Now().UnixMilli(), Prev: pin.Prev})
}

// pinClaimWait bounds how long a session's first attempt waits for the
// database's pin decision: the time after which the database counts as not
// answering (the store's connect_timeout, 5 s), not a latency budget. While
// the database answers, however slowly, its decision must be waited for: a
// claim given up early keeps this instance's own choice while another
// instance's claim of the same session wins in the database, and the
// session splits. (At 500 ms a burst of first turns on a loaded 2-core
// machine, each opening a new pool connection, gave up — and marked the
// database down for dbRetryEvery, so the next claims were skipped too —
// splitting 15 of 20 sessions.) Past it the local choice stands.
const pinClaimWait = 5 * time.Second

// pinClaimer is a team server's pin decision: the database's conditional
// upsert (store.ClaimPin; store.ClaimSpreadPin for a new session that may
// take any of a provider's accounts), skipped while the database is known unreachable
// (db), so a new session never waits on a database that does not answer.
type pinClaimer struct {
	st  *store.Store
	clk clock.Clock
	db  *dbHealth
}

func (c pinClaimer) ClaimPin(p affinity.Pin) (affinity.Pin, error) {
	if !c.db.usable() {
		return affinity.Pin{}, errDatabaseDown
	}
	ctx, cancel := context.WithTimeout(context.Background(), pinClaimWait)
	defer cancel()
	now := c.clk.Now().UnixMilli()
	pin := store.AffinityPin{SessionKey: p.SessionKey, ConnectionID: p.ConnectionID, Provider: p.Provider,
		ExpiresAt: p.ExpiresAt.UnixMilli(), UpdatedAt: now}
	var row store.AffinityPin
	var err error
	if len(p.Among) > 1 { // a new session over its spread: the team's least occupied account
		among := make([]store.PinChoice, len(p.Among))
		for i, a := range p.Among {
			among[i] = store.PinChoice{ConnectionID: a.ConnectionID, Provider: a.Provider}
		}
		row, err = c.st.ClaimSpreadPin(ctx, pin, p.Pool, among, now)
	} else {
		row, err = c.st.ClaimPin(ctx, pin, p.Prev, now)
	}
	c.db.note(err)
	if err != nil {
		return affinity.Pin{}, err
	}
	return affinity.Pin{SessionKey: row.SessionKey, ConnectionID: row.ConnectionID, Provider: row.Provider,
		ExpiresAt: time.UnixMilli(row.ExpiresAt)}, nil
}

// pinsFromRows reads stored pins, each expiring no later than bound (now +
// the session affinity TTL): a pin written while the clock was ahead would
// otherwise hold its session on one connection until then.
func pinsFromRows(rows []store.AffinityPin, bound time.Time) []affinity.Pin {
	out := make([]affinity.Pin, 0, len(rows))
	for _, r := range rows {
		exp := time.UnixMilli(r.ExpiresAt)
		if exp.After(bound) {
			exp = bound
		}
		out = append(out, affinity.Pin{SessionKey: r.SessionKey, ConnectionID: r.ConnectionID, Provider: r.Provider,
			ExpiresAt: exp})
	}
	return out
}

// ImportOffline imports a CLI login straight into the data directory's
// database, for `omniroute import` when no gateway is running (a running
// gateway is asked through its API instead, so its memory follows).
func ImportOffline(proc config.Process, getenv func(string) string, source, path string, now time.Time) (oauth.Imported, error) {
	dir := proc.DataDir
	cat := provregistry.Catalog(getenv)
	login, err := oauth.ReadLogin(cat, source, path)
	if err != nil {
		return oauth.Imported{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return oauth.Imported{}, err
	}
	st, err := OpenStore(proc)
	if err != nil {
		return oauth.Imported{}, err
	}
	defer st.Close()
	key, _, err := secrets.LoadKeyFrom(getenv, filepath.Join(dir, "secret.key"))
	if err != nil {
		return oauth.Imported{}, err
	}
	box, err := secrets.New(key)
	if err != nil {
		return oauth.Imported{}, err
	}
	return oauth.Upsert(st, box, cat, login, now)
}

// adoptBreakers takes from rows every breaker transition newer than the one
// this instance knows (another instance sharing the database opened, closed
// or reset it) and returns how many it took. An equal transition time is this
// instance's own write coming back, or the same transition: kept as is, so an
// admitted probe stays valid. Failure counts between transitions stay per
// instance; nothing is written back.
func adoptBreakers(reg *breaker.Registry, rows []store.BreakerRow) int {
	n := 0
	for _, snap := range snapshots(rows) {
		if snap.Provider == "" {
			continue
		}
		b := reg.Get(snap.Provider)
		if msOrZero(snap.StateChangedAt) > msOrZero(b.Status().StateChangedAt) {
			b.Restore(snap)
			n++
		}
	}
	return n
}

// breakerDecider is where a team server's breaker changes go: the shared
// database, deciding on the provider's stored row (behindStore).
type breakerDecider interface {
	DecideBreaker(provider string, step func(store.BreakerRow) store.BreakerRow)
}

// shareBreakerChange hands one change of this instance's breaker to the
// shared database (a team server), so the thresholds count the outcomes of
// every instance: a counted outcome (failure, success, connection test) is
// folded into the provider's row as stored (breaker.Fold with profile p,
// under the row's lock) — when the team's count reaches the threshold the
// row opens, and every instance adopts that OPEN (a newer transition). When
// the outcome moved this instance's breaker and the row did not move with it
// (its own count opened it while another instance's success had cleared the
// team's; a probe's success while the row was re-opened), the local
// transition, newer than the row's, is taken. A reset is
// written as is; lazy recovery (OPEN → HALF_OPEN, DEGRADED decaying) is not
// written: every holder of the row derives it alike.
func shareBreakerChange(d breakerDecider, snap breaker.Snapshot, p breaker.Profile) {
	switch snap.Cause {
	case breaker.CauseRecovery:
		return
	case breaker.CauseReset:
		row := breakerRow(snap)
		d.DecideBreaker(snap.Provider, func(store.BreakerRow) store.BreakerRow { return row })
		return
	}
	local := breakerRow(snap)
	movedHere := local.StateChangedAt == snap.At.UnixMilli() // this outcome moved the local breaker
	d.DecideBreaker(snap.Provider, func(stored store.BreakerRow) store.BreakerRow {
		cur := snapshots([]store.BreakerRow{stored})[0]
		if snap.Cause == breaker.CauseFailure {
			cur.LastFailureKind = snap.LastFailureKind // the folded failure's kind picks its hold
		}
		next := breakerRow(breaker.Fold(cur, p, snap.Cause, snap.At))
		if movedHere && local.StateChangedAt > stored.StateChangedAt && next.StateChangedAt < local.StateChangedAt {
			return local // the local transition is newer evidence than the row's
		}
		return next
	})
}

// modelLockKeep is how long a model lock row stays in the database after its
// expiry — a tombstone after its clear — before a reader prunes it: long
// enough for every instance to read it at a periodic reconcile, short enough
// to keep the table bounded by recent locks.
const modelLockKeep = 4 * reconcileEvery

// modelLockFollower reads the shared model locks (pruning the old rows) and
// adopts those newer than this instance's own, tombstones included.
func modelLockFollower(st *store.Store, engine *routing.Engine, clk clock.Clock) func() error {
	return func() error {
		rows, err := st.ModelLocks(clk.Now().UnixMilli(), modelLockKeep.Milliseconds())
		if err != nil {
			return err
		}
		engine.AdoptModelLocks(rows)
		return nil
	}
}

// pinOverlap is how far back each pin read reaches before the last one: pins
// are written behind the request and stamped by their writer's clock, so a
// row may land with a time a little before the previous read.
const pinOverlap = reconcileEvery + 10*time.Second

// pinFollower reads the pins written since the last read (with pinOverlap)
// and adopts the ones newer than this instance's own.
func pinFollower(st *store.Store, pins *affinity.Pins, clk clock.Clock, ttl func() time.Duration) func() error {
	var mu sync.Mutex
	var since int64
	return func() error {
		mu.Lock()
		defer mu.Unlock()
		now := clk.Now().UnixMilli()
		rows, err := st.PinsUpdatedSince(since-pinOverlap.Milliseconds(), now)
		if err != nil {
			return err
		}
		pins.Adopt(pinsFromRows(rows, clk.Now().Add(ttl())))
		since = now
		return nil
	}
}

// keyOpensNothing reports whether box opens none of the stored credentials
// (connections' and client keys') while some are stored: the wrong key, not
// one damaged value.
func keyOpensNothing(st *store.Store, box *secrets.Box) (bool, error) {
	conns, err := st.Connections()
	if err != nil {
		return false, err
	}
	keys, err := st.APIKeys()
	if err != nil {
		return false, err
	}
	var sealed []string
	for _, c := range conns {
		sealed = append(sealed, c.APIKeyEnc, c.AccessTokenEnc, c.RefreshTokenEnc)
	}
	for _, k := range keys {
		sealed = append(sealed, k.KeyEnc)
	}
	stored := false
	for _, v := range sealed {
		if v == "" {
			continue
		}
		stored = true
		if _, err := box.Open(v); err == nil {
			return false, nil
		}
	}
	return stored, nil
}
