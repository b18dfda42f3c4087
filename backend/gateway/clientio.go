package gateway

import (
	"errors"
	"net/http"
	"time"

	"omniroute/backend/config"
	"omniroute/backend/httpx"
)

// The client side of a request is as untrusted as the upstream: these helpers
// bound how long a client may take to send its body and to read each write,
// and how much body memory all requests hold together.

// bodyBudgetWait is how long a body the budget has no room for waits for the
// bodies ahead of it to be released before it is refused 503.
const bodyBudgetWait = 5 * time.Second

// readBody reads the client body under the body deadline, the size limit and
// the shared byte budget. The bytes stay reserved until req.releaseBody.
func (g *Gateway) readBody(w http.ResponseWriter, r *http.Request, req *request, set *config.General) ([]byte, error) {
	timeout := time.Duration(set.BodyReadTimeoutMs) * time.Millisecond
	body, held, err := httpx.ReadBodyHeld(w, r, httpx.BodyLimits{Max: set.MaxBodyBytes,
		Timeout: timeout, Budget: g.budget, Wait: min(bodyBudgetWait, timeout)})
	req.held = held
	return body, err
}

// writeDeadline is how long one write to the client may block.
func (g *Gateway) writeDeadline() time.Time {
	return time.Now().Add(time.Duration(g.general().ClientWriteTimeoutMs) * time.Millisecond)
}

// armWrite bounds the next write to the client (an answer or an error).
func (g *Gateway) armWrite(w http.ResponseWriter) {
	_ = httpx.SetWriteDeadline(w, g.writeDeadline())
}

// send writes p to the client and flushes it within the client write timeout.
// An error means the client stopped reading (or left): the caller ends the
// attempt, which cancels the upstream call and frees the in-flight slot.
func (a *attemptCtx) send(rc *http.ResponseController, p []byte) error {
	if rc == nil {
		rc = http.NewResponseController(a.w)
	}
	_ = rc.SetWriteDeadline(a.g.writeDeadline())
	if len(p) > 0 {
		if _, err := a.w.Write(p); err != nil {
			return err
		}
	}
	if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err // a writer that cannot flush (an in-process host) is not a gone client
	}
	return nil
}
