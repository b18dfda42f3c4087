// Package queue is the per provider+connection request queue of the
// resilience guide §5: admission by depth (maxQueueDepth), a wait budget
// (maxWaitMs) covering the wait for a slot plus the time QUEUED, pacing from
// the connection's requestsPerMinute / minTimeMs, and pauses declared by an
// upstream's 429 body. A request refused here never reaches the upstream.
//
// The decisions are pure functions (CheckAdmission, CheckPause, Effective)
// tested without a limiter; Queue holds the live state. Pacing uses
// golang.org/x/time/rate: a token bucket of burst 1 whose reservations take an
// explicit time (ReserveN(t), DelayFrom(t), CancelAt(t)), so a caller learns
// up front when its turn comes — and is refused at once when that is past its
// budget instead of sleeping until the budget ends — and a cancelled caller
// hands its turn back to the next one.
package queue

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Error codes of the guide (§5).
const (
	// CodeQueueFull: maxQueueDepth callers are already queued on the connection.
	CodeQueueFull = "RATE_LIMIT_QUEUE_FULL"
	// CodeQueueTimeout: the wait budget (maxWaitMs) ends before the request could be dispatched.
	CodeQueueTimeout = "RATE_LIMIT_QUEUE_TIMEOUT"
	// CodeExecutionTimeout: the request ran past executionMaxWaitMs after dispatch (HTTP 504).
	CodeExecutionTimeout = "RATE_LIMIT_EXECUTION_TIMEOUT"
)

// Bounds of the settings (the guide's clamps).
const (
	MinWait       = time.Millisecond
	MaxWait       = 24 * time.Hour
	MaxQueueDepth = 100_000
)

// Error is a refused admission.
type Error struct {
	Code    string
	Message string
	// RetryAfter is when trying again makes sense (at least 1 s on the wire).
	RetryAfter time.Duration
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Settings are one connection's effective queue settings.
type Settings struct {
	// MaxWait bounds waiting for a slot plus the time QUEUED (maxWaitMs).
	MaxWait time.Duration
	// ExecutionMaxWait bounds the execution, from dispatch (executionMaxWaitMs).
	ExecutionMaxWait time.Duration
	// MaxDepth is how many callers may be queued at once; 0 = unbounded.
	MaxDepth int
	// Interval is the pacing: at most one dispatch per Interval; 0 = none.
	Interval time.Duration
}

// Overrides are a connection's rateLimitOverrides for the queue; nil = not set.
type Overrides struct {
	MaxWaitMs          *int64   `json:"maxWaitMs"`
	ExecutionMaxWaitMs *int64   `json:"executionMaxWaitMs"`
	RequestsPerMinute  *float64 `json:"requestsPerMinute"`
	MinTimeMs          *int64   `json:"minTimeMs"`
}

// ClampWait brings a wait into the guide's 1 ms–24 h range.
func ClampWait(d time.Duration) time.Duration { return min(max(d, MinWait), MaxWait) }

// ClampDepth brings a depth into 0–100000.
func ClampDepth(n int) int { return min(max(n, 0), MaxQueueDepth) }

// Effective applies a connection's overrides to the base settings (env <
// persisted, already resolved): per-connection values win; both waits clamp
// to 1 ms–24 h.
func Effective(base Settings, o Overrides) Settings {
	s := base
	if o.MaxWaitMs != nil {
		s.MaxWait = time.Duration(*o.MaxWaitMs) * time.Millisecond
	}
	if o.ExecutionMaxWaitMs != nil {
		s.ExecutionMaxWait = time.Duration(*o.ExecutionMaxWaitMs) * time.Millisecond
	}
	s.MaxWait, s.ExecutionMaxWait = ClampWait(s.MaxWait), ClampWait(s.ExecutionMaxWait)
	s.MaxDepth = ClampDepth(s.MaxDepth)
	var rpm float64
	var minTime time.Duration
	if o.RequestsPerMinute != nil {
		rpm = *o.RequestsPerMinute
	}
	if o.MinTimeMs != nil {
		minTime = time.Duration(*o.MinTimeMs) * time.Millisecond
	}
	s.Interval = Interval(rpm, minTime)
	return s
}

// Interval is the pacing interval of requestsPerMinute and minTimeMs together:
// the longer of the two wins (0 when neither is set).
func Interval(requestsPerMinute float64, minTime time.Duration) time.Duration {
	var d time.Duration
	if requestsPerMinute > 0 {
		d = time.Duration(float64(time.Minute) / requestsPerMinute)
	}
	if minTime > d {
		d = minTime
	}
	return min(d, MaxWait)
}

// CheckAdmission is the depth admission of §5: with maxDepth > 0 and queued
// callers already waiting, a new one is refused with RATE_LIMIT_QUEUE_FULL.
// It is pure and cheap, so the gateway calls it before any translation.
func CheckAdmission(queued, maxDepth int) error {
	if maxDepth > 0 && queued >= maxDepth {
		return &Error{Code: CodeQueueFull, RetryAfter: time.Second,
			Message: fmt.Sprintf("the connection's request queue is full (%d queued, maxQueueDepth %d); retry shortly", queued, maxDepth)}
	}
	return nil
}

// CheckPause refuses at once, with the queue-timeout code, a caller whose
// budget ends (deadline) before the queue's pause does.
func CheckPause(now, pausedUntil, deadline time.Time) error {
	if pausedUntil.After(deadline) {
		return &Error{Code: CodeQueueTimeout, RetryAfter: pausedUntil.Sub(now),
			Message: fmt.Sprintf("the connection's queue is paused by the upstream's retry hint for %s, longer than the wait budget", pausedUntil.Sub(now).Round(time.Millisecond))}
	}
	return nil
}

// Timeout is the refusal of a caller whose budget ran out while queued.
func Timeout(budget time.Duration) *Error {
	return &Error{Code: CodeQueueTimeout, RetryAfter: time.Second,
		Message: fmt.Sprintf("the request waited its whole queue budget (maxWaitMs %d) without being dispatched", budget.Milliseconds())}
}

// Queue is one provider+connection queue.
type Queue struct {
	mu          sync.Mutex
	queued      int
	interval    time.Duration
	lim         *rate.Limiter
	pausedUntil time.Time
	// watchers are told of each new pause (WatchPause).
	watchers map[*pauseWatcher]struct{}
}

// pauseWatcher is one WatchPause registration.
type pauseWatcher struct{ f func(until time.Time) }

// WatchPause calls f with the pause's end each time a pause is declared
// (or lengthened) until stop is called: a caller waiting for a slot on the
// connection's gate learns at once that its turn cannot come within its
// budget. f runs on Pause's caller, without the queue's lock held.
func (q *Queue) WatchPause(f func(until time.Time)) (stop func()) {
	w := &pauseWatcher{f: f}
	q.mu.Lock()
	if q.watchers == nil {
		q.watchers = map[*pauseWatcher]struct{}{}
	}
	q.watchers[w] = struct{}{}
	q.mu.Unlock()
	return func() {
		q.mu.Lock()
		delete(q.watchers, w)
		q.mu.Unlock()
	}
}

// Enter admits a caller (CheckAdmission against the live depth, atomically)
// and counts it as queued until Leave.
func (q *Queue) Enter(maxDepth int) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := CheckAdmission(q.queued, maxDepth); err != nil {
		return err
	}
	q.queued++
	return nil
}

