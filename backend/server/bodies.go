package server

import (
	"omniroute/backend/capture"
	"omniroute/backend/reqlog"
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
