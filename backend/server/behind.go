package server

import (
	"errors"
	"strconv"
	"sync"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/store"
)

// behindRetry is how soon writes that failed are tried again.
const behindRetry = time.Second

// behindMax bounds the pending writes; past it new keys are dropped (and
// reported): an outage must not grow memory without end.
const behindMax = 10_000

// behindWriter performs the request path's state writes (cooldowns, breaker
// transitions, state events, session pins, model locks) behind the request when the store
// is shared (PostgreSQL), so a far or unreachable database never holds a
// request. Writes are keyed: a newer write under a key replaces a pending
// older one (the newest state of a connection or provider is what counts);
// they run in the order their keys first arrived, one goroutine, and a write
// that fails stays pending (unless replaced) and is retried. stop flushes once
// more. With SQLite the components write through directly, as before.
type behindWriter struct {
	onError func(error)

	mu      sync.Mutex
	pending map[string]func() error
	order   []string
	seq     uint64 // names the state events, which are never replaced
	wake    chan struct{}
	quit    chan struct{}
	done    chan struct{}
}

func newBehindWriter(onError func(error)) *behindWriter {
	w := &behindWriter{onError: onError, pending: map[string]func() error{},
		wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go w.loop()
	return w
}

// put queues write under key, replacing a pending write of the same key.
func (w *behindWriter) put(key string, write func() error) {
	w.mu.Lock()
	if _, ok := w.pending[key]; !ok {
		if len(w.order) >= behindMax {
			w.mu.Unlock()
			w.report(errBehindFull)
			return
		}
		w.order = append(w.order, key)
	}
	w.pending[key] = write
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

type behindFullError struct{}

func (behindFullError) Error() string {
	return "shared database: too many state writes pending; newer ones are dropped until it answers"
}

var errBehindFull error = behindFullError{}

func (w *behindWriter) report(err error) {
	if w.onError != nil {
		w.onError(err)
	}
}

func (w *behindWriter) loop() {
	defer close(w.done)
	retry := time.NewTimer(behindRetry)
	retry.Stop()
	for {
		select {
		case <-w.quit:
			w.flush()
			return
		case <-w.wake:
		case <-retry.C:
		}
		if !w.flush() {
			retry.Reset(behindRetry)
		}
	}
}

// flush runs every pending write in order and reports whether all succeeded.
// After the first failure (the database is likely away) the rest wait for the
// retry, still in order.
func (w *behindWriter) flush() bool {
	for {
		w.mu.Lock()
		if len(w.order) == 0 {
			w.mu.Unlock()
			return true
		}
		key := w.order[0]
		write := w.pending[key]
		w.order = w.order[1:]
		delete(w.pending, key)
		w.mu.Unlock()
		if err := write(); err != nil {
			w.report(err)
			w.mu.Lock()
			if _, newer := w.pending[key]; !newer {
				w.pending[key] = write
				w.order = append([]string{key}, w.order...)
			}
			w.mu.Unlock()
			return false
		}
	}
}

// stop flushes once more and ends the writer (nil-safe).
func (w *behindWriter) stop() {
	if w == nil {
		return
	}
	close(w.quit)
	<-w.done
}

// behindStore is the shared store as the request path's writers see it.
type behindStore struct {
	st       *store.Store
	clk      clock.Clock // the moved pins' "now" (store.MovePin)
	w        *behindWriter
	cd       *stepQueue[store.CooldownFields]
	breakers *stepQueue[store.BreakerRow]
}

func newBehindStore(st *store.Store, clk clock.Clock, w *behindWriter) behindStore {
	return behindStore{st: st, clk: clk, w: w, cd: newStepQueue[store.CooldownFields](), breakers: newStepQueue[store.BreakerRow]()}
}

// maxQueuedSteps bounds one row's queued decisions; past it the oldest are
// dropped (during an outage a herd's later failures decide the same as its
// first).
const maxQueuedSteps = 64

// stepQueue holds the decisions waiting for the database, in order per row
// (a connection's cooldown, a provider's breaker): unlike the other state
// writes a newer one does not replace an older one, each is an outcome the
// stored row must see (routing.CooldownDecider).
type stepQueue[T any] struct {
	mu      sync.Mutex
	pending map[string][]queuedStep[T]
}

type queuedStep[T any] struct {
	step func(T) T
	done func(T, bool)
}

func newStepQueue[T any]() *stepQueue[T] {
	return &stepQueue[T]{pending: map[string][]queuedStep[T]{}}
}

// add queues one decision for key.
func (q *stepQueue[T]) add(key string, s queuedStep[T]) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pending[key] = keepLast(append(q.pending[key], s))
}

func keepLast[S ~[]E, E any](list S) S {
	if len(list) > maxQueuedSteps {
		return list[len(list)-maxQueuedSteps:]
	}
	return list
}

// flush lets decide (one store transaction holding the row's lock) apply
// key's queued decisions in order, then tells each done the committed row.
// On failure they go back in front of any queued since, for the retry; a row
// gone meanwhile (store.ErrNotFound) drops them.
func (q *stepQueue[T]) flush(key string, decide func(step func(T) T) (T, bool, error)) error {
	q.mu.Lock()
	list := q.pending[key]
	delete(q.pending, key)
	q.mu.Unlock()
	if len(list) == 0 {
		return nil
	}
	stored, wrote, err := decide(func(v T) T {
		for _, s := range list {
			v = s.step(v)
		}
		return v
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		q.mu.Lock()
		q.pending[key] = keepLast(append(list, q.pending[key]...))
		q.mu.Unlock()
		return err
	}
	for _, s := range list {
		if s.done != nil {
			s.done(stored, wrote)
		}
	}
	return nil
}

// SaveCooldown queues a connection's cooldown state, to be written as is in
// order with its decisions (routing.CooldownStore).
func (b behindStore) SaveCooldown(id string, f store.CooldownFields) error {
	b.DecideCooldown(id, func(store.CooldownFields) store.CooldownFields { return f }, nil)
	return nil
}

// DecideCooldown queues one cooldown decision of a connection
// (routing.CooldownDecider). The connection's queued decisions run together
// in one store.DecideCooldown — one transaction holding the row's lock —
// and each done hears the row as committed and whether they changed it.
func (b behindStore) DecideCooldown(id string, step func(store.CooldownFields) store.CooldownFields, done func(store.CooldownFields, bool)) {
	b.cd.add(id, queuedStep[store.CooldownFields]{step: step, done: done})
	b.w.put("cooldown|"+id, func() error {
		return b.cd.flush(id, func(step func(store.CooldownFields) store.CooldownFields) (store.CooldownFields, bool, error) {
			return b.st.DecideCooldown(id, step)
		})
	})
}

// DecideBreaker queues one decision of a provider breaker's shared row, run
// like DecideCooldown's (store.DecideBreaker).
func (b behindStore) DecideBreaker(provider string, step func(store.BreakerRow) store.BreakerRow) {
	b.breakers.add(provider, queuedStep[store.BreakerRow]{step: step})
	b.w.put("breaker|"+provider, func() error {
		return b.breakers.flush(provider, func(step func(store.BreakerRow) store.BreakerRow) (store.BreakerRow, bool, error) {
			return b.st.DecideBreaker(provider, step)
		})
	})
}

// SaveBreaker queues a provider breaker's state, to be written as is in
// order with the provider's decisions (an operator's reset).
func (b behindStore) SaveBreaker(r store.BreakerRow) error {
	b.DecideBreaker(r.Provider, func(store.BreakerRow) store.BreakerRow { return r })
	return nil
}

// SavePin queues the newest pin of a session, written only while the stored
// pin still names the connection it moves from (store.MovePin): a pin
// another instance decided meanwhile stands, and is adopted instead.
func (b behindStore) SavePin(p store.AffinityPin) error {
	b.w.put("pin|"+p.SessionKey, func() error { return b.st.MovePin(p, p.Prev, b.clk.Now().UnixMilli()) })
	return nil
}

// SaveModelLock queues the newest lock or clear of a model lock key
// (routing.LockStore).
func (b behindStore) SaveModelLock(r store.ModelLockRow) error {
	b.w.put("modellock|"+r.Layer+"|"+r.Key, func() error { return b.st.SaveModelLock(r) })
	return nil
}

// InsertStateEvent queues one state change (never replaced).
func (b behindStore) InsertStateEvent(e store.StateEvent, keep int) error {
	b.w.mu.Lock()
	b.w.seq++
	key := "event|" + strconv.FormatUint(b.w.seq, 10)
	b.w.mu.Unlock()
	b.w.put(key, func() error { return b.st.InsertStateEvent(e, keep) })
	return nil
}

// stateWriter is what the request path writes: the store itself (SQLite,
// write-through) or behindStore (PostgreSQL, write-behind).
type stateWriter interface {
	SaveCooldown(id string, f store.CooldownFields) error
	SaveBreaker(r store.BreakerRow) error
	SavePin(p store.AffinityPin) error
	InsertStateEvent(e store.StateEvent, keep int) error
}
