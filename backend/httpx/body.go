package httpx

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"omniroute/backend/errs"
)

// Budget bounds the bytes of request bodies held in memory at once, across
// every request: a burst of large bodies is refused (503, retry shortly)
// instead of growing the heap by their sum. It never waits, so a refused
// request holds nothing.
type Budget struct {
	used  atomic.Int64
	limit func() int64
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
	if b != nil && n > 0 {
		b.used.Add(-n)
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
	saturated := func() error {
		return errs.New(errs.Unavailable, "GATEWAY_SATURATED",
			"the gateway holds as many request bodies in memory as its budget allows (bodyBudgetBytes); retry shortly").WithRetryAfter(time.Second)
	}
	// The buffer grows as bytes arrive (64 KiB, then doubling, up to the
	// declared length), and each growth is reserved first: a slow sender holds
	// only what it has sent, never its declared length.
	// A declared length is at most Max (checked above) and the server's body
	// reader stops there; only an undeclared (chunked) body needs the cap.
	src := r.Body
	ceiling := r.ContentLength
	if r.ContentLength < 0 {
		src = http.MaxBytesReader(nil, r.Body, l.Max)
		ceiling = l.Max + 1 // room for MaxBytesReader to notice an undeclared body past Max
	}
	var buf []byte
	for {
		if len(buf) == cap(buf) {
			step := min(max(int64(cap(buf)), chunk), ceiling-int64(cap(buf)))
			if step <= 0 {
				break // the declared length is in: the body is complete
			}
			if !grow(step) {
				// Over budget: the rest is read and dropped (memory-free, still
				// under the deadline and the size limit), so the client reads a
				// clean 503 instead of a reset while it is still sending.
				buf = nil
				if _, derr := io.Copy(io.Discard, src); derr != nil {
					return fail(saturated())
				}
				held.Release()
				if l.Timeout > 0 {
					_ = rc.SetReadDeadline(time.Time{})
				}
				return nil, Held{}, saturated()
			}
			nb := make([]byte, len(buf), int64(cap(buf))+step)
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
