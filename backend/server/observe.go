package server

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"omniroute/backend/api"
	"omniroute/backend/events"
	"omniroute/backend/gateway"
	"omniroute/backend/metrics"
	"omniroute/backend/resilience/breaker"
	"omniroute/backend/resilience/cooldown"
	"omniroute/backend/resilience/lockout"
	"omniroute/backend/routing"
	"omniroute/backend/store"
	"omniroute/backend/translate"
)

// publisher turns state changes into bus events for the dashboard and the tray,
// and records the transitions for the usage timeline.
type publisher struct {
	bus  *events.Bus
	now  func() time.Time
	hist *history
	// providerOf names a connection's provider row (its breaker key) for the
	// timeline ("" when the connection is gone).
	providerOf func(connectionID string) string
	// decidedHistory (a team server) records connection states in the
	// history only as the shared database decided them
	// (ConnectionStateDecided), not as each instance held them.
	decidedHistory bool
}

// stateEventsKept bounds the state_events table.
const stateEventsKept = 20_000

// history writes breaker transitions and connection cooldown changes to the
// state_events table, only when the state actually changes.
type history struct {
	st     stateWriter
	logErr func(error)
	mu     sync.Mutex
	last   map[string]string
}

func newHistory(st stateWriter, logErr func(error)) *history {
	return &history{st: st, logErr: logErr, last: map[string]string{}}
}

// record appends the event when its state differs from the entity's last one.
func (h *history) record(e store.StateEvent) {
	if h == nil {
		return
	}
	key := e.Kind + "|" + e.Provider + "|" + e.ConnectionID
	sig := e.State + "@" + strconv.FormatInt(e.Until, 10)
	h.mu.Lock()
	same := h.last[key] == sig
	h.last[key] = sig
	h.mu.Unlock()
	if same {
		return
	}
	if err := h.st.InsertStateEvent(e, stateEventsKept); err != nil {
		h.logErr(err)
	}
}

func (p publisher) breakerChanged(s breaker.Snapshot) {
	p.hist.record(store.StateEvent{At: p.now().UnixMilli(), Provider: s.Provider, Kind: "breaker", State: string(s.State),
		Detail: strconv.Itoa(s.Failures) + " failures"})
	p.bus.Publish("breaker", map[string]any{"provider": s.Provider, "state": s.State, "failures": s.Failures,
		"openCycles": s.OpenCycles, "retryAfterMs": s.RetryAfter.Milliseconds()})
}

// ConnectionStateChanged implements routing.Observer.
func (p publisher) ConnectionStateChanged(c *routing.Conn, st cooldown.State) {
	now := p.now()
	status, remaining := connStatus(st, now)
	if !p.decidedHistory {
		p.hist.record(cooldownEvent(c, st, status, now))
	}
	var until any
	if !st.RateLimitedUntil.IsZero() {
		until = st.RateLimitedUntil.UTC().Format(time.RFC3339Nano)
	}
	p.bus.Publish("connection", map[string]any{"id": c.ID, "provider": c.Provider.ID, "name": c.Name, "status": status,
		"rateLimitedUntil": until, "cooldownRemainingMs": remaining.Milliseconds(), "backoffLevel": st.BackoffLevel,
		"lastErrorType": st.LastErrorType, "errorCode": st.ErrorCode, "terminal": cooldown.TerminalOf(st)})
}

// ConnectionStateDecided implements routing.DecisionObserver: on a team
// server the history (the usage timeline every instance shows) records the
// states the database took, once for the team — not each instance's own
// view, which for a herd's loser is a cooldown the database refused.
func (p publisher) ConnectionStateDecided(c *routing.Conn, st cooldown.State) {
	if !p.decidedHistory {
		return
	}
	now := p.now()
	status, _ := connStatus(st, now)
	p.hist.record(cooldownEvent(c, st, status, now))
}

// connStatus names a connection state at now for the dashboard: healthy,
// cooling_down or terminal, with the time left.
func connStatus(st cooldown.State, now time.Time) (string, time.Duration) {
	if ok, reason, rem := cooldown.Eligible(st, now); !ok {
		if reason == cooldown.ReasonCooldown {
			return "cooling_down", rem
		}
		return "terminal", rem
	}
	return "healthy", 0
}

