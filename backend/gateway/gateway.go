// Package gateway serves the client inference routes and runs the attempt loop:
// candidates in order, each outcome classified into one Verdict, failover on
// retryable verdicts only, a hard cap on attempts, a request log row per request.
package gateway

import (
	"context"
	"database/sql"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/config"
	"omniroute/backend/httpx"
	"omniroute/backend/pricing"
	"omniroute/backend/providers"
	"omniroute/backend/resilience/gate"
	"omniroute/backend/resilience/queue"
	"omniroute/backend/resilience/rules"
	"omniroute/backend/resilience/watchdog"
	"omniroute/backend/routing"
	"omniroute/backend/store"
)

// Client is the authenticated caller of an inference route.
type Client struct {
	KeyID  string
	Access *routing.Access // the key's restrictions, read-only (nil: none)
}

// Client holds two words on purpose: it is passed by value through the
// frames under every open stream. What else a key says lives behind Access
// (its Private flag) or in the request's context (a chosen request id).

type requestIDKey struct{}

// WithRequestID names the request's log row in advance (the dashboard
// playground, which then reads the row's timeline by it).
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// access is the client's restrictions (none when it has none).
func (c Client) access() routing.Access {
	if c.Access == nil {
		return routing.Access{}
	}
	return *c.Access
}

type clientKey struct{}

// WithClient attaches the authenticated client to a request context.
func WithClient(ctx context.Context, c Client) context.Context {
	return context.WithValue(ctx, clientKey{}, c)
}

// ClientFrom returns the authenticated client (zero when auth is off).
func ClientFrom(ctx context.Context) Client {
	c, _ := ctx.Value(clientKey{}).(Client)
	return c
}

// LogSink receives one row per served request; it must not block.
type LogSink interface {
	Log(store.RequestLog)
}

// Executors picks the executor for a wire format.
type Executors interface {
	For(f providers.Format) (providers.Executor, bool)
}

// Gateway holds the inference handlers' collaborators.
type Gateway struct {
	// prefills is what continuations learned of targets' prefill support.
	prefills Prefills
	// firstTokens is the learned first-token limit of each target's streams.
	firstTokens firstTokenMemory
	engine      *routing.Engine
	executors   Executors
	clk         clock.Clock
	logs        LogSink
	general     func() *config.General
	resil       func() *config.Resilience
	wall        clock.Clock
	leases      LeaseFence
	pins        Pinner
	meter       Meter
	gate        *gate.Gate
	queues      *queue.Set
	team        TeamLimits
	creds       Credentials
	rules       *rules.Engine
	spend       Spend
	capture     Capture
	log         *slog.Logger
	// emergencyDefault is OMNIROUTE_EMERGENCY_FALLBACK, used until the
	// operator sets the feature flag.
	emergencyDefault bool
	inFlight         atomic.Int64
	date             atomic.Pointer[dateValue] // the Date header of the current second
	bufs             sync.Pool                 // large stream read buffers (*[]byte, streamBufSize)
	smallBufs        sync.Pool                 // small stream read buffers (*[]byte, streamSmallBufSize)
	pendings         sync.Pool                 // client buffers of stream relays (*[]byte)
	models           modelNames                // model names copied out of request bodies
	timers           sync.Pool                 // attempts' timers (*attemptTimer)
	budget           *httpx.Budget
	// keyNames caches each target's gate and queue names (target → *keyNames).
	keyNames     sync.Map
	keyNameCount atomic.Int64
}

// Deps are the gateway's collaborators.
type Deps struct {
	Engine    *routing.Engine
	Executors Executors
	Clock     clock.Clock
	Logs      LogSink
	General   func() *config.General // a snapshot: read, never modified
	// Resilience supplies the stream watchdog settings.
	Resilience func() *config.Resilience // a snapshot: read, never modified
	// Wall times streams (stall and throughput watchdog); real time by default,
	// since it measures real I/O.
	Wall clock.Clock
	// Leases fences requests that carry a lease (optional).
	Leases LeaseFence
	// Pins records session affinity (optional).
	Pins Pinner
	// Meter counts upstream attempts (optional).
	Meter Meter
	// Gate is the composite concurrency gate and Queues the per-connection
	// request queues (fresh ones when nil).
	Gate   *gate.Gate
	Queues *queue.Set
	// Team holds connection limits across a team server's instances (nil:
	// each instance alone).
	Team TeamLimits
	// Credentials keeps OAuth access tokens fresh (optional).
	Credentials Credentials
	// Rules restates lying statuses and applies provider error rules (optional:
	// without it the classifier alone decides).
	Rules *rules.Engine
	// Spend holds keys to their budgets and rate limits and prices each
	// served answer (optional: without it rows carry no cost).
	Spend Spend
	// Capture keeps request and response bodies on demand (optional).
	Capture Capture
	// Log receives operator warnings such as the [COMBO] all-excluded line (optional).
	Log *slog.Logger
	// EmergencyFallback is the OMNIROUTE_EMERGENCY_FALLBACK default of the
	// emergencyFallback feature flag.
	EmergencyFallback bool
	// Prefills keeps what continuations learn of targets' prefill support
	// (optional: without it, in memory until the process ends).
	Prefills Prefills
}

