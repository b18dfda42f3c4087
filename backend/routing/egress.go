package routing

import (
	"sync"

	"omniroute/backend/resilience/cooldown"
	"omniroute/backend/resilience/verdict"
)

// egressBook remembers the last egress IP each connection's requests left
// from (best effort: the local address of the TCP connection the transport
// used). It is memory only: cheap to lose, refreshed by the next request.
type egressBook struct {
	mu   sync.Mutex
	byID map[string]string
}

// RecordEgress notes the local IP a connection's last request left from.
func (e *Engine) RecordEgress(connectionID, ip string) {
	if ip == "" {
		return
	}
	e.egress.mu.Lock()
	if e.egress.byID == nil {
		e.egress.byID = map[string]string{}
	}
	e.egress.byID[connectionID] = ip
	e.egress.mu.Unlock()
}

// Egress returns a connection's last known egress IP ("" when unknown).
func (e *Engine) Egress(connectionID string) string {
	e.egress.mu.Lock()
	defer e.egress.mu.Unlock()
	return e.egress.byID[connectionID]
}

// egressBucketed reports whether v is an IP-bucketed limit on an upstream
// flagged so (opencode's free tier): a 429 classified as quota or rate limit.
func egressBucketed(c *Conn, v verdict.Verdict) bool {
	return c.Provider.EgressBucketed && v.Status == 429 && !c.overrides.DisableCooling &&
		(v.Kind == verdict.KindQuota || v.Kind == verdict.KindRateLimit)
}

// coolEgressSiblings is the egress-bucket lock (#10880): the failed
// connection has just been cooled; every other flagged connection whose last
// known egress IP is the failed one's leaves routing until the same instant,
// so rotation does not burn a certain-to-fail call per sibling. Best effort
// (an unknown IP locks no sibling), never terminal, never shortening a longer
// cooldown or touching a terminal state, skipped for connections that opted
// out with rateLimitOverrides.disableCooling. It returns the siblings cooled.
func (e *Engine) coolEgressSiblings(failed *Conn, v verdict.Verdict) []string {
	ip := e.Egress(failed.ID)
	until := failed.Cooldown().RateLimitedUntil
	now := e.clk.Now()
	if ip == "" || !until.After(now) {
		return nil
	}
	var cooled []string
	for _, c := range e.reg.All() {
		if c == failed || !c.Provider.EgressBucketed || c.overrides.DisableCooling || e.Egress(c.ID) != ip {
			continue
		}
		c.mu.Lock()
		st := c.cd
		if cooldown.TerminalOf(st) != "" || !st.RateLimitedUntil.Before(until) {
			c.mu.Unlock()
			continue
		}
		st.RateLimitedUntil = until
		st.TestStatus = cooldown.StatusUnavailable
		st.LastError = "egress IP shared with a rate-limited connection (" + v.Message + ")"
		st.LastErrorType = string(v.Kind)
		st.ErrorCode = CodeEgressBucket
		st.LastErrorAt = now
		c.cd = st
		c.cdSeq++
		c.mu.Unlock()
		if err := e.saveCooldown(c, st); err != nil && e.onError != nil {
			e.onError(err)
		}
		if e.observer != nil {
			e.observer.ConnectionStateChanged(c, st)
		}
		cooled = append(cooled, c.ID)
	}
	return cooled
}

// CodeEgressBucket is the error code of a connection cooled because a sibling
// sharing its egress IP hit the upstream's per-IP limit.
const CodeEgressBucket = "EGRESS_BUCKET_COOLDOWN"
