package gateway

import (
	"sync"
	"time"
)

// attemptTimer is an attempt's one timer. It keeps the first-byte deadline
// from the upstream request until the first progress frame (or the buffered
// answer) and, while a stream is relayed, the stall watchdog's next decision
// point: armed at the earlier of the two, re-armed in place (Reset), its
// callback the attempt's onTimer bound once. One timer and one callback per
// attempt where a stream had two of each: an allocation saved is a timer and
// a callback (docs/BENCHMARKS.md, issue 19).
//
// The first-byte instant is on the runtime clock, as the timer is: the timer
// fires at it exactly (under testing/synctest too), and a wake-up for the
// watchdog before it leaves it armed.
type attemptTimer struct {
	mu      sync.Mutex
	t       *time.Timer
	stopped bool // for good: the attempt is over, or a deadline fired
	// fbOn is the first-byte duty, due at fbAt; execCuts: the execution
	// bound (executionMaxWaitMs) expires with it.
	fbOn     bool
	fbAt     time.Time
	execCuts bool
	// watching is the stream watchdog's duty (a.stream's Watch).
	watching bool
}

// startTimer arms the attempt's timer for its first-byte deadline fb. The
// attempt's cancel must be set.
func (a *attemptCtx) startTimer(fb time.Duration, execCuts bool) {
	at := &a.timer
	at.mu.Lock()
	defer at.mu.Unlock()
	at.fbOn, at.fbAt, at.execCuts = true, time.Now().Add(fb), execCuts
	at.t = time.AfterFunc(fb, a.onTimer)
}

// firstByteDone ends the first-byte duty: the answer has started. The timer
// stays armed only for the watchdog.
func (a *attemptCtx) firstByteDone() {
	at := &a.timer
	at.mu.Lock()
	defer at.mu.Unlock()
	if !at.fbOn {
		return
	}
	at.fbOn = false
	if !at.watching && at.t != nil {
		at.t.Stop()
	}
}

// stopTimer ends every duty for good. Stop does not wait for a callback
// already running; one that runs finds the timer stopped, or acts on this
// attempt only (its own context, its own watchdog).
func (a *attemptCtx) stopTimer() {
	at := &a.timer
	at.mu.Lock()
	defer at.mu.Unlock()
	at.stopped = true
	if at.t != nil {
		at.t.Stop()
	}
}

// onTimer is the timer's callback: the first-byte deadline when it is due,
// else the watchdog's check.
func (a *attemptCtx) onTimer() {
	at := &a.timer
	at.mu.Lock()
	if at.stopped {
		at.mu.Unlock()
		return
	}
	if at.fbOn && !time.Now().Before(at.fbAt) {
		at.fbOn, at.stopped = false, true
		cuts := at.execCuts
		at.mu.Unlock()
		a.firstByteExpired(cuts)
		return
	}
	watching := at.watching
	at.mu.Unlock()
	if watching {
		a.stream.fireWatchdog()
		return
	}
	a.rearm(time.Time{}, time.Time{}) // not due yet (a Reset raced it): wait again
}

// firstByteExpired cancels the attempt as a first-byte timeout (which fails
// over), or, when the execution bound expires with it, as the execution
// bound, remembered for the 504.
func (a *attemptCtx) firstByteExpired(execCuts bool) {
	if execCuts {
		a.req.adm.execExpired.Store(true)
		a.cancel(errExecution)
		return
	}
	a.cancel(errFirstByteTimeout)
}

// rearm sets the timer to the earlier of the first-byte deadline (while that
// duty lasts) and the watchdog's next decision point next, as seen at now on
// the watchdog's clock (zero next: no watchdog duty).
func (a *attemptCtx) rearm(now, next time.Time) {
	at := &a.timer
	at.mu.Lock()
	defer at.mu.Unlock()
	if at.stopped || at.t == nil {
		return
	}
	d, armed := time.Duration(0), false
	if at.watching && !next.IsZero() {
		d, armed = max(next.Sub(now), time.Millisecond), true
	}
	if at.fbOn {
		if r := time.Until(at.fbAt); !armed || r < d {
			d, armed = r, true
		}
	}
	if armed {
		at.t.Reset(d) // from inside onTimer: runs it again after d
	}
}