// Spend is the gateway's cost hook.
type Spend interface {
	// Admit refuses a request of the key that its budget or rate limits do
	// not allow now (KEY_BUDGET_EXCEEDED, KEY_RATE_LIMITED; nil: go on) and
	// holds the request's estimated cost (from the client's model and body)
	// against the key's budget until Charge or Release.
	Admit(keyID, model string, body []byte) (Hold, error)
	// Charge prices a served answer of model with usage u on the row's
	// connection and charges the row's key in place of its hold h; it
	// returns the row's cost (not valid: unknown) and what a flat-rate
	// connection saved. It runs once per request, after the answer, and
	// must not block. (The row goes by value: a pointer to it would move
	// every request's row to the heap.)
	Charge(l store.RequestLog, model string, u pricing.Usage, h Hold) (cost sql.NullFloat64, saved float64)
	// Release gives back the hold of a request that was not served, and
	// its places in its key's requests-per-minute windows.
	Release(keyID string, h Hold)
}

// Hold is what an admitted request holds of its key's budget (the Spend
// hook's; the gateway only carries it from Admit to Charge or Release).
type Hold struct {
	USD          float64
	Tokens       int64
	PeriodStart  int64
	Held, Shared bool
	// Rate is the tokens held against the key's TPM limit while the
	// request is in flight (0: none).
	Rate int64
	// TeamTokens is the hold in the key's team-wide TPM window (0: none).
	TeamTokens int64
	// Request is when the request took its place in the key's RPM window
	// (unix ns; 0: none), TeamRequest its place in the team-wide one (0:
	// none): an unserved request gives both back (Release).
	Request, TeamRequest int64
}

// Holds reports whether the request holds anything Release gives back.
func (h Hold) Holds() bool {
	return h.Held || h.Rate > 0 || h.TeamTokens != 0 || h.Request != 0 || h.TeamRequest != 0
}

// Credentials keeps OAuth connections' access tokens fresh.
type Credentials interface {
	// Fresh returns the token to send now, refreshed first when it expires soon.
	Fresh(ctx context.Context, conn *routing.Conn) (string, error)
	// Refresh replaces a token the upstream refused (a 401), once per stale token.
	Refresh(ctx context.Context, conn *routing.Conn, stale string) (string, error)
}

// Meter counts upstream attempts by provider and verdict.
type Meter interface {
	Attempt(provider, verdict string)
}

// New wires a gateway.
func New(d Deps) *Gateway {
	if d.Wall == nil {
		d.Wall = clock.Real{}
	}
	g := &Gateway{engine: d.Engine, executors: d.Executors, clk: d.Clock, logs: d.Logs, general: d.General,
		resil: d.Resilience, wall: d.Wall, leases: d.Leases, pins: d.Pins, meter: d.Meter, gate: d.Gate, queues: d.Queues, team: d.Team,
		creds: d.Credentials, rules: d.Rules, spend: d.Spend, capture: d.Capture, log: d.Log, emergencyDefault: d.EmergencyFallback}
	if g.gate == nil {
		g.gate = gate.New()
	}
	if g.prefills = d.Prefills; g.prefills == nil {
		g.prefills = &prefillMemory{}
	}
	if g.queues == nil {
		g.queues = queue.NewSet()
	}
	g.bufs.New = func() any { b := make([]byte, streamBufSize); return &b }
	g.smallBufs.New = func() any { b := make([]byte, streamSmallBufSize); return &b }
	g.pendings.New = func() any { b := make([]byte, 0, pendingInitSize); return &b }
	g.budget = httpx.NewBudget(func() int64 {
		set := g.general()
		return max(set.BodyBudgetBytes, set.MaxBodyBytes) // one largest body always fits
	})
	return g
}

// Response headers naming what served the request.
const (
	HeaderConnectionID = "X-OmniRoute-Selected-Connection-Id"
	HeaderProvider     = "X-OmniRoute-Provider"
	HeaderModel        = "X-OmniRoute-Model"
	HeaderAttempts     = "X-OmniRoute-Attempts"
)

