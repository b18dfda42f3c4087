package server

import (
	"log/slog"
	"sync"
	"time"

	"omniroute/backend/pricing"
)

// pricingFileEvery is how often the pricingFile setting's file is checked
// for a change (its modification time and size: one stat).
const pricingFileEvery = 2 * time.Second

// pricingWatch reloads the user's pricing file when it or the setting
// changes, until stopped. A bad version is logged once and leaves the
// prices as they were.
type pricingWatch struct {
	done chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

func startPricingWatch(l *pricing.FileLoader, path func() string, every time.Duration, log *slog.Logger) *pricingWatch {
	w := &pricingWatch{done: make(chan struct{})}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-tick.C:
				p := path()
				if changed, err := l.Poll(p); changed && err != nil {
					log.Warn("pricing file not taken: the prices before it stay", slog.String("error", err.Error()))
				} else if changed && p != "" {
					log.Info("pricing file loaded", slog.String("path", p))
				}
			}
		}
	}()
	return w
}

// stop ends the loop; nil-safe.
func (w *pricingWatch) stop() {
	if w == nil {
		return
	}
	w.once.Do(func() { close(w.done) })
	w.wg.Wait()
}
