// Package gateway serves the client inference routes and runs the attempt loop:
// candidates in order, each outcome classified into one Verdict, failover on
// retryable verdicts only, a hard cap on attempts, a request log row per request.
package gateway

import (
	"context"
	"net/http"
	"sync"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/config"
	"omniroute/backend/providers"
	"omniroute/backend/routing"
	"omniroute/backend/store"
)

// Client is the authenticated caller of an inference route.
type Client struct {
	KeyID  string
	Access routing.Access
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
	engine    *routing.Engine
	executors Executors
	clk       clock.Clock
	logs      LogSink
	general   func() config.General
	bufs      sync.Pool
}

// Deps are the gateway's collaborators.
type Deps struct {
	Engine    *routing.Engine
	Executors Executors
	Clock     clock.Clock
	Logs      LogSink
	General   func() config.General
}

// New wires a gateway.
func New(d Deps) *Gateway {
	g := &Gateway{engine: d.Engine, executors: d.Executors, clk: d.Clock, logs: d.Logs, general: d.General}
	g.bufs.New = func() any { b := make([]byte, streamBufSize); return &b }
	return g
}

// Response headers naming what served the request.
const (
	HeaderConnectionID = "X-OmniRoute-Selected-Connection-Id"
	HeaderProvider     = "X-OmniRoute-Provider"
	HeaderModel        = "X-OmniRoute-Model"
	HeaderAttempts     = "X-OmniRoute-Attempts"
)

// AttemptRecord is one upstream attempt as stored in the request log.
type AttemptRecord struct {
	ConnectionID string `json:"connectionId"`
	Provider     string `json:"provider"`
	Model        string `json:"model"`
	Status       int    `json:"status,omitempty"`
	Verdict      string `json:"verdict"`
	Code         string `json:"code,omitempty"`
	LatencyMs    int64  `json:"latencyMs"`
}

func msSince(t0, t1 time.Time) int64 { return t1.Sub(t0).Milliseconds() }

func setServedHeaders(h http.Header, c routing.Candidate, attempts int) {
	h.Set(HeaderConnectionID, c.Conn.ID)
	h.Set(HeaderProvider, c.Conn.Provider.ID)
	h.Set(HeaderModel, c.Model)
	h.Set(HeaderAttempts, itoa(attempts))
}
