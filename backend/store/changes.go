package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// ChangeChannel is the PostgreSQL notification channel of the change feed:
// the triggers of the PostgreSQL migrations notify it with the changed table's
// name on every write that alters what an instance serves from memory.
const ChangeChannel = "omniroute_changes"

// Topics the change feed names: mostly the changed table, and "cooldowns" for
// a connection's resilience columns (a request-path write, told apart from a
// configuration change of the same table).
const (
	TableConnections  = "provider_connections"
	TableAPIKeys      = "api_keys"
	TableCombos       = "combos"
	TableSettings     = "key_value"
	TableBreakers     = "domain_circuit_breakers"
	TablePins         = "session_account_affinity"
	TableModelLocks   = "model_locks"
	TableModelPrefill = "model_prefill"
	TopicCooldowns    = "cooldowns"
	// TopicPeople: users, sessions or management tokens changed in a way
	// that alters who may do what (not sign-ins or last-use stamps).
	TopicPeople = "people"
)

// Backoff bounds of the change listener's reconnects.
const (
	watchMinBackoff = 100 * time.Millisecond
	watchMaxBackoff = 5 * time.Second
)

// WatchChanges follows the writes of every instance sharing this database
// until ctx ends: it calls onChange with the topic of each notification, and
// with "" (anything may have changed) after every (re)connect, since
// notifications sent while it was not listening are lost. A lost connection
// is retried with backoff; onError hears the first failure of each outage,
// not every retry. With SQLite (one instance per database) it returns at once.
func (s *Store) WatchChanges(ctx context.Context, onChange func(table string), onError func(error)) {
	if s.dialect != Postgres {
		return
	}
	backoff := watchMinBackoff
	reported := false
	for {
		listened, err := s.listen(ctx, onChange)
		if ctx.Err() != nil {
			return
		}
		if listened {
			backoff, reported = watchMinBackoff, false
		}
		if onError != nil && err != nil && !reported {
			onError(err)
			reported = true
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(backoff*2, watchMaxBackoff)
	}
}

// listen holds one LISTEN connection until it fails or ctx ends; listened
// reports whether it got as far as listening.
func (s *Store) listen(ctx context.Context, onChange func(string)) (listened bool, err error) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	conn, err := pgx.Connect(cctx, s.dsn)
	cancel()
	if err != nil {
		return false, err
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(closeCtx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+ChangeChannel); err != nil {
		return false, err
	}
	onChange("")
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, err
		}
		onChange(n.Payload)
	}
}
