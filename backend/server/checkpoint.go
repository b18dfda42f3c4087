package server

import "time"

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

// startCheckpointer runs t's checkpoint every interval until stopped.
func startCheckpointer(t checkpointTarget, every time.Duration, onError func(error)) *periodic {
	return startPeriodic(nil, every, t.Checkpoint, onError)
}
