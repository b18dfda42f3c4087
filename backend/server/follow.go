package server

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"omniroute/backend/instances"
	"omniroute/backend/store"
)

// reconcileEvery is how often a shared-database instance reloads everything
// even without a notification: the safety net under LISTEN/NOTIFY.
const reconcileEvery = 15 * time.Second

// followTargets reload one in-memory view each from the database.
type followTargets struct {
	connections func() error // the routing registry and the combos
	keys        func() error // the client keyring
	settings    func() error // general and resilience settings
	cooldowns   func() error // connection cooldowns and terminal states
	breakers    func() error // provider circuit breaker transitions
	pins        func() error // session affinity pins
	modelLocks  func() error // model lockouts, model cooldowns and their clears
	prefills    func() error // what was learned of each model's assistant prefill
	people      func()       // forget the cached people checks (users, sessions, tokens)
}

// follower keeps this instance's in-memory views in step with the writes of
// every other instance sharing the PostgreSQL database: the store's change
// feed says which table changed (within milliseconds), a periodic reconcile
// catches anything missed, and a burst of changes collapses into one reload
// per view. A reload that fails leaves the last known state serving.
type follower struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// startFollower also writes this instance's heartbeat (beat) every
// instances.Interval.
func startFollower(st *store.Store, log *slog.Logger, beat func() error, t followTargets) *follower {
	ctx, cancel := context.WithCancel(context.Background())
	f := &follower{cancel: cancel, done: make(chan struct{})}
	var mu sync.Mutex
	dirty := map[string]bool{}
	wake := make(chan struct{}, 1)
	mark := func(table string) {
		mu.Lock()
		dirty[table] = true
		mu.Unlock()
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		ticker := time.NewTicker(instances.Interval)
		defer ticker.Stop()
		failing := false
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
			err := beat()
			if err != nil && !failing {
				log.Warn("shared database: heartbeat failed", slog.String("error", err.Error()))
			}
			failing = err != nil
		}
	}()
	go func() {
		defer wg.Done()
		st.WatchChanges(ctx, mark, func(err error) {
			log.Warn("shared database: change listener interrupted, reconnecting", slog.String("error", err.Error()))
		})
	}()
	go func() {
		defer wg.Done()
		ticker := time.NewTicker(reconcileEvery)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
				mark("")
				continue
			case <-wake:
			}
			mu.Lock()
			d := dirty
			dirty = map[string]bool{}
			mu.Unlock()
			apply(d, t, log)
		}
	}()
	go func() {
		wg.Wait()
		close(f.done)
	}()
	return f
}

// apply reloads the views whose tables changed ("" marks them all).
func apply(dirty map[string]bool, t followTargets, log *slog.Logger) {
	all := dirty[""]
	if (all || dirty[store.TopicPeople]) && t.people != nil {
		t.people() // first: a revocation must not wait for the other views' reloads
	}
	run := func(name string, reload func() error) {
		if err := reload(); err != nil {
			log.Warn("shared database: reload failed; serving the last known state",
				slog.String("view", name), slog.String("error", err.Error()))
		}
	}
	if all || dirty[store.TableConnections] || dirty[store.TableCombos] {
		run("connections", t.connections)
	}
	if all || dirty[store.TableAPIKeys] {
		run("keys", t.keys)
	}
	if all || dirty[store.TableSettings] {
		run("settings", t.settings)
	}
	if all || dirty[store.TopicCooldowns] {
		run("cooldowns", t.cooldowns)
	}
	if all || dirty[store.TableBreakers] {
		run("breakers", t.breakers)
	}
	if all || dirty[store.TablePins] {
		run("pins", t.pins)
	}
	if all || dirty[store.TableModelLocks] {
		run("model locks", t.modelLocks)
	}
	if t.prefills != nil && (all || dirty[store.TableModelPrefill]) {
		run("prefills", t.prefills)
	}
}

// stop ends the follower and waits for its goroutines (nil-safe: SQLite
// instances have none).
func (f *follower) stop() {
	if f == nil {
		return
	}
	f.cancel()
	<-f.done
}
