// Package server is the one wiring place: it builds every component with its
// clock, store and HTTP client, and serves the gateway.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	"omniroute/backend/backup"
	"omniroute/backend/budget"
	"omniroute/backend/capture"
	"omniroute/backend/clock"
	"omniroute/backend/config"
	"omniroute/backend/datadir"
	"omniroute/backend/events"
	"omniroute/backend/gateway"
	"omniroute/backend/httpx"
	"omniroute/backend/instances"
	"omniroute/backend/keyring"
	"omniroute/backend/leases"
	"omniroute/backend/metrics"
	"omniroute/backend/oauth"
	"omniroute/backend/prefillcap"
	"omniroute/backend/pricing"
	"omniroute/backend/providers"
	"omniroute/backend/providers/anthropic"
	"omniroute/backend/providers/discovery"
	pgemini "omniroute/backend/providers/gemini"
	"omniroute/backend/providers/openai"
	provregistry "omniroute/backend/providers/registry"
	"omniroute/backend/reqlog"
	"omniroute/backend/resilience/affinity"
	"omniroute/backend/resilience/breaker"
	"omniroute/backend/resilience/gate"
	"omniroute/backend/resilience/lockout"
	"omniroute/backend/resilience/queue"
	"omniroute/backend/resilience/rules"
	"omniroute/backend/routing"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
	"omniroute/backend/teamlimits"
	"omniroute/backend/update"
)

// Options configure a server.
type Options struct {
	// WaitForDB is how long start-up waits for an unreachable PostgreSQL
	// (OMNIROUTE_DATABASE_URL), retrying with a logged, growing pause
	// (`--wait-for-db`); 0: fail at once.
	WaitForDB time.Duration
	// Context, once cancelled (the binary's SIGTERM/SIGINT), ends that wait
	// at once with ErrStartInterrupted; nil: never cancelled.
	Context   context.Context
	Process   config.Process
	Dashboard fs.FS
	Version   string
	Log       *slog.Logger
	Clock     clock.Clock
	// Getenv reads env overrides (defaults to os.Getenv).
	Getenv func(string) string
	// Reset moves the data directory's database, key and token aside and
	// starts fresh (`omniroute --reset`).
	Reset bool
	// AcceptDamagedWAL starts over a damaged write-ahead log with the
	// transactions before the damage, the log copied aside first
	// (`omniroute --accept-damaged-wal`).
	AcceptDamagedWAL bool
	// CheckpointEvery is how often the SQLite WAL is checkpointed into the
	// database file (DefaultCheckpointEvery when 0; negative: never).
	CheckpointEvery time.Duration
	// PasswordCost is the bcrypt cost of users' passwords (bcrypt's default
	// when 0; tests lower it).
	PasswordCost int
	// BackupCost is the argon2id cost of the backups the API writes
	// (backup.DefaultCost when zero; tests lower it).
	BackupCost backup.Cost
	// SetMemoryLimit sets the process's soft memory limit (the binary passes
	// runtime/debug.SetMemoryLimit; nil leaves it alone, as in tests): the
	// gateway holds it to the body budget plus MemoryHeadroom, so that bodies
	// released are collected before the heap doubles.
	SetMemoryLimit func(limit int64) int64
	// ReleaseKey replaces the compiled-in release key that update manifests
	// are verified with (base64 Ed25519 public key; tests only).
	ReleaseKey string
	// RequestLines, when set, gets one line per finished request
	// (`omniroute --log-requests`: stdout): time, key name, model,
	// connection, status, attempts, latency, error code.
	RequestLines io.Writer
	// Ticks, when set, makes the ticks of the periodic sweeps (session pins;
	// a team server's keys' windows and deleted connections' limits) instead
	// of a time.Ticker: tests tick them themselves, without waiting.
	Ticks Ticks
}

// releaseKey is the key update manifests are verified with: the one compiled
// in, unless Options.ReleaseKey names another (tests sign with their own).
func releaseKey(opts Options) string {
	if opts.ReleaseKey != "" {
		return opts.ReleaseKey
	}
	return update.ReleaseKey
}

