package server

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

// collect is a behindWriter whose writes append to a log (and may fail).
type collect struct {
	mu   sync.Mutex
	log  []string
	fail bool
	errs []error
}

func (c *collect) write(s string) func() error {
	return func() error {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.fail {
			return errors.New("database unreachable")
		}
		c.log = append(c.log, s)
		return nil
	}
}

// newIdleWriter is a behindWriter without its goroutine: the test flushes.
func newIdleWriter(c *collect) *behindWriter {
	return &behindWriter{onError: func(err error) { c.errs = append(c.errs, err) }, pending: map[string]func() error{},
		wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
}

// TestBehindWriterOrderAndReplace: writes run in the order their keys first
// arrived; a newer write under a pending key replaces the older one in place.
func TestBehindWriterOrderAndReplace(t *testing.T) {
	c := &collect{}
	w := newIdleWriter(c)
	w.put("cooldown|c1", c.write("c1=1"))
	w.put("event|1", c.write("e1"))
	w.put("cooldown|c1", c.write("c1=2"))
	w.put("breaker|p", c.write("p=OPEN"))
	if !w.flush() {
		t.Fatal("flush failed")
	}
	if got := strings.Join(c.log, ","); got != "c1=2,e1,p=OPEN" {
		t.Fatalf("writes %s, want c1=2,e1,p=OPEN", got)
	}
}

// TestBehindWriterKeepsFailedWrites: when the database is away the first
// failing write and everything after it wait, in order, and all land once it
// answers; a write replaced meanwhile lands in its newest form.
func TestBehindWriterKeepsFailedWrites(t *testing.T) {
	c := &collect{fail: true}
	w := newIdleWriter(c)
	w.put("cooldown|c1", c.write("c1=1"))
	w.put("event|1", c.write("e1"))
	if w.flush() {
		t.Fatal("flush succeeded against a failing database")
	}
	if len(c.errs) != 1 {
		t.Fatalf("errors reported %d, want 1 (the first failure stops the round)", len(c.errs))
	}
	w.put("cooldown|c1", c.write("c1=2"))
	c.fail = false
	if !w.flush() {
		t.Fatal("retry failed")
	}
	if got := strings.Join(c.log, ","); got != "c1=2,e1" {
		t.Fatalf("writes %s, want c1=2,e1", got)
	}
}

// TestBehindWriterBounded: past behindMax pending keys new ones are dropped
// and reported; a pending key can still be replaced.
func TestBehindWriterBounded(t *testing.T) {
	c := &collect{}
	w := newIdleWriter(c)
	for i := range behindMax {
		w.put("event|"+string(rune('a'+i%26))+strings.Repeat("x", i/26), c.write("e"))
	}
	if len(c.errs) != 0 {
		t.Fatalf("dropped before the bound: %v", c.errs)
	}
	w.put("event|overflow", c.write("over"))
	if len(c.errs) != 1 || !errors.Is(c.errs[0], errBehindFull) {
		t.Fatalf("overflow reported %v, want errBehindFull", c.errs)
	}
	w.put("event|a", c.write("replaced"))
	if len(c.errs) != 1 {
		t.Fatal("replacing a pending key was refused")
	}
}

// TestBehindWriterStopFlushes: stop writes what is pending before it returns.
func TestBehindWriterStopFlushes(t *testing.T) {
	c := &collect{}
	w := newBehindWriter(func(error) {})
	for i := range 20 {
		w.put("event|"+string(rune('a'+i)), c.write("e"))
	}
	w.stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.log) != 20 {
		t.Fatalf("%d of 20 writes landed by stop", len(c.log))
	}
}
