package reqlog

import (
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"omniroute/backend/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type sink struct {
	mu      sync.Mutex
	batches [][]store.RequestLog
	pruned  int
	fail    bool
}

func (s *sink) InsertRequestLogs(r []store.RequestLog) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.batches = append(s.batches, append([]store.RequestLog(nil), r...))
	if s.fail {
		return errors.New("disk full")
	}
	return nil
}

func (s *sink) PruneRequestLogs(int) error { s.mu.Lock(); s.pruned++; s.mu.Unlock(); return nil }

func TestBatchesAndFlushOnClose(t *testing.T) {
	s := &sink{}
	w := New(s, time.Hour, func() int { return 100 }, nil)
	for i := 0; i < batchSize*2+3; i++ {
		w.Log(store.RequestLog{RequestID: "r"})
	}
	w.Close()
	w.Close()
	total := 0
	for _, b := range s.batches {
		if len(b) > batchSize {
			t.Fatalf("batch of %d exceeds %d", len(b), batchSize)
		}
		total += len(b)
	}
	if total != batchSize*2+3 {
		t.Fatalf("wrote %d rows", total)
	}
}

func TestErrorsAreReportedNotFatal(t *testing.T) {
	s := &sink{fail: true}
	var errs int
	var mu sync.Mutex
	w := New(s, time.Hour, func() int { return 100 }, func(error) { mu.Lock(); errs++; mu.Unlock() })
	w.Log(store.RequestLog{})
	w.Close()
	if errs != 1 {
		t.Fatalf("errors reported %d", errs)
	}
}

func (s *sink) rows() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, b := range s.batches {
		n += len(b)
	}
	return n
}

// TestFlushTriggers: a full batch is written at once, without waiting for the
// ticker; fewer rows wait for the next tick (interval −1 ms: not yet; +1 ms:
// written); rows logged after Close are dropped and counted.
func TestFlushTriggers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &sink{}
		w := New(s, time.Second, func() int { return 100 }, nil)
		for range batchSize {
			w.Log(store.RequestLog{RequestID: "r"})
		}
		synctest.Wait()
		if n := s.rows(); n != batchSize {
			t.Fatalf("a full batch: %d rows written, want %d at once", n, batchSize)
		}
		for range 3 {
			w.Log(store.RequestLog{RequestID: "r"})
		}
		time.Sleep(time.Second - time.Millisecond) // the bubble's clock: no real wait
		synctest.Wait()
		if n := s.rows(); n != batchSize {
			t.Fatalf("before the tick: %d rows written, want %d", n, batchSize)
		}
		time.Sleep(2 * time.Millisecond)
		synctest.Wait()
		if n := s.rows(); n != batchSize+3 {
			t.Fatalf("after the tick: %d rows written, want %d", n, batchSize+3)
		}
		w.Close()
		w.Log(store.RequestLog{RequestID: "late"})
		if w.Dropped() != 1 || s.rows() != batchSize+3 {
			t.Fatalf("after Close: dropped %d, rows %d", w.Dropped(), s.rows())
		}
	})
}

// blockingSink holds every insert until released, like a stalled disk.
type blockingSink struct {
	sink
	release chan struct{}
}

func (b *blockingSink) InsertRequestLogs(r []store.RequestLog) error {
	<-b.release
	return b.sink.InsertRequestLogs(r)
}

// TestQueueBoundDropsWhileTheDiskStalls: while the store blocks, at most
// maxQueued rows wait; the rest are dropped and counted, and Log never blocks.
func TestQueueBoundDropsWhileTheDiskStalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &blockingSink{release: make(chan struct{})}
		w := New(s, time.Hour, func() int { return 1 << 20 }, nil)
		for range batchSize {
			w.Log(store.RequestLog{})
		}
		synctest.Wait() // the writer took the first batch and blocks in the store
		for range maxQueued + 5 {
			w.Log(store.RequestLog{})
		}
		if w.Dropped() != 5 {
			t.Fatalf("dropped %d, want 5", w.Dropped())
		}
		close(s.release)
		w.Close()
		if n := s.rows(); n != batchSize+maxQueued {
			t.Fatalf("%d rows written, want %d", n, batchSize+maxQueued)
		}
	})
}

// retainingSink applies the retention in its batches: it records the keep
// each batch came with.
type retainingSink struct {
	sink
	keeps []int
	plain int // batches that came without it
}

func (r *retainingSink) InsertRequestLogsRetaining(rows []store.RequestLog, keep int) error {
	r.mu.Lock()
	r.keeps = append(r.keeps, keep)
	r.mu.Unlock()
	return r.sink.InsertRequestLogs(rows)
}

func (r *retainingSink) InsertRequestLogs(rows []store.RequestLog) error {
	r.mu.Lock()
	r.plain++
	r.mu.Unlock()
	return r.sink.InsertRequestLogs(rows)
}

// TestRetainingSinkGetsKeepWithEveryBatch: a sink that applies the retention
// in its batches gets the current keep with each one (and no plain insert);
// every row is written by Close, and PruneRequestLogs still runs every
// 1,000 rows.
func TestRetainingSinkGetsKeepWithEveryBatch(t *testing.T) {
	s := &retainingSink{}
	keep := 123
	w := New(s, time.Hour, func() int { return keep }, nil)
	const n = 4*batchSize + 5 // over 1,000: one prune
	for range n {
		w.Log(store.RequestLog{RequestID: "r"})
	}
	w.Close()
	if got := s.rows(); got != n {
		t.Fatalf("%d rows written by Close, want %d", got, n)
	}
	if s.plain != 0 || len(s.keeps) < 5 || s.pruned != 1 {
		t.Fatalf("%d plain batches, %d retaining ones, %d prunes; want 0, at least 5, 1", s.plain, len(s.keeps), s.pruned)
	}
	for i, k := range s.keeps {
		if k != keep {
			t.Fatalf("batch %d came with keep %d, want %d", i, k, keep)
		}
	}
}
