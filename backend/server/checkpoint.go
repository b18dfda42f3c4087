package server

import (
	"sync"
	"time"
)

// DefaultCheckpointEvery is how often the SQLite WAL is copied into the
// database file while the gateway runs. SQLite's own automatic checkpoint
// waits for 1,000 pages (4 MiB) of WAL, which a quiet gateway may not write
// for days: meanwhile omniroute.db alone (a single-file backup, a sync tool)
// is missing every write since, or, on a new install, every table. With a
// periodic checkpoint a copy of the main file lags by at most this much; a
// clean shutdown checkpoints too (store.Close).
const DefaultCheckpointEvery = 5 * time.Minute

// checkpointTarget is what the checkpointer drives (the store).
type checkpointTarget interface{ Checkpoint() error }

// checkpointer runs a checkpoint every interval until stopped.
type checkpointer struct {
	done chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

func startCheckpointer(t checkpointTarget, every time.Duration, onError func(error)) *checkpointer {
	c := &checkpointer{done: make(chan struct{})}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-c.done:
				return
			case <-tick.C:
				if err := t.Checkpoint(); err != nil {
					onError(err)
				}
			}
		}
	}()
	return c
}

// stop ends the loop and waits for a running checkpoint; nil-safe.
func (c *checkpointer) stop() {
	if c == nil {
		return
	}
	c.once.Do(func() { close(c.done) })
	c.wg.Wait()
}
