package server

import (
	"omniroute/backend/capture"
	"omniroute/backend/reqlog"
	"omniroute/backend/store"
)

// bodySweeper drops expired captured bodies whenever the request log is
// pruned (every 1,000 rows written), so they go even while nobody reads them.
type bodySweeper struct {
	reqlog.Sink
	bodies *capture.Service
}

func (b bodySweeper) PruneRequestLogs(keep int) error {
	err := b.Sink.PruneRequestLogs(keep)
	if serr := b.bodies.Sweep(); err == nil {
		err = serr
	}
	return err
}

// InsertRequestLogsRetaining hands the retention to the sink when it applies
// it in the batch's transaction (SQLite); otherwise the batch is inserted and
// PruneRequestLogs keeps the retention.
func (b bodySweeper) InsertRequestLogsRetaining(rows []store.RequestLog, keep int) error {
	if r, ok := b.Sink.(reqlog.RetainingSink); ok {
		return r.InsertRequestLogsRetaining(rows, keep)
	}
	return b.Sink.InsertRequestLogs(rows)
}
