package gateway

import (
	"sync"
	"time"
)

// attemptTimer is an attempt's one timer. It keeps the first-byte deadline
// from the upstream request until the first progress frame (or the buffered
// answer) and, while a stream is relayed, the stall watchdog's next decision
// point: armed at the earlier of the two and re-armed in place (Reset). An
// attempt borrows one from the gateway's pool and gives it back when it ends,
// so an attempt allocates neither a timer nor a callback (docs/BENCHMARKS.md,
// issue 19; a stream used to allocate two of each).
//
// Reuse is safe because the callback acts only on what is due for the
// attempt owning the timer when it runs, decided under the timer's lock:
// Stop does not wait for a callback already running, so a late run of an
// earlier owner's schedule may find a new owner, and then sees that owner's
// first-byte instant not reached and asks that owner's watchdog, whose
// verdict is a function of its own frames and the time: at worst a wake-up
// that re-arms the timer where it was. Every change is made for the owner
// only (owner checked under the lock).
//
// The first-byte instant is on the runtime clock, as the timer is: the timer
// fires at it exactly (under testing/synctest too).
type attemptTimer struct {
	mu      sync.Mutex
	t       *time.Timer // its callback is fire, bound once per attemptTimer
	owner   *attemptCtx // nil while in the pool
	stopped bool        // for good: a deadline fired or the owner ended
	// fbOn is the first-byte duty, due at fbAt; execCuts: the execution
	// bound (executionMaxWaitMs) expires with it.
	fbOn     bool
	fbAt     time.Time
	execCuts bool
	// watching is the stream watchdog's duty (the owner's stream Watch).
	watching bool
}

// startTimer takes a timer from the pool and arms it for the attempt's
// first-byte deadline fb. The attempt's cancel must be set.
func (a *attemptCtx) startTimer(fb time.Duration, execCuts bool) {
	at, _ := a.g.timers.Get().(*attemptTimer)
	if at == nil {
		at = new(attemptTimer)
	}
	at.mu.Lock()
	defer at.mu.Unlock()
	at.owner, at.stopped, at.watching = a, false, false
	at.fbOn, at.fbAt, at.execCuts = true, time.Now().Add(fb), execCuts
	if at.t == nil {
		at.t = time.AfterFunc(fb, at.fire)
	} else {
		at.t.Reset(fb)
	}
	a.tm = at
}

// firstByteDone ends the first-byte duty: the answer has started. The timer
// stays armed only for the watchdog.
func (a *attemptCtx) firstByteDone() {
	at := a.tm
	if at == nil {
		return
	}
	at.mu.Lock()
	defer at.mu.Unlock()
	if at.owner != a || !at.fbOn {
		return
	}
	at.fbOn = false
	if !at.watching {
		at.t.Stop()
	}
}

// extendFirstByte moves the first-byte deadline by d (the headers came; the
// first frame gets the rest of the long wait); execCuts is re-decided for it.
func (a *attemptCtx) extendFirstByte(d time.Duration, execCuts bool) {
	at := a.tm
	if at == nil {
		return
	}
	at.mu.Lock()
	defer at.mu.Unlock()
	if at.owner != a || !at.fbOn || at.stopped {
		return
	}
	at.fbAt, at.execCuts = at.fbAt.Add(d), execCuts
	at.t.Reset(time.Until(at.fbAt))
}

// watchOn gives the timer the watchdog's duty.
func (a *attemptCtx) watchOn() {
	at := a.tm
	if at == nil {
		return
	}
	at.mu.Lock()
	defer at.mu.Unlock()
	if at.owner == a {
		at.watching = true
	}
}

// stopTimer ends every duty for good and gives the timer back to the pool
// (once; later calls do nothing).
func (a *attemptCtx) stopTimer() {
	at := a.tm
	if at == nil {
		return
	}
	at.mu.Lock()
	mine := at.owner == a
	if mine {
		at.t.Stop()
		at.owner, at.stopped, at.fbOn, at.watching = nil, true, false, false
	}
	at.mu.Unlock()
	if mine {
		a.g.timers.Put(at)
	}
}

// fire is the timer's callback: the owner's first-byte deadline when it is
// due, else the owner's watchdog check.
func (at *attemptTimer) fire() {
	at.mu.Lock()
	a := at.owner
	if a == nil || at.stopped {
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
	a.rearm(time.Time{}, time.Time{}) // not due (a late run of an earlier schedule): wait again
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

// rearm sets the attempt's timer to the earlier of the first-byte deadline
// (while that duty lasts) and the watchdog's next decision point next, as
// seen at now on the watchdog's clock (zero next: no watchdog duty).
func (a *attemptCtx) rearm(now, next time.Time) {
	at := a.tm
	if at == nil {
		return
	}
	at.mu.Lock()
	defer at.mu.Unlock()
	if at.owner != a || at.stopped {
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
		at.t.Reset(d) // from inside fire: runs it again after d
	}
}