// Leave ends a caller's time in the queue (dispatched, refused or gone).
func (q *Queue) Leave() {
	q.mu.Lock()
	q.queued--
	q.mu.Unlock()
}

// Queued is how many callers wait in the queue now.
func (q *Queue) Queued() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.queued
}

// Pause holds dispatches until until (a body-declared retry hint).
func (q *Queue) Pause(until time.Time) {
	q.mu.Lock()
	if !until.After(q.pausedUntil) {
		q.mu.Unlock()
		return
	}
	q.pausedUntil = until
	var tell []*pauseWatcher
	for w := range q.watchers {
		tell = append(tell, w)
	}
	q.mu.Unlock()
	for _, w := range tell {
		w.f(until)
	}
}

// PausedUntil is the end of the current pause (zero or past: none).
func (q *Queue) PausedUntil() time.Time {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pausedUntil
}

// Pace waits for the caller's dispatch turn: after any pause, then one turn
// per interval, and reports how long it waited. A turn that would come after
// deadline is refused at once with the queue-timeout code; ctx ending gives
// its error back and the turn to the next caller.
func (q *Queue) Pace(ctx context.Context, now, deadline time.Time, interval time.Duration) (time.Duration, error) {
	q.mu.Lock()
	if err := CheckPause(now, q.pausedUntil, deadline); err != nil {
		q.mu.Unlock()
		return 0, err
	}
	start := now
	if q.pausedUntil.After(now) {
		start = q.pausedUntil
	}
	q.setInterval(now, interval)
	var res *rate.Reservation
	if q.lim != nil {
		res = q.lim.ReserveN(start, 1)
		start = start.Add(res.DelayFrom(start))
	}
	if start.After(now) && start.After(deadline) {
		if res != nil {
			res.CancelAt(now)
		}
		q.mu.Unlock()
		return 0, &Error{Code: CodeQueueTimeout, RetryAfter: start.Sub(now),
			Message: fmt.Sprintf("the connection's pacing has no turn within the wait budget (next in %s)", start.Sub(now).Round(time.Millisecond))}
	}
	q.mu.Unlock()
	wait := start.Sub(now)
	if wait <= 0 {
		return 0, nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return wait, nil
	case <-ctx.Done():
		if res != nil {
			q.mu.Lock()
			res.CancelAt(now)
			q.mu.Unlock()
		}
		return 0, ctx.Err()
	}
}

// setInterval follows the connection's current pacing setting.
func (q *Queue) setInterval(now time.Time, interval time.Duration) {
	if interval == q.interval {
		return
	}
	q.interval = interval
	switch {
	case interval <= 0:
		q.lim = nil
	case q.lim == nil:
		q.lim = rate.NewLimiter(rate.Every(interval), 1)
	default:
		q.lim.SetLimitAt(now, rate.Every(interval))
	}
}

// Set holds the queues by key (provider+connection), created on first use.
type Set struct {
	mu sync.Mutex
	m  map[string]*Queue
}

// NewSet returns an empty set.
func NewSet() *Set { return &Set{m: map[string]*Queue{}} }

// For returns the queue of key.
func (s *Set) For(key string) *Queue {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.m[key]
	if q == nil {
		q = &Queue{}
		s.m[key] = q
	}
	return q
}

// Get returns the queue of key if it exists.
func (s *Set) Get(key string) (*Queue, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, ok := s.m[key]
	return q, ok
}

// Queued is the total of callers queued across every queue.
func (s *Set) Queued() int {
	s.mu.Lock()
	qs := make([]*Queue, 0, len(s.m))
	for _, q := range s.m {
		qs = append(qs, q)
	}
	s.mu.Unlock()
	n := 0
	for _, q := range qs {
		n += q.Queued()
	}
	return n
}