// MemoryHeadroom is what the soft memory limit allows beyond the request
// body budget: the gateway's own state and buffers (its Go heap is ≈ 10 MiB
// idle, ≈ 20 MiB at 1,000 req/s: docs/BENCHMARKS.md); MinMemoryLimit keeps
// a small budget from squeezing 1,000 open streams (≈ 50 MiB).
const (
	MemoryHeadroom = 32 << 20
	MinMemoryLimit = 128 << 20
)

// memoryLimit is the soft memory limit for general settings g: the body
// budget (at least one largest body) plus MemoryHeadroom, MinMemoryLimit at least.
func memoryLimit(g config.General) int64 {
	return max(max(g.BodyBudgetBytes, g.MaxBodyBytes)+MemoryHeadroom, MinMemoryLimit)
}

// Server is a fully wired gateway.
type Server struct {
	opts      Options
	dir       *datadir.Dir
	store     *store.Store
	logs      *reqlog.Writer
	transport *egressTransport
	api       *api.API
	engine    *routing.Engine
	bus       *events.Bus
	handler   http.Handler
	token     string
	httpSrv   *http.Server
	follow    *follower // follows other instances' writes (PostgreSQL only)
	instances *instances.Registry
	behind    *behindWriter // the request path's state writes (PostgreSQL only)
	teamStop  func()        // stops the shared limits' renewals and queued lease releases (PostgreSQL only)
	dbh       *dbHealth     // the request path's view of a shared database (PostgreSQL only)
	ckpt      *periodic     // the periodic WAL checkpoint (SQLite only)
	// sweepPins deletes the expired session pins (wire); pinSweep runs it
	// every pinSweepEvery.
	sweepPins func() error
	pinSweep  *periodic
	// pricingWatch follows the user's pricing file (the pricingFile setting).
	pricingWatch *pricingWatch
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
	shared := opts.Process.DatabaseURL != ""
	if shared {
		if err := store.ValidDatabaseURL(opts.Process.DatabaseURL); err != nil {
			return nil, err
		}
		if opts.Reset {
			return nil, errors.New("--reset moves a SQLite database aside; it does not apply with OMNIROUTE_DATABASE_URL (PostgreSQL)")
		}
	}
	// The directory's lock is taken before the database is opened (and
	// migrated): a second instance on the same directory stops here. With
	// PostgreSQL every instance has its own directory (key, token, lock) and
	// the database arbitrates between them.
	dd, err := datadir.Open(opts.Process.DataDir, datadir.Options{Reset: opts.Reset, ExternalDatabase: shared,
		AcceptDamagedWAL: opts.AcceptDamagedWAL})
	if err != nil {
		return nil, err
	}
	if dd.MovedTo != "" {
		opts.Log.Warn("reset: the old database, key and token were moved aside", slog.String("to", dd.MovedTo))
	}
	if dd.DamagedWAL != "" {
		opts.Log.Error("the write-ahead log was damaged: starting with the transactions before the damage (--accept-damaged-wal)",
			slog.String("wal", dd.DamagedWAL))
	}
	var st *store.Store
	if shared {
		ctx := opts.Context
		if ctx == nil {
			ctx = context.Background()
		}
		st, err = openPostgresWaiting(ctx, opts.Process.DatabaseURL, opts.WaitForDB, opts.Log, opts.Clock, clock.Sleep)
	} else {
		st, err = openSQLite(dd)
	}
	if err != nil {
		dd.Close()
		return nil, err
	}
	if err := st.RequestLogFallback(); err != nil {
		opts.Log.Warn("request log: the SQLite writer connection did not open; batches go through database/sql, several times the CPU per row",
			slog.String("error", err.Error()))
	}
	s := &Server{opts: opts, store: st, dir: dd}
	err = s.checkKey()
	if err == nil {
		err = s.wire()
	}
	if err == nil {
		err = dd.Tighten() // SQLite made -wal and -shm with the umask
	}
	if err != nil {
		s.follow.stop()
		s.pricingWatch.stop()
		s.behind.stop()
		s.stopTeam()
		_ = st.Close()
		dd.Close()
		return nil, err
	}
	if !shared && opts.CheckpointEvery >= 0 {
		every := opts.CheckpointEvery
		if every == 0 {
			every = DefaultCheckpointEvery
		}
		s.ckpt = startCheckpointer(st, every, func(err error) {
			opts.Log.Warn("periodic WAL checkpoint failed", slog.String("error", err.Error()))
		})
	}
	s.pinSweep = startPeriodic(opts.Ticks, pinSweepEvery, s.sweepPins, func(err error) {
		opts.Log.Warn("session pins: the periodic sweep of expired pins failed", slog.String("error", err.Error()))
	})
	return s, nil
}

