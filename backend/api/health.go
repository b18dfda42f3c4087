package api

import (
	"net/http"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"omniroute/backend/errs"
	"omniroute/backend/health"
	"omniroute/backend/httpx"
	"omniroute/backend/resilience/lockout"
	"omniroute/backend/routing"
	"omniroute/backend/words"
)

// Health is the overall status the dashboard and the tray show: the health
// model's Report plus the legacy counters of GET /api/monitoring/health.
type Health struct {
	Status          string
	CircuitBreakers map[string]int
	ProviderHealth  map[string]any
	CoolingDown     int
	Terminal        int
	Total           int
	SoonestRetryMs  int64
	ActiveAvailable int
	Lockouts        int
	Leases          int
	Report          health.Report
}

// HealthInput snapshots the live state for the health model.
func (a *API) HealthInput() health.Input {
	now := a.Clock.Now()
	locks := a.Engine.ModelLocks()
	entries := make([]lockout.Entry, 0, len(locks))
	for _, l := range locks {
		entries = append(entries, l.Entry) // model lockouts and model cooldowns alike take a model out
	}
	in := health.Input{Now: now, Breakers: a.Engine.Breakers().Snapshots(), Lockouts: entries, Family: a.Engine.Lockouts().Family, Paused: a.Paused()}
	if a.Store != nil {
		in.DiskFullSince = a.Store.DiskFullSince()
	}
	reg := a.Engine.Registry()
	for _, c := range reg.All() {
		hc := health.Conn{ID: c.ID, Name: c.Name, Provider: c.BreakerKey, ProviderID: c.Provider.ID,
			ProviderName: providerDisplayName(c), Active: c.Active, Models: c.Models, Cooldown: c.Cooldown(), LoadError: c.LoadError}
		if r := c.Reach(); r.Misses > 0 {
			hc.Reach = health.Reach{Reached: r.Reached, Misses: r.Misses, Since: r.Since, LastMiss: r.LastMiss}
		}
		if d := a.Engine.ProviderCoolingRemaining(c.BreakerKey); d > 0 {
			hc.ProviderCoolingUntil = now.Add(d)
		}
		in.Connections = append(in.Connections, hc)
	}
	in.Leases = a.activeLeases()
	for _, co := range a.Engine.Combos().All() {
		hc := health.Combo{ID: co.ID, Name: co.Name}
		for _, t := range co.Targets {
			ht := health.ComboTarget{Model: t.Model}
			cands, _ := reg.Resolve(t.Model, routing.Access{})
			for _, cand := range cands {
				if t.ConnectionID == "" || t.ConnectionID == cand.Conn.ID {
					ht.Candidates = append(ht.Candidates, health.Candidate{ConnectionID: cand.Conn.ID, Model: cand.Model})
				}
			}
			hc.Targets = append(hc.Targets, ht)
		}
		in.Combos = append(in.Combos, hc)
	}
	return in
}

// leaseView caches the active leases as the health model needs them: health is
// computed after every event for every stream, so the database is read only
// when the set of held connections (the lease service's cached view) changes.
type leaseView struct {
	mu     sync.Mutex
	sig    string
	leases []health.Lease
}

func (a *API) activeLeases() []health.Lease {
	if a.Leases == nil {
		return nil
	}
	held := a.Leases.Held()
	if len(held) == 0 {
		return nil
	}
	keys := make([]string, 0, len(held))
	for c, owner := range held {
		_, until, _ := a.Leases.HeldBy(c) // a renewal moves the expiry
		keys = append(keys, c+"="+owner+"@"+strconv.FormatInt(until.UnixMilli(), 10))
	}
	sort.Strings(keys)
	sig := strings.Join(keys, ",")
	v := &a.leaseView
	v.mu.Lock()
	defer v.mu.Unlock()
	if sig == v.sig {
		return v.leases
	}
	rows, err := a.Leases.Active()
	if err != nil {
		return v.leases
	}
	out := make([]health.Lease, 0, len(rows))
	for _, l := range rows {
		name := ""
		if a.Keys != nil {
			name = a.Keys.NameOf(l.APIKeyID)
		}
		out = append(out, health.Lease{ID: l.ID, ConnectionID: l.ConnectionID, Model: l.Model, KeyID: l.APIKeyID, KeyName: name,
			Since: time.UnixMilli(l.AcquiredAt), ExpiresAt: time.UnixMilli(l.ExpiresAt)})
	}
	v.sig, v.leases = sig, out
	return out
}

// providerDisplayName is how pages name a connection's provider: the catalogue
// name, or for a user-defined endpoint (its own provider) the connection's
// name. The raw breaker key stays in "provider".
func providerDisplayName(c *routing.Conn) string {
	if !c.Provider.UserDefined {
		return c.Provider.Name
	}
	// The name the user typed for the endpoint ("Lab box"), not its routing
	// prefix ("lab") or breaker key ("openai-compatible:lab"): one name on
	// every screen.
	return c.Name
}

// HealthReport computes the health model now.
func (a *API) HealthReport() health.Report { return health.Compute(a.HealthInput()) }

