package server

import (
	"testing"

	"omniroute/backend/reqlog"
	"omniroute/backend/store"
)

// countingSink counts how batches reach it.
type countingSink struct{ plain, retaining, keep int }

func (c *countingSink) InsertRequestLogs([]store.RequestLog) error { c.plain++; return nil }
func (c *countingSink) PruneRequestLogs(int) error                 { return nil }

// retainingCounter is a countingSink that applies the retention itself.
type retainingCounter struct{ countingSink }

func (r *retainingCounter) InsertRequestLogsRetaining(_ []store.RequestLog, keep int) error {
	r.retaining, r.keep = r.retaining+1, keep
	return nil
}

// TestBodySweeperForwardsTheRetention: the request-log writer sees the
// sweeper as a sink that retains; it hands the batch and keep on to a sink
// that retains (the SQLite store) and inserts plainly into one that does not
// (PostgreSQL), whose PruneRequestLogs keeps the retention.
func TestBodySweeperForwardsTheRetention(t *testing.T) {
	var _ reqlog.RetainingSink = bodySweeper{}
	r := &retainingCounter{}
	if err := (bodySweeper{Sink: r}).InsertRequestLogsRetaining(make([]store.RequestLog, 3), 500); err != nil {
		t.Fatal(err)
	}
	if r.retaining != 1 || r.keep != 500 || r.plain != 0 {
		t.Fatalf("retaining sink: %d retaining batches (keep %d), %d plain; want 1 (500), 0", r.retaining, r.keep, r.plain)
	}
	p := &countingSink{}
	if err := (bodySweeper{Sink: p}).InsertRequestLogsRetaining(make([]store.RequestLog, 3), 500); err != nil {
		t.Fatal(err)
	}
	if p.plain != 1 {
		t.Fatalf("plain sink: %d plain batches, want 1", p.plain)
	}
}