// openSQLite opens the data directory's SQLite database, refusing one
// without tables when the directory holds its key or token (a copy made
// without the WAL: datadir.ExpectsSchema).
func openSQLite(dd *datadir.Dir) (*store.Store, error) {
	st, err := store.OpenWith(dd.File(datadir.DBFile), store.OpenOptions{RequireSchema: dd.ExpectsSchema()})
	if errors.Is(err, store.ErrNoSchema) {
		return nil, dd.NoSchemaError()
	}
	return st, err
}

// checkKey refuses to start when secret.key is missing but the database holds
// values sealed with it: a new key would open none of them (and writing one
// would make the loss permanent).
func (s *Server) checkKey() error {
	if s.opts.Getenv(secrets.EnvKey) != "" || s.opts.Getenv(secrets.EnvKeyFile) != "" {
		return nil // the key is provided; a wrong one fails to open the credentials at load
	}
	if _, err := os.Stat(s.dir.File(datadir.KeyFile)); !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	n, err := s.store.EncryptedCount()
	if err != nil {
		return err
	}
	if n > 0 && s.store.Shared() {
		return fmt.Errorf("%s is missing but the shared database holds %d encrypted credential(s) only the instances' common key can open; "+
			"copy %s from another instance's data directory into %s (every instance sharing OMNIROUTE_DATABASE_URL needs the same key)",
			s.dir.File(datadir.KeyFile), n, datadir.KeyFile, s.dir.Path())
	}
	if n > 0 {
		return fmt.Errorf("%s is missing but the database holds %d encrypted credential(s) only that key can open; "+
			"restore %s from a backup, or start fresh with `omniroute --reset` (the old files are moved aside, not deleted)",
			s.dir.File(datadir.KeyFile), n, datadir.KeyFile)
	}
	return nil
}

