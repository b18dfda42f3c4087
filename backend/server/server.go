// Package server is the one wiring place: it builds every component with its
// clock, store and HTTP client, and serves the gateway.
package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"omniroute/backend/agents"
	"omniroute/backend/api"
	"omniroute/backend/clock"
	"omniroute/backend/config"
	"omniroute/backend/events"
	"omniroute/backend/gateway"
	"omniroute/backend/leases"
	"omniroute/backend/metrics"
	"omniroute/backend/providers"
	"omniroute/backend/providers/anthropic"
	"omniroute/backend/providers/openai"
	"omniroute/backend/reqlog"
	"omniroute/backend/resilience/affinity"
	"omniroute/backend/resilience/breaker"
	"omniroute/backend/resilience/lockout"
	"omniroute/backend/routing"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
)

// Options configure a server.
type Options struct {
	Process   config.Process
	Dashboard fs.FS
	Version   string
	Log       *slog.Logger
	Clock     clock.Clock
	// Getenv reads env overrides (defaults to os.Getenv).
	Getenv func(string) string
}

// Server is a fully wired gateway.
type Server struct {
	opts      Options
	store     *store.Store
	logs      *reqlog.Writer
	transport *http.Transport
	api       *api.API
	engine    *routing.Engine
	bus       *events.Bus
	handler   http.Handler
	token     string
	httpSrv   *http.Server
}

// New builds every component. Close releases them.
func New(opts Options) (*Server, error) {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Process.DatabaseURL != "" {
		return nil, errors.New("OMNIROUTE_DATABASE_URL (PostgreSQL) is not supported by this build yet; unset it to use the embedded SQLite database")
	}
	dir := opts.Process.DataDir
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	st, err := store.Open(filepath.Join(dir, "omniroute.db"))
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, store: st}
	if err := s.wire(); err != nil {
		_ = st.Close()
		return nil, err
	}
	return s, nil
}

func (s *Server) wire() error {
	opts, st, clk := s.opts, s.store, s.opts.Clock
	dir := opts.Process.DataDir
	key, err := secrets.LoadOrCreateKey(filepath.Join(dir, "secret.key"))
	if err != nil {
		return err
	}
	box, err := secrets.New(key)
	if err != nil {
		return err
	}
	token, err := LoadOrCreateToken(dir)
	if err != nil {
		return err
	}
	s.token = token
	settings, err := config.NewHolder(st, opts.Getenv)
	if err != nil {
		return err
	}
	catalog := providers.NewCatalog()
	registry := routing.NewRegistry(catalog)
	combos := routing.NewCombos()
	var reloadMu sync.Mutex // concurrent management writes reload one at a time, newest rows last
	reload := func() error {
		reloadMu.Lock()
		defer reloadMu.Unlock()
		rows, err := st.Connections()
		if err != nil {
			return err
		}
		if err := registry.Load(rows, box); err != nil {
			return err
		}
		crows, err := st.Combos()
		if err != nil {
			return err
		}
		combos.Load(crows)
		return nil
	}
	if err := reload(); err != nil {
		return err
	}

	bus := events.New(clk.Now)
	s.bus = bus
	logErr := func(err error) { opts.Log.Warn("state write failed", slog.String("error", err.Error())) }
	pub := publisher{bus: bus, now: clk.Now, hist: newHistory(st, logErr)}
	policy := settingsPolicy{settings}
	breakers := breaker.NewRegistry(clk, func(provider string) breaker.Profile {
		return policy.breakerProfile(categoryOf(catalog, provider))
	}, func(snap breaker.Snapshot) {
		if err := st.SaveBreaker(breakerRow(snap)); err != nil {
			logErr(err)
		}
		pub.breakerChanged(snap)
	})
	rows, err := st.Breakers()
	if err != nil {
		return err
	}
	breakers.Restore(snapshots(rows))
	window := breaker.NewWindowGate(clk, func(provider string) breaker.WindowProfile {
		return policy.windowProfile(categoryOf(catalog, provider))
	})
	settings.OnResilienceChange(func(config.Resilience) {
		bus.Publish("settings", map[string]any{"section": "resilience"})
		for _, snap := range breakers.Snapshots() {
			breakers.Get(snap.Provider).SetProfile(policy.breakerProfile(categoryOf(catalog, snap.Provider)))
		}
	})

	pins := affinity.New(clk, func() time.Duration {
		return time.Duration(settings.General().SessionAffinityTTLMs) * time.Millisecond
	}, pinSaver{st})
	livePins, err := st.LivePins(clk.Now().UnixMilli())
	if err != nil {
		return err
	}
	pins.Load(pinsFromRows(livePins))

	leaseSvc := leases.New(st, clk)
	engine := routing.NewEngine(routing.EngineDeps{Registry: registry, Clock: clk, Breakers: breakers, Window: window,
		Lockouts: lockout.New(clk), Combos: combos, Pins: pins, Leases: leaseSvc,
		Store: st, Policy: policy, Observer: pub, OnError: logErr})

	s.engine = engine
	s.transport = newTransport()
	client := &http.Client{Transport: s.transport}
	userAgent := "OmniRoute/" + opts.Version
	executors := executorSet{providers.FormatOpenAI: openai.New(client, userAgent),
		providers.FormatAnthropic: anthropic.New(client, userAgent)}

	s.logs = reqlog.New(st, time.Second, func() int { return settings.General().RequestLogRetention }, logErr)
	var gw *gateway.Gateway
	meter := metrics.New(metricsState{engine: engine, api: func() *api.API { return s.api }, gw: func() *gateway.Gateway { return gw }})
	gw = gateway.New(gateway.Deps{Engine: engine, Executors: executors, Clock: clk, Logs: requestLogs{s.logs, pub, meter},
		General: settings.General, Resilience: settings.Resilience, Pins: pins, Leases: leaseSvc, Meter: meter})

	keys := api.NewKeyring()
	if err := ensureDefaultKey(st, box, clk); err != nil {
		return err
	}
	keyRows, err := st.APIKeys()
	if err != nil {
		return err
	}
	keys.Load(keyRows)

	s.api = api.New(api.Deps{Store: st, Box: box, Catalog: catalog, Engine: engine, Gateway: gw, Settings: settings,
		Keys: keys, Clock: clk, Log: opts.Log, Token: token, AllowedHosts: opts.Process.AllowedHosts,
		Dashboard: opts.Dashboard, Version: opts.Version, BaseURL: opts.Process.BaseURL(), StartedAt: clk.Now(), HTTPClient: client, Reload: reload, Events: bus, Leases: leaseSvc, Metrics: meter.Handler(),
		Agents: func() *agents.Manager {
			key, _ := s.DefaultKey()
			return agents.ForCurrentUser(opts.Process.BaseURL(), key)
		}})
	s.handler = s.api.Handler()
	return nil
}

