package httpx

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"omniroute/backend/errs"
)

// Budget bounds the bytes of request bodies held in memory at once, across
// every request: a burst of large bodies is served a few at a time or refused
// (503, retry shortly) instead of growing the heap by their sum.
//
// A read the budget cannot grow may wait for room, holding what it has, if
// the whole bodies of all waiting reads fit the budget together: once every
// other holder is gone, each waiter fits, so waiters never starve one another.
// Any other refused read gives its bytes back at once.
type Budget struct {
	used    atomic.Int64
	limit   func() int64
	waiting atomic.Int64 // the whole sizes of the reads waiting for room
	mu      sync.Mutex
	freed   chan struct{} // closed and replaced when bytes come back while someone waits
}

// NewBudget returns a budget whose size limit() is read on each use (a
// settings change applies to the next body).
func NewBudget(limit func() int64) *Budget { return &Budget{limit: limit} }

// take reserves n bytes if they fit.
func (b *Budget) take(n int64) bool {
	if b == nil || n <= 0 {
		return true
	}
	if b.used.Add(n) > b.limit() {
		b.used.Add(-n)
		return false
	}
	return true
}

func (b *Budget) give(n int64) {
	if b == nil || n <= 0 {
		return
	}
	b.used.Add(-n)
	if b.waiting.Load() > 0 { // after the Add: a waiter that registered later sees the room itself
		b.mu.Lock()
		if b.freed != nil {
			close(b.freed)
			b.freed = nil
		}
		b.mu.Unlock()
	}
}

// wait grows a read holding have bytes to its whole size total, waiting for
// room until stop is closed or timeout fires. It reports false at once when
// the waiting reads would no longer fit the budget together with this one.
// The read keeps its have bytes either way.
func (b *Budget) wait(have, total int64, stop <-chan struct{}, timeout <-chan time.Time) bool {
	b.mu.Lock()
	if b.waiting.Load()+total > b.limit() {
		b.mu.Unlock()
		return false
	}
	b.waiting.Add(total)
	b.mu.Unlock()
	defer b.waiting.Add(-total)
	for {
		b.mu.Lock()
		if b.freed == nil {
			b.freed = make(chan struct{})
		}
		freed := b.freed
		b.mu.Unlock()
		if b.take(total - have) { // after taking freed: a give before this take is seen by it, a later one closes freed
			return true
		}
		select {
		case <-freed:
		case <-stop:
			return false
		case <-timeout:
			return false
		}
	}
}

// Used reports the bytes reserved now.
func (b *Budget) Used() int64 { return b.used.Load() }

// chunk is the growth step of a body whose length the client did not declare.
const chunk = 64 << 10

// BodyLimits bound one request body read.
type BodyLimits struct {
	Max     int64         // larger bodies are a 413
	Timeout time.Duration // the whole body must arrive within it (0: no deadline), else 408
	Budget  *Budget       // shared in-flight byte budget (nil: none)
	// Wait is how long a read the budget refuses may wait for room for its
	// whole body (0: refused at once). It waits holding nothing, so reads
	// that each hold part of the budget cannot starve one another.
	Wait time.Duration
}

// ReadBodyLimited reads the request body within l: at most Max bytes, before
// Timeout, with its bytes reserved in Budget. release gives the bytes back
// and must be called once the body is no longer used (also after an error:
// it is never nil). On an error the connection is marked to close without
// reading the rest of the body (see Abandon).
func ReadBodyLimited(w http.ResponseWriter, r *http.Request, l BodyLimits) (body []byte, release func(), err error) {
	body, held, err := ReadBodyHeld(w, r, l)
	return body, held.Release, err
}

// Held is the part of a Budget a body read reserved. The zero Held holds nothing.
type Held struct {
	budget *Budget
	n      int64
}

// Release gives the bytes back; later calls do nothing.
func (h *Held) Release() {
	h.budget.give(h.n)
	h.n = 0
}

