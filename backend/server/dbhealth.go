package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/errs"
	"omniroute/backend/store"
)

// dbRetryEvery is how long a synchronous use of a shared database that just
// failed (a pin claim, a shared limit slot) is skipped before it is tried
// again: the request path does not wait on a database known not to answer.
const dbRetryEvery = 2 * time.Second

// errDatabaseDown is the refusal of a synchronous use skipped meanwhile.
var errDatabaseDown = errs.DatabaseUnavailable(dbRetryEvery)

// dbHealth is a team server's view of its database for the request path's
// optional synchronous uses: after a failure they are skipped (the local
// decision serves) for dbRetryEvery, then tried again. A nil *dbHealth is
// always usable.
type dbHealth struct {
	clk clock.Clock
	mu  sync.Mutex
	// skipUntil is when the next synchronous use may try the database.
	skipUntil time.Time
}

func newDBHealth(clk clock.Clock) *dbHealth { return &dbHealth{clk: clk} }

// usable reports whether a synchronous use should try the database now.
func (d *dbHealth) usable() bool {
	if d == nil {
		return true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return !d.clk.Now().Before(d.skipUntil)
}

// note records a synchronous use's outcome: an unreachable database is
// skipped for dbRetryEvery.
func (d *dbHealth) note(err error) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil && store.IsUnreachable(err) {
		d.skipUntil = d.clk.Now().Add(dbRetryEvery)
	} else if err == nil {
		d.skipUntil = time.Time{}
	}
}

// keyFreshness is team.maxStalenessMs: how long an instance that cannot
// reach its database keeps honouring the client keys it loaded. Keys are
// revalidated together at every successful reload (a change notification, or
// the reconcile every 15 s); while the database answers the bound never
// applies, and once its statements fail (the heartbeat every 5 s notices)
// keys not revalidated within the bound are refused with 503
// DATABASE_UNAVAILABLE — a key deleted during a partition stops working
// within the bound instead of for as long as the partition lasts.
type keyFreshness struct {
	st        *store.Store
	clk       clock.Clock
	bound     func() time.Duration
	validated atomic.Int64 // unix ms of the last successful reload
}

// revalidated records a successful reload of the keys.
func (k *keyFreshness) revalidated() { k.validated.Store(k.clk.Now().UnixMilli()) }

// check refuses when the database does not answer and the keys are older
// than the bound.
func (k *keyFreshness) check() error {
	down, _ := k.st.Reachability()
	if down.IsZero() {
		return nil
	}
	age := k.clk.Now().Sub(time.UnixMilli(k.validated.Load()))
	if age <= k.bound() {
		return nil
	}
	return errs.New(errs.Unavailable, errs.CodeDatabaseUnavailable,
		"this instance cannot reach its database and has not revalidated client keys for %s (team.maxStalenessMs %d); retry shortly or through another instance",
		age.Round(time.Second), k.bound().Milliseconds()).WithRetryAfter(5 * time.Second)
}

// Start-up's pauses between attempts to reach the database: doubling from
// the first to the last.
const (
	firstDBRetry = 250 * time.Millisecond
	maxDBRetry   = 5 * time.Second
)

// ErrStartInterrupted is start-up's error when the process is told to stop
// (SIGTERM, SIGINT: Options.Context cancelled) while it waits for the
// database (--wait-for-db).
var ErrStartInterrupted = errors.New("stopped while waiting for the shared database (--wait-for-db): interrupted")

// openPostgresWaiting opens the shared database, waiting up to wait for one
// that does not answer (refused, reset or timed-out connections; not a
// wrong password or a newer schema): every failed attempt is logged with the
// pause before the next, pauses double from 250 ms to 5 s, and the last
// error is returned once wait has passed. ctx cancelled (a signal) ends the
// wait at once with ErrStartInterrupted, also during an attempt; pause
// sleeps d or until ctx is done (clock.Sleep; tests advance a fake clock).
func openPostgresWaiting(ctx context.Context, url string, wait time.Duration, log *slog.Logger, clk clock.Clock,
	pause func(ctx context.Context, d time.Duration) error) (*store.Store, error) {
	start := clk.Now()
	next := firstDBRetry
	for attempt := 1; ; attempt++ {
		st, err := openPostgresAttempt(ctx, url)
		if ctx.Err() != nil {
			return nil, ErrStartInterrupted
		}
		if err == nil {
			if attempt > 1 {
				log.Info("shared database: reached", slog.Int("attempts", attempt), slog.Duration("after", clk.Now().Sub(start).Round(time.Millisecond)))
			}
			return st, nil
		}
		left := wait - clk.Now().Sub(start)
		if !store.IsUnreachable(err) || left <= 0 {
			if wait > 0 && store.IsUnreachable(err) {
				return nil, fmt.Errorf("%w (waited %s: --wait-for-db)", err, wait)
			}
			return nil, err
		}
		next = min(next, left)
		log.Warn("shared database: not reachable yet, retrying", slog.Int("attempt", attempt),
			slog.Duration("retryIn", next), slog.Duration("waitLeft", left.Round(time.Millisecond)), slog.String("error", err.Error()))
		if pause(ctx, next) != nil {
			return nil, ErrStartInterrupted
		}
		next = min(2*next, maxDBRetry)
	}
}

// openPostgresAttempt is one store.OpenPostgres that ctx cancelled stops
// waiting for (the connect itself is bounded by connect_timeout): a store
// opened after that is closed.
func openPostgresAttempt(ctx context.Context, url string) (*store.Store, error) {
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	type opened struct {
		st  *store.Store
		err error
	}
	done := make(chan opened, 1)
	go func() {
		st, err := store.OpenPostgres(url)
		done <- opened{st, err}
	}()
	select {
	case o := <-done:
		return o.st, o.err
	case <-ctx.Done():
		go func() {
			if o := <-done; o.st != nil {
				_ = o.st.Close()
			}
		}()
		return nil, ctx.Err()
	}
}
