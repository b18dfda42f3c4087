package server

import (
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

type countingCheckpoint struct {
	n   atomic.Int32
	err error
}

func (c *countingCheckpoint) Checkpoint() error {
	c.n.Add(1)
	return c.err
}

// The checkpointer runs once per interval — not before the first one ends —
// reports failures, and stop ends it.
func TestCheckpointerRunsEveryInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := &countingCheckpoint{err: errors.New("busy")}
		var failures atomic.Int32
		c := startCheckpointer(target, DefaultCheckpointEvery, func(error) { failures.Add(1) })
		time.Sleep(DefaultCheckpointEvery - time.Nanosecond)
		synctest.Wait()
		if n := target.n.Load(); n != 0 {
			t.Fatalf("%d checkpoints before the first interval ended", n)
		}
		time.Sleep(time.Nanosecond + 2*DefaultCheckpointEvery)
		synctest.Wait()
		if n, f := target.n.Load(), failures.Load(); n != 3 || f != 3 {
			t.Fatalf("after 3 intervals: %d checkpoints, %d failures reported; want 3 and 3", n, f)
		}
		c.stop()
		c.stop() // idempotent
		time.Sleep(10 * DefaultCheckpointEvery)
		if n := target.n.Load(); n != 3 {
			t.Fatalf("%d checkpoints after stop", n)
		}
	})
	var none *periodic
	none.stop() // nil-safe: no checkpointer on PostgreSQL
}