// AttemptRecord is one step of a request as stored in the request log: an
// upstream attempt (its verdict), a cooldown wait (Verdict "wait") or, for a
// request no target could take, each exclusion (Verdict "excluded", Code the
// reason: model_lockout, circuit_open, connection_cooldown, …).
type AttemptRecord struct {
	ConnectionID string `json:"connectionId"`
	Provider     string `json:"provider"`
	Model        string `json:"model"`
	Status       int    `json:"status,omitempty"`
	Verdict      string `json:"verdict"`
	Code         string `json:"code,omitempty"`
	Detail       string `json:"detail,omitempty"`
	// StartMs is when the step began, in ms after the request arrived.
	StartMs   int64 `json:"startMs"`
	LatencyMs int64 `json:"latencyMs"`
	// RemainingMs is how long an exclusion still held when the request ended.
	RemainingMs int64 `json:"remainingMs,omitempty"`
	// ContinuedFromChars is set on an attempt that continued a broken stream:
	// how many characters of the answer the client had before it took over.
	ContinuedFromChars int `json:"continuedFromChars,omitempty"`
	// Splice is set on an attempt that restarted a broken stream's answer
	// (issue 40): "restarted-spliced" when its text reproduced the delivered
	// text and the rest was relayed, "restart-diverged" when it did not.
	Splice string `json:"splice,omitempty"`
}

func msSince(t0, t1 time.Time) int64 { return t1.Sub(t0).Milliseconds() }

// The response headers above in canonical form: setting them by these names
// skips the canonicalising allocation http.Header.Set makes per header.
const (
	canonConnectionID = "X-Omniroute-Selected-Connection-Id"
	canonProvider     = "X-Omniroute-Provider"
	canonModel        = "X-Omniroute-Model"
	canonAttempts     = "X-Omniroute-Attempts"
)

// servedValues backs the served headers' values: part of the attempt, so
// setting them allocates nothing.
type servedValues [8]string

// dateValue is a second's Date header value.
type dateValue struct {
	sec   int64
	value string
}

// httpDate is the Date header for an answer written now, formatted once per
// second: a response that carries one is not given another by net/http,
// which would format the time for every response.
func (g *Gateway) httpDate() string {
	now := g.wall.Now()
	if d := g.date.Load(); d != nil && d.sec == now.Unix() {
		return d.value
	}
	d := &dateValue{sec: now.Unix(), value: now.UTC().Format(http.TimeFormat)}
	g.date.Store(d)
	return d.value
}

// setServedHeaders names what served the request; model is the model the
// answer names (the upstream's own, when it says), else the target's. own are
// the answer's other headers as pairs of canonical name and value. Every value
// is kept in store (or one new array when it has no room), each capped at its
// own element, so a later Header.Add copies instead of overwriting a
// neighbour. net/http copies the values when the header is written.
func setServedHeaders(h http.Header, store *servedValues, c routing.Candidate, attempts int, model string, own ...string) {
	if model == "" {
		model = c.Model
	}
	vals := store[:]
	if n := 4 + len(own)/2; n > len(vals) {
		vals = make([]string, n)
	}
	vals[0], vals[1], vals[2], vals[3] = c.Conn.ID, c.Conn.Provider.ID, model, itoa(attempts)
	h[canonConnectionID] = vals[0:1:1]
	h[canonProvider] = vals[1:2:2]
	h[canonModel] = vals[2:3:3]
	h[canonAttempts] = vals[3:4:4]
	for i := 0; i+1 < len(own); i += 2 {
		j := 4 + i/2
		vals[j] = own[i+1]
		h[own[i]] = vals[j : j+1 : j+1]
	}
}

// watchConfig turns the settings into one attempt's stream watchdog.
func (g *Gateway) watchConfig() watchdog.Config {
	set := g.general()
	ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	cfg := watchdog.Config{StallBudget: ms(set.StreamIdleTimeoutMs), FirstTokenTimeout: ms(set.FirstTokenTimeoutMs),
		HardDeadline: ms(set.AttemptDeadlineMs)}
	if g.resil != nil {
		t := g.resil().StreamRecovery.ThroughputWatchdog
		cfg.Throughput = watchdog.Throughput{Enabled: t.Enabled, Warmup: ms(t.WarmupMs), Window: ms(t.WindowMs),
			MinBytesPerSecond: float64(t.MinBytesPerSecond), MinMeasurableBytes: int(t.MinMeasurableBytes)}
	}
	return cfg
}

// BodyBytes reports the request body bytes held in memory now (the budget in use).
func (g *Gateway) BodyBytes() int64 { return g.budget.Used() }

// InFlight reports the inference requests being served now.
func (g *Gateway) InFlight() int64 { return g.inFlight.Load() }
