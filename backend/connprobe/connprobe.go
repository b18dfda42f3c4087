// Package connprobe is a connection's credential check: model discovery
// (GET /models), then one minimal completion on its first served chat model
// in its wire format, each reported as a step; the outcome leaves the
// connection serving, key_rejected, endpoint_not_found or unreachable. Test's
// prefill probe (prefill.go) follows a passing check. The management API's
// handlers call it; the routing engine, the store, discovery and the
// executors come from the wiring place (Prober).
package connprobe

import (
	"context"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/health"
	"omniroute/backend/prefillcap"
	"omniroute/backend/providers"
	"omniroute/backend/providers/discovery"
	"omniroute/backend/resilience/breaker"
	"omniroute/backend/resilience/cooldown"
	"omniroute/backend/routing"
	"omniroute/backend/store"
)

// KeyRejected is the terminal state a connection enters when its upstream
// answers 401/403 to the credential check: "the provider rejected this key".
// It is persisted in test_status like banned / expired and left only by new
// credentials (or a check that passes).
const KeyRejected = string(health.KeyRejected)

// EndpointNotFound is the terminal state a connection enters when its base
// URL answers 404 to the credential check's completion and gives no model
// list either (a Messages endpoint's URL without /v1): "this URL answers
// 404: check the base URL". Persisted in test_status like key_rejected and
// left by an edit whose check passes, or a Test that passes.
const EndpointNotFound = string(health.EndpointNotFound)

// Error codes stored with the terminal states.
const (
	codeKeyRejected      = "KEY_REJECTED"
	codeEndpointNotFound = "ENDPOINT_NOT_FOUND"
)

// Outcomes a check names in Check.State besides the terminal ones.
const (
	Unreachable = string(health.Unreachable)
	Serving     = "serving"
)

// Check steps, in order.
const (
	StepReach      = "reach"
	StepAuth       = "auth"
	StepModels     = "models"
	StepCompletion = "completion"
)

// probeTimeout bounds the one-token completion (and a quota read).
const probeTimeout = 20 * time.Second

// probeBodyLimit bounds how much of the probe's answer is read.
const probeBodyLimit = 64 << 10

// discoveryTimeout bounds one discovery (every page of it).
const discoveryTimeout = 10 * time.Second

// Executors picks the upstream executor of a wire format (the gateway's own
// set, so a credential check sends exactly what a request would).
type Executors interface {
	For(f providers.Format) (providers.Executor, bool)
}

// Engine is the part of the routing engine a check uses: the live
// connections, their cooldown state and the provider breakers.
type Engine interface {
	Registry() *routing.Registry
	SetCooldown(c *routing.Conn, st cooldown.State) error
	Breakers() *breaker.Registry
}

// Store keeps what discovery answered on the connection's row.
type Store interface {
	Connection(id string) (store.Connection, error)
	SaveDiscoveredModels(id string, d store.DiscoveredModels) error
}

// Discoverer lists an upstream's models (discovery.Client).
type Discoverer interface {
	Discover(ctx context.Context, t providers.Target) discovery.Result
}

// Prober runs the checks; every field comes from the wiring place. Nil
// Executors, FreshToken, Quotas or Prefills skip what needs them.
type Prober struct {
	Engine    Engine
	Store     Store
	Discovery Discoverer
	Executors Executors
	// FreshToken is a subscription connection's access token, refreshed
	// when due.
	FreshToken func(ctx context.Context, c *routing.Conn) (string, error)
	// Quotas read a login's quota buckets after its check passed, by dialect.
	Quotas map[providers.Dialect]providers.QuotaReader
	// Prefills records what Test's prefill probe finds.
	Prefills *prefillcap.Book
	// Reload rebuilds the live connections after discovery stored a list.
	Reload func() error
	Clock  clock.Clock
}