// ComputeHealth derives the overall health from the health model (status is
// setup / healthy / degraded / unhealthy) with the legacy counters.
func (a *API) ComputeHealth() Health {
	rep := a.HealthReport()
	now := rep.At
	h := Health{ProviderHealth: map[string]any{}, Report: rep, Status: rep.Summary.Status}
	open, half, degraded, closed, total := a.Engine.Breakers().Counts()
	h.CircuitBreakers = map[string]int{"open": open, "halfOpen": half, "degraded": degraded, "closed": closed, "total": total}
	for _, s := range a.Engine.Breakers().Snapshots() {
		var last any
		if !s.LastFailureAt.IsZero() {
			last = s.LastFailureAt.UTC().Format(time.RFC3339)
		}
		h.ProviderHealth[s.Provider] = map[string]any{"state": s.State, "failures": s.Failures,
			"lastFailure": last, "retryAfterMs": s.RetryAfter.Milliseconds()}
	}
	h.Lockouts = rep.Summary.Locks
	h.Leases = rep.Summary.Leases
	// The legacy counters come from the health model's one split of the
	// connections (Summary), so /metrics, the tray and every page agree:
	// coolingDown = cooling, terminal = everything else not serving but an
	// open breaker (out of service).
	h.Total, h.CoolingDown, h.Terminal = rep.Summary.Total, rep.Summary.Cooling, rep.Summary.OutOfService
	for _, c := range rep.Connections {
		if c.Serving {
			h.ActiveAvailable++
		}
		if c.State == health.Cooling && !c.Serving && !c.Until.IsZero() {
			if ms := c.Until.Sub(now).Milliseconds(); ms > 0 && (h.SoonestRetryMs == 0 || ms < h.SoonestRetryMs) {
				h.SoonestRetryMs = ms
			}
		}
	}
	return h
}

// healthAuthenticated reports whether a health request carries the
// management token. A wrong token is a failed authentication like anywhere
// else (the full answer would tell a guesser it was right), and a throttled
// remote source gets the anonymous answer without its token being checked.
func (a *API) healthAuthenticated(r *http.Request) bool {
	if bearer(r) == "" {
		// A signed-in dashboard's session cookie (a stale one is no guess).
		c, err := r.Cookie(SessionCookie)
		return err == nil && c.Value != "" && a.isManagement(r)
	}
	if a.authPrecheck(r, authRouteManagement) != nil {
		return false
	}
	if a.isManagement(r) {
		return true
	}
	_ = a.authFailure(r, authRouteManagement, nil)
	return false
}

func (a *API) health(w http.ResponseWriter, r *http.Request) {
	h := a.ComputeHealth()
	if k := r.URL.Query().Get("keyId"); k != "" && a.isManagement(r) {
		// The picture for one client key: a connection it leases serves it,
		// one leased by another key does not.
		in := a.HealthInput()
		in.ForKey = k
		h.Report = health.Compute(in)
		h.Status = h.Report.Summary.Status
	}
	out := map[string]any{"status": h.Status, "setupComplete": h.Total > 0}
	if !a.healthAuthenticated(r) {
		httpx.WriteJSON(w, http.StatusOK, out)
		return
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	out["version"] = a.Version
	out["endpoint"] = a.BaseURL + "/v1"
	out["paused"] = a.Paused()
	out["uptime"] = int64(a.Clock.Now().Sub(a.StartedAt).Seconds())
	out["memoryUsage"] = map[string]any{"heapAlloc": ms.HeapAlloc, "sys": ms.Sys, "goroutines": runtime.NumGoroutine()}
	out["circuitBreakers"] = h.CircuitBreakers
	out["providerHealth"] = h.ProviderHealth
	out["connectionHealth"] = map[string]any{"coolingDown": h.CoolingDown, "terminal": h.Terminal,
		"total": h.Total, "soonestRetryAfterMs": h.SoonestRetryMs}
	lockouts := []map[string]any{}
	for _, e := range a.Engine.ModelLocks() {
		lockouts = append(lockouts, a.lockoutJSON(e, a.Clock.Now()))
	}
	out["lockouts"] = lockouts
	out["leases"] = map[string]any{"active": h.Leases}
	out["generatedAt"] = h.Report.At.UTC().Format(time.RFC3339Nano)
	out["summary"] = h.Report.Summary
	out["connections"] = h.Report.Connections
	out["providers"] = h.Report.Providers
	out["combos"] = h.Report.Combos
	out["subscriptions"] = a.subscriptionHealth()
	httpx.WriteJSON(w, http.StatusOK, out)
}

// resetBreakers closes every provider breaker and clears the opt-in provider
// window gate (its cooldowns), or only ?provider=<breaker key>'s.
// resetCount counts the breakers reset plus the window cooldowns cleared;
// providerCooldownsCleared the latter alone.
func (a *API) resetBreakers(w http.ResponseWriter, r *http.Request) {
	if p := r.URL.Query().Get("provider"); p != "" {
		n := a.Engine.ResetProviderCooldowns(p)
		found := n > 0
		for _, s := range a.Engine.Breakers().Snapshots() {
			if s.Provider == p {
				a.Engine.Breakers().Get(p).Reset()
				found = true
				break
			}
		}
		if !found {
			httpx.WriteError(w, errs.New(errs.NotFound, "PROVIDER_NOT_FOUND", "no breaker for provider %q", p).WithParam("provider"))
			return
		}
		httpx.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "resetCount": 1, "providerCooldownsCleared": n})
		return
	}
	windows := a.Engine.ResetProviderCooldowns("")
	n := a.Engine.Breakers().ResetAll()
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "resetCount": n + windows, "providerCooldownsCleared": windows})
}

func errInvalidQuery(param, msg string) error {
	return errs.New(errs.Invalid, "INVALID_QUERY", "%s", msg).WithParam(param)
}

// wordsRoute serves GET /api/words: the one catalogue of plain words for
// every error code, verdict, exclusion reason, health state and fix (the
// dashboard shows these sentences, with the code as a small tag).
func (a *API) wordsRoute(w http.ResponseWriter, r *http.Request) {
	httpx.WriteJSON(w, http.StatusOK, a.words())
}

// words is the plain-words catalogue with the provider modules' own codes.
func (a *API) words() words.Catalogue {
	c := words.Get()
	if a.Catalog != nil {
		for code, sentence := range a.Catalog.Words() {
			c.Codes[code] = sentence
		}
	}
	return c
}
