// Package reqlog writes request log rows off the hot path: requests append rows
// to a bounded queue and one goroutine writes them to the store in batches.
package reqlog

import (
	"sync"
	"sync/atomic"
	"time"

	"omniroute/backend/store"
)

// Sink is where batches go.
type Sink interface {
	InsertRequestLogs([]store.RequestLog) error
	PruneRequestLogs(keep int) error
}

// RetainingSink is a Sink that can apply the retention in a batch's own
// transaction (store.Store on SQLite: cheaper than a separate prune). The
// writer gives it keep with every batch, and still calls PruneRequestLogs
// every 1,000 rows (the rollup's retention, the captured bodies' sweep).
type RetainingSink interface {
	InsertRequestLogsRetaining(rows []store.RequestLog, keep int) error
}

// Writer batches request logs. A request only appends its row under a short
// lock; the writer goroutine is woken once per batch (or by its ticker), not
// once per row, so logging costs a request no goroutine switch.
type Writer struct {
	sink     Sink
	keep     func() int
	onError  func(error)
	interval time.Duration

	mu     sync.Mutex
	closed bool
	queue  []store.RequestLog // rows waiting for the writer, at most maxQueued
	spare  []store.RequestLog // the writer's last drained buffer, reused as the next queue

	wake    chan struct{} // capacity 1: a full batch waits, or Close was called
	done    chan struct{}
	once    sync.Once
	dropped atomic.Int64
}

// batchSize is the rows that wake the writer and the most one write carries.
// A batch pays a fixed cost (its transaction's commit and one rollup upsert per
// cell) over its rows: ≈ 4.3 µs per row in batches of 64, ≈ 3 µs in batches of
// 256 (BenchmarkRequestLogInsert); a batch of 256 holds the writer ≈ 1 ms, so
// a flush still never holds a core for long.
const batchSize = 256

// maxQueued bounds the rows waiting to be written; beyond it rows are dropped
// (and counted), so a slow disk never slows a request or grows memory.
const maxQueued = 4096

// New starts a writer flushing every interval or every batchSize rows; keep returns
// how many rows to retain. Close flushes and stops it.
func New(sink Sink, interval time.Duration, keep func() int, onError func(error)) *Writer {
	w := &Writer{sink: sink, keep: keep, onError: onError, interval: interval,
		queue: make([]store.RequestLog, 0, batchSize), wake: make(chan struct{}, 1), done: make(chan struct{})}
	go w.loop()
	return w
}

// Log queues a row; when the queue is full the row is dropped and counted, so a
// slow disk never slows a request.
func (w *Writer) Log(l store.RequestLog) {
	w.mu.Lock()
	if w.closed || len(w.queue) >= maxQueued {
		w.mu.Unlock()
		w.dropped.Add(1)
		return
	}
	w.queue = append(w.queue, l)
	full := len(w.queue) == batchSize
	w.mu.Unlock()
	if full {
		w.signal()
	}
}

// signal wakes the writer (a no-op when a wake-up is already pending).
func (w *Writer) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Dropped reports how many rows were dropped.
func (w *Writer) Dropped() int64 { return w.dropped.Load() }

// Close flushes queued rows and stops the writer.
func (w *Writer) Close() {
	w.once.Do(func() {
		w.mu.Lock()
		w.closed = true
		w.mu.Unlock()
		w.signal()
	})
	<-w.done
}

func (w *Writer) loop() {
	defer close(w.done)
	t := time.NewTicker(w.interval)
	defer t.Stop()
	written := 0
	for {
		select {
		case <-w.wake:
		case <-t.C:
		}
		// Take every waiting row; requests go on appending to the spare buffer.
		w.mu.Lock()
		taken, closed := w.queue, w.closed
		w.queue, w.spare = w.spare[:0], nil
		w.mu.Unlock()
		retaining, _ := w.sink.(RetainingSink)
		for rows := taken; len(rows) > 0; {
			n := min(len(rows), batchSize)
			var err error
			if retaining != nil {
				err = retaining.InsertRequestLogsRetaining(rows[:n], w.keep())
			} else {
				err = w.sink.InsertRequestLogs(rows[:n])
			}
			if err != nil && w.onError != nil {
				w.onError(err)
			}
			written += n
			rows = rows[n:]
			if written >= 1000 {
				written = 0
				if err := w.sink.PruneRequestLogs(w.keep()); err != nil && w.onError != nil {
					w.onError(err)
				}
			}
		}
		if cap(taken) <= 2*batchSize { // after a burst, let the large buffer go
			clear(taken) // no row's strings stay reachable from the spare
			w.spare = taken[:0]
		}
		if closed {
			return
		}
	}
}
