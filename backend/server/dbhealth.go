package server

import (
	"sync"
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
