// Package reqlog writes request log rows off the hot path: requests hand rows to
// a bounded channel and one goroutine writes them to the store in batches.
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

// Writer batches request logs.
type Writer struct {
	sink     Sink
	mu       sync.RWMutex // guards closed against a Log racing Close at shutdown
	closed   bool
	ch       chan store.RequestLog
	done     chan struct{}
	once     sync.Once
	dropped  atomic.Int64
	keep     func() int
	onError  func(error)
	interval time.Duration
}

// batchSize caps one write so a flush never holds a core for long.
const batchSize = 64

// New starts a writer flushing every interval or every batchSize rows; keep returns
// how many rows to retain. Close flushes and stops it.
func New(sink Sink, interval time.Duration, keep func() int, onError func(error)) *Writer {
	w := &Writer{sink: sink, ch: make(chan store.RequestLog, 4096), done: make(chan struct{}),
		keep: keep, onError: onError, interval: interval}
	go w.loop()
	return w
}

// Log queues a row; when the queue is full the row is dropped and counted, so a
// slow disk never slows a request.
func (w *Writer) Log(l store.RequestLog) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		w.dropped.Add(1)
		return
	}
	select {
	case w.ch <- l:
	default:
		w.dropped.Add(1)
	}
}

// Dropped reports how many rows were dropped.
func (w *Writer) Dropped() int64 { return w.dropped.Load() }

// Close flushes queued rows and stops the writer.
func (w *Writer) Close() {
	w.once.Do(func() {
		w.mu.Lock()
		w.closed = true
		close(w.ch)
		w.mu.Unlock()
	})
	<-w.done
}

func (w *Writer) loop() {
	defer close(w.done)
	t := time.NewTicker(w.interval)
	defer t.Stop()
	batch := make([]store.RequestLog, 0, batchSize)
	written := 0
	flush := func() {
		if len(batch) == 0 {
			return
		}
		if err := w.sink.InsertRequestLogs(batch); err != nil && w.onError != nil {
			w.onError(err)
		}
		written += len(batch)
		batch = batch[:0]
		if written >= 1000 {
			written = 0
			if err := w.sink.PruneRequestLogs(w.keep()); err != nil && w.onError != nil {
				w.onError(err)
			}
		}
	}
	for {
		select {
		case l, ok := <-w.ch:
			if !ok {
				flush()
				return
			}
			batch = append(batch, l)
			if len(batch) >= batchSize {
				flush()
			}
		case <-t.C:
			flush()
		}
	}
}