// cooldownEvent is the history row of a connection state.
func cooldownEvent(c *routing.Conn, st cooldown.State, status string, now time.Time) store.StateEvent {
	var untilMs int64
	if status == "cooling_down" {
		untilMs = st.RateLimitedUntil.UnixMilli()
	}
	return store.StateEvent{At: now.UnixMilli(), Provider: c.BreakerKey, ConnectionID: c.ID, Kind: "cooldown",
		State: status, Until: untilMs, Detail: strings.TrimSpace(st.LastErrorType + " " + st.ErrorCode)}
}

// requestLogs sends each request log row to the writer, the metrics and the bus.
type requestLogs struct {
	w interface{ Log(store.RequestLog) }
	p publisher
	m *metrics.Metrics
	// lines is the one-line-per-request log (nil: off).
	lines *requestLines
}

func (r requestLogs) Log(l store.RequestLog) {
	r.w.Log(l)
	if r.lines != nil {
		r.lines.Log(&l)
	}
	r.m.Request(l.ClientFormat, l.Status, float64(l.LatencyMs)/1000)
	if r.p.bus.Subscribers() == 0 {
		return
	}
	r.p.bus.PublishJSON("request", appendRequestEvent(make([]byte, 0, 384), &l))
}

// appendRequestEvent appends the live log's "request" event: a summary of the
// row, encoded by hand (with the dashboard open, every request publishes one:
// no map and no reflection on the request path).
func appendRequestEvent(b []byte, l *store.RequestLog) []byte {
	b = translate.AppendJSONString(append(b, `{"requestId":`...), l.RequestID)
	b = translate.AppendJSONString(append(b, `,"model":`...), l.Model)
	b = strconv.AppendInt(append(b, `,"status":`...), int64(l.Status), 10)
	b = translate.AppendJSONString(append(b, `,"connectionId":`...), l.ConnectionID)
	b = translate.AppendJSONString(append(b, `,"provider":`...), l.Provider)
	b = strconv.AppendInt(append(b, `,"attempts":`...), int64(l.AttemptCount), 10)
	b = strconv.AppendInt(append(b, `,"attemptCount":`...), int64(l.AttemptCount), 10)
	b = strconv.AppendInt(append(b, `,"latencyMs":`...), l.LatencyMs, 10)
	b = translate.AppendJSONString(append(b, `,"errorCode":`...), l.ErrorCode)
	b = strconv.AppendBool(append(b, `,"stream":`...), l.Stream)
	b = strconv.AppendInt(append(b, `,"queueMs":`...), l.QueueMs, 10)
	b = strconv.AppendInt(append(b, `,"upstreamMs":`...), max(l.LatencyMs-l.QueueMs, 0), 10)
	b = translate.AppendJSONString(append(b, `,"queueReason":`...), l.QueueReason)
	return append(b, '}')
}

// LockoutChanged implements routing.Observer.
func (p publisher) LockoutChanged(action string, e lockout.Entry) {
	if action == "locked" && p.providerOf != nil {
		if provider := p.providerOf(e.ConnectionID); provider != "" {
			// A connection's locked models are one timeline segment, until the latest lock ends.
			p.hist.record(store.StateEvent{At: p.now().UnixMilli(), Provider: provider, ConnectionID: e.ConnectionID,
				Kind: "model_lock", State: "locked", Until: e.ExpiresAt.UnixMilli(), Detail: strings.TrimSpace(e.Model + " " + e.Reason)})
		}
	}
	p.bus.Publish("lockout", map[string]any{"action": action, "provider": e.Provider, "connectionId": e.ConnectionID,
		"model": e.Model, "scope": e.Scope, "failureCount": e.FailureCount, "remainingMs": e.Remaining(p.now()).Milliseconds()})
}

// metricsState reads live state for a scrape.
type metricsState struct {
	engine *routing.Engine
	api    func() *api.API
	gw     func() *gateway.Gateway
}

func (m metricsState) BreakerStates() map[string]string {
	out := map[string]string{}
	for _, s := range m.engine.Breakers().Snapshots() {
		out[s.Provider] = string(s.State)
	}
	return out
}

func (m metricsState) ConnectionCounts() (int, int, int) {
	h := m.api().ComputeHealth()
	return h.CoolingDown, h.Terminal, h.Total
}

func (m metricsState) Lockouts() int     { return m.engine.Lockouts().Count() }
func (m metricsState) ActiveLeases() int { return m.api().ComputeHealth().Leases }
func (m metricsState) InFlight() int64   { return m.gw().InFlight() }