func categoryOf(catalog *providers.Catalog, breakerKey string) string {
	id, _, _ := strings.Cut(breakerKey, ":")
	if p, ok := catalog.Lookup(id); ok {
		return string(p.Category)
	}
	return string(providers.CategoryAPIKey)
}

// newTransport pools keep-alive connections per upstream host.
func newTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

type executorSet map[providers.Format]providers.Executor

func (e executorSet) For(f providers.Format) (providers.Executor, bool) {
	x, ok := e[f]
	return x, ok
}

// Handler is the root HTTP handler (also Wails' asset handler in the desktop app).
func (s *Server) Handler() http.Handler { return s.handler }

// Events is the state-change bus (the tray subscribes to it).
func (s *Server) Events() *events.Bus { return s.bus }

// Health computes the overall health the tray shows.
func (s *Server) Health() api.Health { return s.api.ComputeHealth() }

// API is the HTTP edge (the desktop shell calls its tray actions).
func (s *Server) API() *api.API { return s.api }

// ResetBreakers closes every provider breaker.
func (s *Server) ResetBreakers() int { return s.engine.Breakers().ResetAll() }

// Token is the management token.
func (s *Server) Token() string { return s.token }

// Store is the database (for tests and the desktop shell).
func (s *Server) Store() *store.Store { return s.store }

// Serve serves on l until ctx is done, then shuts down gracefully.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	s.httpSrv = &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second,
		MaxHeaderBytes: 1 << 20, ErrorLog: slog.NewLogLogger(s.opts.Log.Handler(), slog.LevelDebug)}
	errc := make(chan error, 1)
	go func() { errc <- s.httpSrv.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := s.httpSrv.Shutdown(shutCtx)
	<-errc
	return err
}

// CloseIdleConnections drops pooled upstream connections (tests measure leaks
// without the pool's legitimately idle goroutines).
func (s *Server) CloseIdleConnections() { s.transport.CloseIdleConnections() }

// Close flushes logs and closes the database and idle upstream connections.
func (s *Server) Close() error {
	s.logs.Close()
	s.transport.CloseIdleConnections()
	return s.store.Close()
}
