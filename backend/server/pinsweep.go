package server

import (
	"sync"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/resilience/affinity"
)

// pinSweepEvery is how often expired session pins are deleted while the
// gateway runs (the database's table and this instance's memory). Pins
// otherwise went only at startup (store.LivePins), so a long-running desktop
// app or team server kept every session it ever saw. Each instance of a team
// server sweeps: the statement is idempotent.
const pinSweepEvery = time.Minute

// pinSweepStore is what the sweep deletes from (the store).
type pinSweepStore interface {
	DeleteExpiredPins(nowMs int64) (int64, error)
}

// pinSweeper is one sweep at the injected clock's now: this instance's
// expired pins (so the occupancy that spreads new sessions counts only live
// ones), then the database's. A team server skips the database while it is
// known unreachable (db; nil on SQLite): the next sweep catches up.
func pinSweeper(st pinSweepStore, pins *affinity.Pins, clk clock.Clock, db *dbHealth) func() error {
	return func() error {
		pins.Sweep()
		if !db.usable() {
			return nil
		}
		_, err := st.DeleteExpiredPins(clk.Now().UnixMilli())
		db.note(err)
		return err
	}
}

// periodic runs a maintenance step every interval until stopped.
type periodic struct {
	done chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

// Ticks makes the ticks of a periodic step every interval, and stop
// releases them (Options.Ticks).
type Ticks func(every time.Duration) (ticks <-chan time.Time, stop func())

// tickerTicks is Ticks on a time.Ticker.
func tickerTicks(every time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(every)
	return t.C, t.Stop
}

// startPeriodic runs step at each of ticks' ticks every interval (nil
// ticks: a time.Ticker's).
func startPeriodic(ticks Ticks, every time.Duration, step func() error, onError func(error)) *periodic {
	if ticks == nil {
		ticks = tickerTicks
	}
	p := &periodic{done: make(chan struct{})}
	tick, stopTicks := ticks(every)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer stopTicks()
		for {
			select {
			case <-p.done:
				return
			case <-tick:
				if err := step(); err != nil {
					onError(err)
				}
			}
		}
	}()
	return p
}

// stop ends the loop and waits for a running step; nil-safe.
func (p *periodic) stop() {
	if p == nil {
		return
	}
	p.once.Do(func() { close(p.done) })
	p.wg.Wait()
}
