package reqlog

import (
	"errors"
	"sync"
	"testing"
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