// ReadBodyHeld is ReadBodyLimited returning the reservation as a value (no
// closure to allocate on the request path); call its Release once the body
// is no longer used, also after an error.
func ReadBodyHeld(w http.ResponseWriter, r *http.Request, l BodyLimits) (body []byte, held Held, err error) {
	held.budget = l.Budget
	fail := func(e error) ([]byte, Held, error) {
		Abandon(w)
		held.Release()
		return nil, Held{}, e
	}
	if r.ContentLength > l.Max {
		return fail(errs.New(errs.TooLarge, "REQUEST_TOO_LARGE", "request body is %d bytes; the limit is %d", r.ContentLength, l.Max))
	}
	rc := http.NewResponseController(w)
	if l.Timeout > 0 {
		_ = rc.SetReadDeadline(time.Now().Add(l.Timeout))
	}
	grow := func(n int64) bool {
		if !l.Budget.take(n) {
			return false
		}
		held.n += n
		return true
	}
	// waitForRest handles a refused growth: the read waits, holding what it
	// has, for room for its whole body (see Budget). An undeclared (chunked)
	// body has no whole size to wait for: it is refused at once.
	waitForRest := func(total int64) bool {
		if l.Wait <= 0 || r.ContentLength < 0 {
			return false
		}
		timer := time.NewTimer(l.Wait)
		defer timer.Stop()
		if !l.Budget.wait(held.n, total, r.Context().Done(), timer.C) {
			return false
		}
		held.n = total
		return true
	}
	saturated := func() error {
		return errs.New(errs.Unavailable, "GATEWAY_SATURATED",
			"the gateway holds as many request bodies in memory as its budget allows (bodyBudgetBytes); retry shortly").WithRetryAfter(time.Second)
	}
	// A declared length is at most Max (checked above) and the server's body
	// reader stops there; only an undeclared (chunked) body needs the cap.
	src := r.Body
	ceiling := r.ContentLength
	if r.ContentLength < 0 {
		src = http.MaxBytesReader(nil, r.Body, l.Max)
		ceiling = l.Max + 1 // room for MaxBytesReader to notice an undeclared body past Max
	}
	// refuse answers an over-budget body: the rest is read and dropped
	// (memory-free, still under the deadline and the size limit), so the
	// client reads a clean 503 instead of a reset while it is still sending.
	// Its bytes go back first: reads refused while they drain must not keep
	// the budget from the reads still growing.
	refuse := func() ([]byte, Held, error) {
		held.Release()
		if _, derr := io.Copy(io.Discard, src); derr != nil {
			return fail(saturated())
		}
		if l.Timeout > 0 {
			_ = rc.SetReadDeadline(time.Time{})
		}
		return nil, Held{}, saturated()
	}
	// The buffer grows as bytes arrive (64 KiB, then doubling, up to the
	// declared length), and each growth is reserved first: a slow sender holds
	// only what it has sent, never its declared length.
	var buf []byte
	for {
		if len(buf) == cap(buf) {
			step := min(max(int64(cap(buf)), chunk), ceiling-int64(cap(buf)))
			if step <= 0 {
				break // the declared length is in: the body is complete
			}
			size := int64(cap(buf)) + step
			if !grow(step) {
				if !waitForRest(ceiling) {
					return refuse()
				}
				size = ceiling // all of it is reserved now: no further growth to reserve
			}
			nb := make([]byte, len(buf), size)
			copy(nb, buf)
			buf = nb
		}
		var n int
		n, err = src.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			break
		}
	}
	if err == nil && r.ContentLength >= 0 && int64(len(buf)) != r.ContentLength {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		var mbe *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.As(err, &mbe):
			return fail(errs.New(errs.TooLarge, "REQUEST_TOO_LARGE", "request body exceeds the limit of %d bytes", l.Max))
		case errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
			return fail(errs.New(errs.ClientTimeout, "REQUEST_TIMEOUT", "the request body did not arrive within %v", l.Timeout))
		}
		return fail(errs.New(errs.Invalid, "REQUEST_BODY_UNREADABLE", "could not read the request body"))
	}
	if l.Timeout > 0 {
		_ = rc.SetReadDeadline(time.Time{})
	}
	// Read to its end: closing it now tells the server nothing is left to
	// drain once the handler returns.
	_ = r.Body.Close()
	return buf, held, nil
}

// abandonLinger is how long a refused request's connection may still deliver
// the rest of its body before it is closed.
const abandonLinger = 500 * time.Millisecond

// Abandon makes the server close the connection after this response, reading
// (and dropping) what is left of the request body for at most abandonLinger:
// a client still sending a small body reads the answer instead of a reset,
// and a client that is refused (bad credentials, too large, too slow) cannot
// hold the connection by trickling its body. (net/http drains at most 256 KiB
// after the handler; a larger declared rest is not drained at all.)
func Abandon(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(abandonLinger))
}

// SetWriteDeadline is http.NewResponseController(w).SetWriteDeadline(t)
// without allocating the controller: it finds the first writer in the Unwrap
// chain that sets write deadlines, as the controller does. It returns
// http.ErrNotSupported when none does.
func SetWriteDeadline(w http.ResponseWriter, t time.Time) error {
	for {
		switch v := w.(type) {
		case interface{ SetWriteDeadline(time.Time) error }:
			return v.SetWriteDeadline(t)
		case interface{ Unwrap() http.ResponseWriter }:
			w = v.Unwrap()
		default:
			return http.ErrNotSupported
		}
	}
}