func (s *Server) wire() error {
	opts, st, clk := s.opts, s.store, s.opts.Clock
	dir := opts.Process.DataDir
	key, _, err := secrets.LoadKeyFrom(opts.Getenv, filepath.Join(dir, datadir.KeyFile))
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
	if set := opts.SetMemoryLimit; set != nil {
		set(memoryLimit(settings.General()))
		settings.OnGeneralChange(func(g config.General) { set(memoryLimit(g)) })
	}
	catalog := provregistry.Catalog(opts.Getenv)
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
	if bad := registry.Unloadable(); len(bad) > 0 {
		// One damaged credential switches its connection off; a key that
		// opens no stored credential at all is the wrong key, and starting
		// would seal new ones with it.
		wrong, err := keyOpensNothing(st, box)
		if err != nil {
			return err
		}
		if wrong && st.Shared() {
			return fmt.Errorf("%s opens none of the stored credentials: every instance sharing OMNIROUTE_DATABASE_URL needs the same %s; copy it from the first instance's data directory into %s (or give every instance the same %s / %s)",
				datadir.KeyFile, datadir.KeyFile, dir, secrets.EnvKey, secrets.EnvKeyFile)
		}
		if wrong {
			return fmt.Errorf("this data directory's key (%s, or %s / %s) opens none of the %d stored credential(s): it is not the key they were sealed with; "+
				"put the right %s back, or start fresh with `omniroute --reset` (the old files are moved aside, not deleted)",
				datadir.KeyFile, secrets.EnvKey, secrets.EnvKeyFile, len(bad), datadir.KeyFile)
		}
		for _, c := range bad {
			opts.Log.Error("connection switched off: its stored credential cannot be opened (corrupt, or sealed with another secret.key); enter its key again",
				slog.String("connection", c.ID), slog.String("name", c.Name), slog.String("provider", c.Provider.ID))
		}
	}

	bus := events.New(clk.Now)
	s.bus = bus
	logErr := func(err error) { opts.Log.Warn("state write failed", slog.String("error", err.Error())) }
	// The request path's state writes: through to SQLite, behind the
	// request to a shared PostgreSQL (which may be far or unreachable).
	var sw stateWriter = st
	var shared behindStore
	if st.Shared() {
		s.behind = newBehindWriter(logErr)
		shared = newBehindStore(st, clk, s.behind)
		sw = shared
	}
	pub := publisher{bus: bus, now: clk.Now, hist: newHistory(sw, logErr), decidedHistory: st.Shared(), providerOf: func(id string) string {
		if c, ok := registry.Get(id); ok {
			return c.BreakerKey
		}
		return ""
	}}
	policy := settingsPolicy{settings}
	breakers := breaker.NewRegistry(clk, func(provider string) breaker.Profile {
		return policy.breakerProfile(categoryOf(catalog, provider))
	}, func(snap breaker.Snapshot) {
		if st.Shared() {
			// The team's row counts every instance's outcomes.
			shareBreakerChange(shared, snap, policy.breakerProfile(categoryOf(catalog, snap.Provider)))
		} else if err := sw.SaveBreaker(breakerRow(snap)); err != nil {
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

	pinTTL := func() time.Duration {
		return time.Duration(settings.GeneralRef().SessionAffinityTTLMs) * time.Millisecond
	}
	pins := affinity.New(clk, pinTTL, pinSaver{sw, clk})
	var dbh *dbHealth
	if st.Shared() {
		dbh = newDBHealth(clk)
		s.dbh = dbh
		// One pin per session team-wide, decided by the database when a
		// session's first attempt is dispatched.
		pins.ShareWith(pinClaimer{st: st, clk: clk, db: dbh})
	}
	livePins, err := st.LivePins(clk.Now().UnixMilli())
	if err != nil {
		return err
	}
	pins.Load(pinsFromRows(livePins, clk.Now().Add(pinTTL())))
	s.sweepPins = pinSweeper(st, pins, clk, dbh) // expired pins deleted while running too (New starts it)
	// Leases are read from the database at each decision; a lease stored with
	// the clock ahead is brought within the longest TTL once, here.
	if n, err := st.ClampLeases(clk.Now().Add(leases.MaxTTL).UnixMilli()); err != nil {
		return err
	} else if n > 0 {
		opts.Log.Warn("loaded state: lease expiries further than the longest lease were clamped (written with the clock ahead?)",
			slog.Int64("leases", n))
	}

	leaseSvc := leases.New(st, clk)
	gates := gate.New()
	var probeClaim func(string) (bool, error)
	// Model locks are written like cooldowns: through to SQLite (so a
	// restart keeps them), behind the request to a shared PostgreSQL.
	var lockStore routing.LockStore = st
	if st.Shared() {
		lockStore = shared
		// One HALF_OPEN probe per provider across the instances: the
		// database's conditional upsert decides, for this process's owner id.
		owner := secrets.RandomID()
		probeClaim = func(breakerKey string) (bool, error) {
			return st.ClaimProbe(breakerKey, owner, clk.Now().UnixMilli(), probeClaimTTL.Milliseconds())
		}
	}
	engine := routing.NewEngine(routing.EngineDeps{ProbeClaim: probeClaim, Registry: registry, Clock: clk, Breakers: breakers, Window: window,
		Lockouts: lockout.NewFamilies(clk, catalog.QuotaFamily), Combos: combos, Pins: pins, Leases: leaseSvc,
		Store: sw, Policy: policy, Observer: pub, Load: gateLoad{gates}, OnError: logErr, Locks: lockStore,
		AgentMap: func(family string) (string, bool) { return settings.GeneralRef().AgentModelMap.Target(family) }})

	s.engine = engine
	// A restart does not change the picture: the model locks still running
	// (and the clears since) are taken back, as cooldowns and breakers are.
	lockRows, err := st.ModelLocks(clk.Now().UnixMilli(), modelLockKeep.Milliseconds())
	if err != nil {
		return err
	}
	engine.AdoptModelLocks(lockRows)
	// Every loaded deadline within the longest of its kind (breakers clamp
	// their own in Restore, shared model locks in Adopt): state written while
	// the clock was ahead must not block a connection until then.
	if ids := engine.ClampCooldowns(); len(ids) > 0 {
		opts.Log.Warn("loaded state: cooldown deadlines further than the longest cooldown were clamped (written with the clock ahead?)",
			slog.Int("connections", len(ids)))
	}
	lockoutOn := settings.ResilienceRef().ModelLockout.Enabled
	var lockoutMu sync.Mutex
	settings.OnResilienceChange(func(r config.Resilience) {
		bus.Publish("settings", map[string]any{"section": "resilience"})
		for _, snap := range breakers.Snapshots() {
			breakers.Get(snap.Provider).SetProfile(policy.breakerProfile(categoryOf(catalog, snap.Provider)))
		}
		lockoutMu.Lock()
		wasOn := lockoutOn
		lockoutOn = r.ModelLockout.Enabled
		lockoutMu.Unlock()
		if wasOn && !r.ModelLockout.Enabled {
			// Turning the lockout off releases the models it locked: no lock
			// keeps refusing requests once the operator disabled the layer.
			if n := engine.ClearAllLockouts(); n > 0 {
				bus.Publish("lockout", map[string]any{"action": "cleared", "removed": n, "reason": "lockout_disabled"})
			}
		}
	})
	s.transport = newEgressTransport(newTransport())
	// Upstream redirects are never followed: the request carries the
	// connection's credential (x-api-key survives a cross-host redirect), and
	// a 3xx is an upstream error like any other.
	client := &http.Client{Transport: s.transport, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	userAgent := "OmniRoute/" + opts.Version
	// The executors send through the client's transport directly: the client
	// follows no redirect, so its per-request redirect bookkeeping is waste.
	direct := providers.NewDirect(client)
	// A wire format's providers of another dialect have their own executor:
	// the provider modules' (signed cloud APIs, Google's other doors to
	// Gemini, a resource's Responses API, subscriptions, a native local API).
	// What an executor's usage wall consumes itself still tells the usage
	// windows, and each wall change reaches the dashboard.
	dialects := catalog.Executors(providers.ExecDeps{Client: direct, UserAgent: userAgent, Now: clk.Now, Getenv: opts.Getenv,
		Observe: func(t providers.Target, h http.Header) {
			if c, ok := registry.Get(t.ConnectionID); ok {
				if q, ok := gateway.WindowsFromHeaders(h, clk.Now()); ok {
					c.SetQuotaWindows(q)
				}
			}
		},
		OnChange: func(id, transition string) {
			bus.Publish("subscription", map[string]any{"id": id, "wall": transition})
		}})
	by := func(f providers.Format) map[providers.Dialect]providers.Executor {
		if dialects[f] == nil {
			dialects[f] = map[providers.Dialect]providers.Executor{}
		}
		return dialects[f]
	}
	quotas := map[providers.Dialect]providers.QuotaReader{}
	walls := map[providers.Dialect]providers.UsageWallReader{}
	for _, m := range dialects {
		for d, e := range m {
			if q, ok := e.(providers.QuotaReader); ok {
				quotas[d] = q
			}
			if w, ok := e.(providers.UsageWallReader); ok {
				walls[d] = w
			}
		}
	}
	executors := executorSet{providers.FormatOpenAI: providers.Dialects{Default: openai.New(direct, userAgent), By: by(providers.FormatOpenAI)},
		providers.FormatAnthropic: providers.Dialects{Default: anthropic.New(direct, userAgent), By: by(providers.FormatAnthropic)},
		providers.FormatResponses: providers.Dialects{By: by(providers.FormatResponses)},
		providers.FormatGemini:    providers.Dialects{Default: pgemini.New(direct, userAgent), By: by(providers.FormatGemini)}}
	refresher := oauth.NewRefresher(oauth.RefresherDeps{Store: st, Box: box, Client: client, Clock: clk,
		OnRefresh: func(id string) { bus.Publish("subscription", map[string]any{"id": id, "tokenRefreshed": true}) }})

	bodies, err := capture.New(clk, st) // captured bodies expire as the request log is pruned
	if err != nil {
		return err
	}
	s.logs = reqlog.New(bodySweeper{st.RequestLogSink(), bodies}, time.Second, func() int { return settings.GeneralRef().RequestLogRetention }, logErr)
	var gw *gateway.Gateway
	meter := metrics.New(metricsState{engine: engine, api: func() *api.API { return s.api }, gw: func() *gateway.Gateway { return gw }})
	ruleEngine := rules.New(func() []rules.Rule { return settings.GeneralRef().ProviderErrorRules }, catalog.Restatements(), catalog.Rules()...)
	prices, err := newPricing(catalog)
	if err != nil {
		return err
	}
	if err := pricing.Load(st, prices); err != nil {
		return err
	}
	// The user's pricing file: read at start (a bad one is logged, never
	// fatal), then followed.
	pricingFile := pricing.NewFileLoader(prices, clk.Now)
	if err := pricingFile.Load(settings.General().PricingFile); err != nil {
		opts.Log.Warn("pricing file not taken: the shipped prices stand", slog.String("error", err.Error()))
	}
	s.pricingWatch = startPricingWatch(pricingFile, func() string { return settings.General().PricingFile }, pricingFileEvery, opts.Log)
	ledger := budget.New(clk)
	// What continuations and the connection Test learned of each model's
	// assistant prefill, kept across restarts.
	prefills, err := prefillcap.Open(st, clk, opts.Log)
	if err != nil {
		return err
	}
	if st.Shared() {
		ledger.Share(st)       // a team server: keys are charged in the database
		ledger.ShareAlerts(st) // and each alert is raised once for the team
	}
	var keys *keyring.Keyring
	// A key's spend crossing 80 % or 100 % of its budget: the "budget" event
	// (the dashboard's live feed, the desktop notification).
	ledger.OnAlert(func(a budget.Alert) {
		name := ""
		if keys != nil {
			name = keys.NameOf(a.KeyID)
		}
		bus.Publish("budget", budgetEvent{Alert: a, KeyName: name})
	})
	var lines *requestLines
	if opts.RequestLines != nil {
		lines = &requestLines{w: opts.RequestLines, keyName: func(id string) string { return keys.NameOf(id) },
			conn: func(id string) string {
				if c, ok := registry.Get(id); ok {
					return c.Name
				}
				return id
			}}
	}
	var team gateway.TeamLimits
	if st.Shared() {
		// A connection's maxConcurrent and pacing hold across the
		// instances (team.limits "shared"), in the database.
		tl := teamlimits.New(st, clk, secrets.RandomID(), teamlimits.Options{
			Shared: func() bool { return settings.GeneralRef().Team.Limits != config.TeamLimitsInstance },
			Lease:  func() time.Duration { return time.Duration(settings.GeneralRef().Team.SlotLeaseMs) * time.Millisecond },
			OnError: func(err error) {
				opts.Log.Warn("shared database: connection limits apply per instance until it answers", slog.String("error", err.Error()))
			},
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{}, 2)
		go func() {
			defer func() { done <- struct{}{} }()
			tl.Run(ctx)
		}()
		// Lease releases the database did not answer are applied when it
		// answers again.
		go func() {
			defer func() { done <- struct{}{} }()
			leaseSvc.RunReleases(ctx, time.Second)
		}()
		// The keys' expired window rows are swept (an idle or deleted
		// key's too), at the injected clock's now, and the deleted
		// connections' slots and pacing rows.
		sweep := startPeriodic(opts.Ticks, teamlimits.SweepEvery, tl.Sweep, func(err error) {
			opts.Log.Warn("shared database: the periodic sweep of the keys' expired rate windows and the deleted connections' limits failed", slog.String("error", err.Error()))
		})
		s.teamStop = func() {
			cancel()
			sweep.stop()
			<-done
			<-done
		}
		team = tl
		// A client key's RPM and TPM windows hold across the instances
		// too (same setting, same fail-open).
		ledger.ShareRates(tl)
	}
	gw = gateway.New(gateway.Deps{Team: team, Engine: engine, Executors: executors, Clock: clk, Logs: requestLogs{s.logs, pub, meter, lines},
		General: settings.GeneralRef, Resilience: settings.ResilienceRef, Pins: pins, Leases: leaseSvc, Meter: meter,
		Gate: gates, Queues: queue.NewSet(), Credentials: refresher,
		Rules: ruleEngine, Spend: costHook{prices: prices, ledger: ledger, meter: meter,
			unpriced: func(model string) []string { return unpricedTargets(engine, prices, model) }}, Capture: bodies, Log: opts.Log, EmergencyFallback: gateway.ParseFlag(opts.Getenv("OMNIROUTE_EMERGENCY_FALLBACK")),
		Prefills: prefills})

	keys = keyring.New()
	if err := ensureDefaultKey(st, box, clk); err != nil {
		return err
	}
	keyRows, err := st.APIKeys()
	if err != nil {
		return err
	}
	keys.Load(keyRows)
	if err := loadBudgets(st, ledger, keyRows); err != nil {
		return err
	}
	var fresh *keyFreshness
	var keysFresh func() error
	if st.Shared() {
		fresh = &keyFreshness{st: st, clk: clk, bound: func() time.Duration {
			return time.Duration(settings.GeneralRef().Team.MaxStalenessMs) * time.Millisecond
		}}
		fresh.revalidated()
		keysFresh = fresh.check
	}

	s.instances = instances.New(st, clk, st.Shared(), instanceName(opts), opts.Version, opts.Process.BaseURL())
	updates, err := update.New(client, releaseKey(opts), clk, opts.Version)
	if err != nil {
		return err
	}
	ssoClient, err := ssoFromEnv(opts.Getenv, opts.Process.BaseURL(), clk)
	if err != nil {
		return err
	}
	if st.Shared() {
		if err := publishInstanceToken(st, s.instances.Name(), token, clk.Now().UnixMilli()); err != nil {
			return err
		}
	}
	s.api = api.New(api.Deps{KeysFresh: keysFresh, Instances: s.instances, Store: st, Box: box, Catalog: catalog, Engine: engine, Gateway: gw, Settings: settings,
		Keys: keys, Clock: clk, Log: opts.Log, Token: token, AllowedHosts: opts.Process.AllowedHosts,
		Dashboard: opts.Dashboard, Version: opts.Version, BaseURL: opts.Process.BaseURL(), StartedAt: clk.Now(), HTTPClient: client, Discovery: &discovery.Client{HTTP: client, UserAgent: userAgent, Now: clk.Now}, Executors: executors, FreshToken: refresher.Fresh, Quotas: quotas, Reload: reload, Events: bus, Leases: leaseSvc, Metrics: meter.Handler(), Rules: ruleEngine,
		Walls: walls, HomeDir: homeDir(opts.Getenv), AuthFailure: meter.AuthFailure, Updates: updates, Pricing: prices, PricingFile: pricingFile, Budgets: ledger, Capture: bodies, CachePeople: st.Shared(),
		SSO: ssoClient, PasswordCost: opts.PasswordCost, BackupCost: opts.BackupCost, Prefills: prefills,
		CheckRestore: func(s backup.State) error { return checkRestorable(st, opts.Getenv, s) },
		Restored: func() error {
			return reloadRestored(restoredViews{st: st, box: box, clk: clk, reload: reload, prices: prices, keys: keys, ledger: ledger, settings: settings})
		},
		Agents: func() *agents.Manager {
			key, _ := s.DefaultKey()
			return agents.ForCurrentUser(opts.Process.BaseURL(), key)
		}})
	s.handler = s.api.Handler()
	if st.Shared() {
		if err := s.instances.Beat(); err != nil {
			return err
		}
		s.follow = startFollower(st, opts.Log, s.instances.Beat, followTargets{
			connections: func() error {
				if err := reload(); err != nil {
					return err
				}
				return pricing.Load(st, prices)
			},
			keys: func() error {
				rows, err := st.APIKeys()
				if err == nil {
					// Budgets first: a key another instance created is
					// never served here before its budget holds.
					err = loadBudgets(st, ledger, rows)
					keys.Load(rows)
					fresh.revalidated()
				}
				return err
			},
			settings: func() error {
				if err := settings.Reload(); err != nil {
					return err
				}
				return bodies.Reload() // body capture settings live in key_value too
			},
			cooldowns: func() error {
				rows, err := st.Connections()
				if err == nil {
					if len(registry.AdoptCooldowns(rows)) > 0 {
						engine.ClampCooldowns() // another instance's clock may be ahead
					}
				}
				return err
			},
			breakers: func() error {
				rows, err := st.Breakers()
				if err == nil {
					adoptBreakers(breakers, rows)
				}
				return err
			},
			pins:       pinFollower(st, pins, clk, pinTTL),
			prefills:   prefills.Reload,
			modelLocks: modelLockFollower(st, engine, clk),
			people:     s.api.ForgetPeople,
		})
	}
	return nil
}

// stopTeam stops the shared limits' renewals, if running.
func (s *Server) stopTeam() {
	if s.teamStop != nil {
		s.teamStop()
		s.teamStop = nil
	}
}

// probeClaimTTL is how long an instance's claim on a HALF_OPEN probe keeps
// the other instances from probing the same provider (the probe's outcome
// normally moves the breaker, and every instance with it, well before).
const probeClaimTTL = 30 * time.Second

// instanceName is OMNIROUTE_INSTANCE_NAME, or host name:port: how the
// instance list and the X-OmniRoute-Instance header name this instance.
func instanceName(opts Options) string {
	if n := strings.TrimSpace(opts.Getenv("OMNIROUTE_INSTANCE_NAME")); n != "" {
		return n
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return fmt.Sprintf("%s:%d", host, opts.Process.Port)
}

// gateLoad reads a connection's in-flight count from the concurrency gate.
type gateLoad struct{ g *gate.Gate }

func (l gateLoad) InFlight(connectionID string) int {
	return l.g.Get(gateway.AccountKey(connectionID)).InFlight
}

// homeDir is the user's home, where the CLIs keep the logins `import` reads
// ($HOME when getenv has it, so tests use a temporary one).
func homeDir(getenv func(string) string) func() (string, error) {
	return func() (string, error) {
		if h := getenv("HOME"); h != "" {
			return h, nil
		}
		return os.UserHomeDir()
	}
}

func categoryOf(catalog *providers.Catalog, breakerKey string) string {
	id, _, _ := strings.Cut(breakerKey, ":")
	if p, ok := catalog.Lookup(id); ok {
		return string(p.Category)
	}
	return string(providers.CategoryAPIKey)
}

// newTransport pools keep-alive connections per upstream host. An HTTP/1.1
// upstream connection holds its read and write buffers as long as it lives
// (an open stream, an idle keep-alive), so each is 2 KiB instead of the
// default 4 KiB: a request is written once (headers with a long OAuth token
// fit; a larger body is written past the buffer), an answer's headers fit
// (a longer header block takes more than one read), and a body is read in
// pieces of at most 2 KiB, or straight into a larger read.
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
		WriteBufferSize:       2 << 10,
		ReadBufferSize:        2 << 10,
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

// MaxHeaderBytes caps a request's header block (net/http allows 4 KiB of
// slack); past it the client gets 431 in the JSON envelope.
const MaxHeaderBytes = 64 << 10

// Serve serves on l until ctx is done, then shuts down gracefully.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	// Headers have a deadline and a size cap here; the body's deadline, the
	// write deadlines and the byte budget are per request (a long stream must
	// not hit a server-wide timeout).
	s.httpSrv = &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second,
		MaxHeaderBytes: MaxHeaderBytes, ErrorLog: httpx.PeerBytesLogger(s.opts.Log.Handler(), slog.LevelDebug)}
	errc := make(chan error, 1)
	go func() { errc <- s.httpSrv.Serve(httpx.EnvelopeListener(l)) }()
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
	s.ckpt.stop()
	s.pinSweep.stop()
	s.pricingWatch.stop()
	s.follow.stop()
	s.behind.stop()
	s.stopTeam()
	if s.instances != nil {
		if err := s.instances.Leave(); err != nil {
			s.opts.Log.Warn("shared database: could not remove this instance's heartbeat", slog.String("error", err.Error()))
		}
	}
	s.logs.Close()
	s.transport.CloseIdleConnections()
	err := s.store.Close()
	if err != nil {
		// The callers defer Close; a checkpoint that could not finish (the
		// main file then lacks the last writes) must still be seen.
		s.opts.Log.Warn("closing the database", slog.String("error", err.Error()))
	}
	s.dir.Close()
	return err
}
