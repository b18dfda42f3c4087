// Package health is the one health model of the gateway: from a snapshot of the
// live state (connections with their cooldowns, provider breakers, model
// lockouts, leases, combos) and now, it decides for every connection, provider
// and combo whether it is serving, why not, since when and when it is back, and
// the overall status (the fraction of configured models that can be served now).
//
// Everything here is a pure function of its Input: the API, the event stream,
// the dashboard and the tray all show what Compute returns, so they can never
// disagree.
package health

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"omniroute/backend/resilience/breaker"
	"omniroute/backend/resilience/cooldown"
	"omniroute/backend/resilience/lockout"
)

// State is what a connection, provider or combo is doing now.
type State string

// States, from worst to best. Serving and Degraded and Leased serve requests;
// ModelsLocked serves the models that are not locked.
const (
	// Setup: nothing is configured yet (overall only).
	Setup State = "setup"
	// Disabled: switched off by the user.
	Disabled State = "disabled"
	// Terminal: banned, expired or out of credits until new credentials or a passing Test.
	Terminal State = "terminal"
	// KeyRejected: the provider rejected the connection's key (401/403 to the
	// credential check, or live auth failures whose message does not say the
	// credentials expired) until a new key is entered.
	KeyRejected State = "key_rejected"
	// EndpointNotFound: the connection's base URL answers 404 to both the
	// model list and the credential check's completion (a missing /v1, a
	// wrong path) until the base URL is edited or a check passes.
	EndpointNotFound State = "endpoint_not_found"
	// Unreachable: the upstream has given no answer at all since the
	// connection was added (at least one attempt or check failed to reach
	// it), or its last UnreachableAfter attempts failed before any answer.
	// Not back by itself: the next answer from the upstream ends it.
	Unreachable State = "unreachable"
	// BreakerOpen: the provider's circuit breaker is OPEN until Until.
	BreakerOpen State = "breaker_open"
	// Cooling: the connection (or its provider window) is cooling down until Until.
	Cooling State = "cooling"
	// ModelsLocked: some (or all) of its models are locked out until Until.
	ModelsLocked State = "models_locked"
	// Leased: held exclusively by one client key until Until. It serves only
	// the holder: for every other caller (and the dashboard) it is not serving.
	Leased State = "leased"
	// Degraded: serving, but its provider breaker is DEGRADED or HALF_OPEN.
	Degraded State = "degraded"
	// Serving: fully in routing.
	Serving State = "serving"
	// Dead: a combo none of whose targets can be served now.
	Dead State = "dead"
	// DiskFull: the disk holding the database is full (Summary.Storage only):
	// requests are still routed, but settings, keys, state and the request
	// log cannot be saved.
	DiskFull State = "disk_full"
)

// AllStates lists every State, worst first (the words catalogue and the
// dashboard's one state list are checked against it).
func AllStates() []State {
	return []State{Setup, Disabled, Terminal, KeyRejected, EndpointNotFound, Unreachable, BreakerOpen, Cooling,
		ModelsLocked, Leased, Degraded, Serving, Dead, DiskFull}
}

// DiskFullReason is the plain message of the DiskFull storage state.
const DiskFullReason = "The disk holding OmniRoute's database is full: new settings, keys and request logs cannot be saved " +
	"(requests are still routed). Free some space on that disk; OmniRoute recovers by itself at the next write."

// Storage is the database's health beside the connections'.
type Storage struct {
	State  State     `json:"state"`
	Reason string    `json:"reason"`
	Since  time.Time `json:"since,omitzero"`
}

// Overall statuses.
const (
	StatusSetup     = "setup"
	StatusHealthy   = "healthy"
	StatusDegraded  = "degraded"
	StatusUnhealthy = "unhealthy"
	// StatusPaused: the operator paused the gateway; clients get 503 whatever
	// the connections could do.
	StatusPaused = "paused"
)

// Conn is one configured connection as the model needs it.
type Conn struct {
	ID   string
	Name string
	// Provider is the breaker key ("openai", "openai-compatible:lab").
	Provider string
	// ProviderID is the catalogue id used by model lockouts ("openai-compatible").
	ProviderID string
	// ProviderName is the display name of the provider.
	ProviderName string
	Active       bool
	Models       []string
	Cooldown     cooldown.State
	// ProviderCoolingUntil is the end of the opt-in provider cooldown window (zero: none).
	ProviderCoolingUntil time.Time
	// Reach is what attempts and checks saw of the upstream being reachable.
	Reach Reach
	// LoadError says why the connection was loaded switched off (its stored
	// credential does not open); "" for none.
	LoadError string
}

// Reach is what the gateway saw of whether a connection's upstream answers.
type Reach struct {
	// Reached: some attempt or check got an answer since the connection was loaded.
	Reached bool
	// Misses counts the consecutive attempts and checks that got no answer.
	Misses int
	// Since is when the current streak of misses began.
	Since time.Time
	// LastMiss is the transport's words for the last miss.
	LastMiss string
}

// UnreachableAfter is how many consecutive attempts without any answer make
// a connection that was reached before unreachable.
const UnreachableAfter = 3

// Unreachable reports whether r makes the connection unreachable.
func (r Reach) Unreachable() bool { return r.unreachable() }

// unreachable reports whether r makes the connection unreachable.
func (r Reach) unreachable() bool {
	return r.Misses > 0 && (!r.Reached || r.Misses >= UnreachableAfter)
}

// Lease is an active exclusive lease on a connection.
type Lease struct {
	// ID is the lease's id (DELETE /api/resilience/leases/{id} releases it).
	ID           string
	ConnectionID string
	KeyID        string
	KeyName      string
	// Model is the model the lease was taken for.
	Model     string
	Since     time.Time
	ExpiresAt time.Time
}

// ComboTarget is one combo member resolved to its candidate connections.
type ComboTarget struct {
	Model string
	// Candidates are (connection id, upstream model) pairs the target can route to.
	Candidates []Candidate
}

// Candidate is one connection a combo target may be sent to, with its model.
type Candidate struct {
	ConnectionID string
	Model        string
}

// Combo is a named model group with its resolved targets.
type Combo struct {
	ID      string
	Name    string
	Targets []ComboTarget
}

// Input is the snapshot Compute reads.
type Input struct {
	Now         time.Time
	Connections []Conn
	Breakers    []breaker.Snapshot
	Lockouts    []lockout.Entry
	// Family names the quota family of a provider's model, the models a
	// quota_family lock covers together (the lockout table's Family; nil:
	// every model is its own family).
	Family lockout.Families
	Leases []Lease
	Combos []Combo
	// ForKey is the client key the picture is for: a connection leased by
	// this key serves; one leased by any other key does not. Empty (the
	// dashboard, the tray): every leased connection is leased, not serving.
	ForKey string
	// Paused: the gateway is paused (the tray's or dashboard's Pause): the
	// overall status is "paused" while the parts keep their own states.
	Paused bool
	// DiskFullSince is when writes began failing for a full disk (zero: the
	// last write succeeded).
	DiskFullSince time.Time
}

// Lock is one active model lockout on a connection.
type Lock struct {
	Model  string    `json:"model"`
	Scope  string    `json:"scope"`
	Reason string    `json:"reason"`
	Since  time.Time `json:"since"`
	Until  time.Time `json:"until"`
}

// Block is one reason a connection is (partly) out of routing.
type Block struct {
	State  State     `json:"state"`
	Reason string    `json:"reason"`
	Since  time.Time `json:"since,omitzero"`
	Until  time.Time `json:"until,omitzero"`
}

// ConnHealth is one connection's health.
type ConnHealth struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Provider     string `json:"provider"`
	ProviderName string `json:"providerName"`
	State        State  `json:"state"`
	// Serving is true when the connection takes at least some requests now.
	Serving bool   `json:"serving"`
	Reason  string `json:"reason"`
	// Since is when the current state began (zero: unknown).
	Since time.Time `json:"since,omitzero"`
	// Until is when it is back (zero: not by itself, e.g. terminal or disabled).
	Until    time.Time `json:"until,omitzero"`
	Blocks   []Block   `json:"blocks"`
	Locks    []Lock    `json:"locks"`
	LeasedBy string    `json:"leasedBy,omitempty"`
	// LeaseID is the holding lease's id (the release_lease fix releases it).
	LeaseID string `json:"leaseId,omitempty"`
	// LeasedModel is the model the holding lease was taken for.
	LeasedModel string `json:"leasedModel,omitempty"`
	// Fixes names the one-click actions that help: reset_breaker, clear_cooldown,
	// unlock_models, release_lease, replace_key, enable, edit_connection.
	Fixes []string `json:"fixes"`
}

// ProviderHealth is one provider's (breaker key's) health.
type ProviderHealth struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	State        State     `json:"state"`
	Breaker      string    `json:"breaker"`
	Failures     int       `json:"failures"`
	Reason       string    `json:"reason"`
	Since        time.Time `json:"since,omitzero"`
	Until        time.Time `json:"until,omitzero"`
	Serving      int       `json:"serving"`
	Total        int       `json:"total"`
	RetryAfterMs int64     `json:"retryAfterMs"`
	LastFailure  time.Time `json:"lastFailure,omitzero"`
}

// ComboHealth is one combo's health.
type ComboHealth struct {
	ID      string    `json:"id"`
	Name    string    `json:"name"`
	State   State     `json:"state"`
	Reason  string    `json:"reason"`
	Until   time.Time `json:"until,omitzero"`
	Serving int       `json:"serving"`
	Total   int       `json:"total"`
	// Targets says, for every member, whether it can be served and why not,
	// with the fixes of each connection it could go to.
	Targets []ComboTargetHealth `json:"targets"`
	// Fixes is the union of the fixes of the connections behind the targets
	// that cannot be served.
	Fixes []string `json:"fixes"`
}

// ComboTargetHealth is one combo member's health.
type ComboTargetHealth struct {
	Model   string `json:"model"`
	Serving bool   `json:"serving"`
	// Reason says why it cannot be served ("" when it can).
	Reason string `json:"reason,omitempty"`
	// Until is when the first of its connections is back by itself (zero:
	// serving, or none comes back without a fix).
	Until time.Time `json:"until,omitzero"`
	// Connections are the connections it could be sent to, each with its
	// state, reason and fixes from the health model.
	Connections []ComboCandidate `json:"connections"`
}

// ComboCandidate is one connection a combo target could be sent to.
type ComboCandidate struct {
	ID     string   `json:"id"`
	Name   string   `json:"name"`
	State  State    `json:"state"`
	Reason string   `json:"reason,omitempty"`
	Fixes  []string `json:"fixes"`
}

// Summary is the overall picture.
type Summary struct {
	Status string `json:"status"`
	// Serving and Total count connections (Serving: takes some requests now).
	Serving int `json:"serving"`
	Total   int `json:"total"`
	// Cooling, BreakerOpen and OutOfService split the connections that are
	// not serving: each one is in exactly one of them (cooling down, its
	// provider breaker open, anything else: rejected key, wrong base URL,
	// unreachable, terminal, switched off, leased to another key), so
	// Serving + Cooling + BreakerOpen + OutOfService == Total. Every count
	// the dashboard, the tray and /metrics show comes from these.
	Cooling      int `json:"cooling"`
	BreakerOpen  int `json:"breakerOpen"`
	OutOfService int `json:"outOfService"`
	// ModelsServable of ModelsTotal configured models can be served now.
	ModelsServable int     `json:"modelsServable"`
	ModelsTotal    int     `json:"modelsTotal"`
	Fraction       float64 `json:"fraction"`
	// Next is the not-serving connection that is back soonest (empty: none timed).
	NextID    string    `json:"nextId,omitempty"`
	NextName  string    `json:"nextName,omitempty"`
	NextBack  time.Time `json:"nextBack,omitzero"`
	Locks     int       `json:"locks"`
	Leases    int       `json:"leases"`
	DeadCombo int       `json:"deadCombos"`
	// Storage is set when the database cannot be written (a full disk).
	Storage *Storage `json:"storage,omitempty"`
}

// Report is everything Compute decides.
type Report struct {
	At          time.Time        `json:"at"`
	Summary     Summary          `json:"summary"`
	Connections []ConnHealth     `json:"connections"`
	Providers   []ProviderHealth `json:"providers"`
	Combos      []ComboHealth    `json:"combos"`
}

// Compute derives the health report from in. It never mutates in.
func Compute(in Input) Report {
	now := in.Now
	r := Report{At: now, Connections: []ConnHealth{}, Providers: []ProviderHealth{}, Combos: []ComboHealth{}}
	breakers := map[string]breaker.Snapshot{}
	for _, b := range in.Breakers {
		breakers[b.Provider] = b
	}
	leases := map[string]Lease{}
	for _, l := range in.Leases {
		if now.Before(l.ExpiresAt) {
			leases[l.ConnectionID] = l
		}
	}
	locks := map[string][]lockout.Entry{}
	for _, e := range in.Lockouts {
		if e.Active(now) {
			locks[e.ConnectionID] = append(locks[e.ConnectionID], e)
			r.Summary.Locks++
		}
	}
	byID := map[string]ConnHealth{}
	conns := map[string]Conn{}
	for _, c := range in.Connections {
		var lease *Lease
		if l, ok := leases[c.ID]; ok {
			lease = &l
		}
		ch := connHealth(c, breakers[c.Provider], locks[c.ID], in.Family, lease, in.ForKey, now)
		r.Connections = append(r.Connections, ch)
		byID[c.ID] = ch
		conns[c.ID] = c
		switch {
		case ch.Serving:
			r.Summary.Serving++
		case ch.State == Cooling:
			r.Summary.Cooling++
		case ch.State == BreakerOpen:
			r.Summary.BreakerOpen++
		default:
			r.Summary.OutOfService++
		}
		if lease != nil {
			r.Summary.Leases++
		}
	}
	r.Summary.Total = len(in.Connections)
	r.Providers = providers(in, breakers, r.Connections, now)
	r.Combos = combos(in.Combos, byID, conns, locks, in.Family, now)
	for _, c := range r.Combos {
		if c.State == Dead {
			r.Summary.DeadCombo++
		}
	}
	r.Summary.ModelsServable, r.Summary.ModelsTotal = models(in.Connections, byID, locks, in.Family)
	if r.Summary.ModelsTotal > 0 {
		r.Summary.Fraction = float64(r.Summary.ModelsServable) / float64(r.Summary.ModelsTotal)
	}
	for _, c := range r.Connections {
		if c.Serving || c.State == Disabled || c.Until.IsZero() {
			continue
		}
		if r.Summary.NextBack.IsZero() || c.Until.Before(r.Summary.NextBack) {
			r.Summary.NextID, r.Summary.NextName, r.Summary.NextBack = c.ID, c.Name, c.Until
		}
	}
	if !in.DiskFullSince.IsZero() {
		r.Summary.Storage = &Storage{State: DiskFull, Reason: DiskFullReason, Since: in.DiskFullSince}
	}
	r.Summary.Status = status(r)
	if in.Paused {
		r.Summary.Status = StatusPaused
	}
	return r
}

// status: setup without connections; unhealthy when no configured model can be
// served; healthy when everything serves fully and the database can be
// written; degraded in between.
func status(r Report) string {
	switch {
	case r.Summary.Total == 0:
		return StatusSetup
	case r.Summary.ModelsServable == 0 && !leasedAway(r):
		return StatusUnhealthy
	case r.Summary.Storage != nil:
		return StatusDegraded
	}
	for _, c := range r.Connections {
		if c.State != Serving && !(c.State == Leased && c.Serving) && c.State != Disabled {
			return StatusDegraded
		}
	}
	if r.Summary.DeadCombo > 0 || r.Summary.ModelsServable < r.Summary.ModelsTotal {
		return StatusDegraded
	}
	return StatusHealthy
}

// leasedAway reports whether some connection is out only because another key
// leases it: its holder is served, so the gateway is degraded, not unhealthy.
func leasedAway(r Report) bool {
	for _, c := range r.Connections {
		if c.State == Leased && !c.Serving {
			return true
		}
	}
	return false
}

// connHealth decides one connection's state. The primary state is the first that
// applies of: disabled, terminal, breaker open, cooling, all models locked,
// leased, some models locked, degraded breaker, serving. Until is the latest
// deadline among the blocks that keep it out of routing.
func connHealth(c Conn, b breaker.Snapshot, locks []lockout.Entry, fam lockout.Families, lease *Lease, forKey string, now time.Time) ConnHealth {
	ch := decideConn(c, b, locks, fam, lease, forKey, now)
	ch.Fixes = fitFixes(ch.State, ch.Fixes)
	return ch
}

// ownFix is the one fix of a state that only a person can end: clearing a
// cooldown, resetting a breaker or unlocking models never brings back a
// rejected key, a wrong base URL or an upstream that does not answer, so
// those are not offered beside it.
var ownFix = map[State]string{KeyRejected: "replace_key", EndpointNotFound: "edit_connection", Unreachable: "edit_connection", Terminal: "edit_connection"}

// fitFixes keeps the fixes that can help a connection in state: the state's
// own fix for a state only a person ends; enable (or replace_key for a
// credential that does not open) for a disabled one; all of them otherwise.
func fitFixes(state State, fixes []string) []string {
	if f, ok := ownFix[state]; ok {
		return []string{f}
	}
	if state == Disabled {
		out := []string{}
		for _, f := range fixes {
			if f == "enable" || f == "replace_key" {
				out = append(out, f)
			}
		}
		return out
	}
	return fixes
}

// decideConn decides one connection's state, reason, deadline and every fix
// that touches one of its blocks (connHealth then keeps those that fit).
func decideConn(c Conn, b breaker.Snapshot, locks []lockout.Entry, fam lockout.Families, lease *Lease, forKey string, now time.Time) ConnHealth {
	ch := ConnHealth{ID: c.ID, Name: c.Name, Provider: c.Provider, ProviderName: c.ProviderName,
		Blocks: []Block{}, Locks: []Lock{}, Fixes: []string{}}
	cd := c.Cooldown
	var blocks []Block
	if term := cooldown.TerminalOf(cd); keyRejected(term, cd) {
		blocks = append(blocks, Block{State: KeyRejected, Reason: keyRejectedReason(cd), Since: cd.LastErrorAt})
		ch.Fixes = append(ch.Fixes, "replace_key")
	} else if term == string(EndpointNotFound) {
		blocks = append(blocks, Block{State: EndpointNotFound, Reason: endpointNotFoundReason(cd), Since: cd.LastErrorAt})
		ch.Fixes = append(ch.Fixes, "edit_connection")
	} else if term != "" {
		blocks = append(blocks, Block{State: Terminal, Reason: terminalReason(term, cd), Since: cd.LastErrorAt})
		ch.Fixes = append(ch.Fixes, "edit_connection")
	} else if ok, _, _ := cooldown.Eligible(cd, now); !ok {
		if now.Before(cd.RateLimitedUntil) {
			blocks = append(blocks, Block{State: Cooling, Reason: coolingReason(cd), Since: cd.LastErrorAt, Until: cd.RateLimitedUntil})
			ch.Fixes = append(ch.Fixes, "clear_cooldown")
		} else {
			blocks = append(blocks, Block{State: Terminal, Reason: "out of service: " + kindPhrase(orElse(cd.TestStatus, cd.LastErrorType)), Since: cd.LastErrorAt})
			ch.Fixes = append(ch.Fixes, "edit_connection")
		}
	}
	if c.Reach.unreachable() {
		why := "the upstream could not be reached"
		if c.Reach.Misses > 1 {
			why += " (" + strconv.Itoa(c.Reach.Misses) + " attempts in a row)"
		}
		if c.Reach.LastMiss != "" {
			why += ": " + c.Reach.LastMiss
		}
		blocks = append(blocks, Block{State: Unreachable, Reason: why, Since: c.Reach.Since})
		if !slices.Contains(ch.Fixes, "edit_connection") {
			ch.Fixes = append(ch.Fixes, "edit_connection")
		}
	}
	if b.State == breaker.Open {
		until := now.Add(b.RetryAfter)
		blocks = append(blocks, Block{State: BreakerOpen, Reason: breakerReason(b), Since: b.OpenedAt, Until: until})
		ch.Fixes = append(ch.Fixes, "reset_breaker")
	}
	if now.Before(c.ProviderCoolingUntil) {
		blocks = append(blocks, Block{State: Cooling, Reason: "provider cooldown window after repeated failures", Until: c.ProviderCoolingUntil})
	}
	for _, e := range locks {
		ch.Locks = append(ch.Locks, Lock{Model: e.Model, Scope: string(e.Scope), Reason: lockReason(e), Since: e.LockedAt, Until: e.ExpiresAt})
	}
	sort.Slice(ch.Locks, func(i, j int) bool { return ch.Locks[i].Until.Before(ch.Locks[j].Until) })
	if len(locks) > 0 {
		ch.Fixes = append(ch.Fixes, "unlock_models")
	}
	ch.Blocks = append(ch.Blocks, blocks...)
	allLocked := len(locks) > 0 && allModelsLocked(c, locks, fam)
	if lease != nil {
		ch.LeasedBy = orElse(lease.KeyName, lease.KeyID)
		ch.LeaseID, ch.LeasedModel = lease.ID, lease.Model
	}
	switch {
	case c.LoadError != "":
		ch.State, ch.Reason = Disabled, c.LoadError
		ch.Blocks = append([]Block{{State: Disabled, Reason: c.LoadError}}, ch.Blocks...)
		ch.Until = time.Time{}
		ch.Fixes = append(ch.Fixes, "replace_key")
		return ch
	case !c.Active:
		ch.State, ch.Reason = Disabled, "switched off"
		ch.Blocks = append([]Block{{State: Disabled, Reason: "switched off"}}, ch.Blocks...)
		ch.Until = time.Time{}
		ch.Fixes = append(ch.Fixes, "enable")
		return ch
	case len(blocks) > 0:
		first := blocks[0]
		ch.State, ch.Reason, ch.Since = first.State, first.Reason, first.Since
		// Precedence among simultaneous blocks: terminal, breaker, cooling.
		for _, s := range []State{KeyRejected, EndpointNotFound, Terminal, Unreachable, BreakerOpen, Cooling} {
			if x, ok := findBlock(blocks, s); ok {
				ch.State, ch.Reason, ch.Since = x.State, x.Reason, x.Since
				break
			}
		}
		// Terminal, rejected and unreachable are not back by themselves: no
		// "back in" beside them (a cooldown ending does not reach the upstream).
		if ch.State != Terminal && ch.State != KeyRejected && ch.State != EndpointNotFound && ch.State != Unreachable {
			for _, x := range blocks {
				if x.Until.After(ch.Until) {
					ch.Until = x.Until
				}
			}
			if allLocked && ch.Locks[0].Until.After(ch.Until) {
				ch.Until = ch.Locks[0].Until
			}
		}
		return ch
	case allLocked:
		ch.State, ch.Reason = ModelsLocked, "every model locked: "+ch.Locks[0].Reason
		// Back as soon as the first lock lapses (the locks are sorted by Until).
		ch.Since, ch.Until = earliestSince(ch.Locks), ch.Locks[0].Until
		ch.Blocks = append(ch.Blocks, Block{State: ModelsLocked, Reason: ch.Reason, Since: ch.Since, Until: ch.Until})
		return ch
	}
	if lease != nil && (forKey == "" || lease.KeyID != forKey) {
		// Serving means serving for this caller: another key's exclusive lease
		// holds the whole connection until it expires or is released.
		ch.State, ch.Reason, ch.Since, ch.Until = Leased, "held exclusively by "+ch.LeasedBy, lease.Since, lease.ExpiresAt
		ch.Blocks = append(ch.Blocks, Block{State: Leased, Reason: ch.Reason, Since: ch.Since, Until: ch.Until})
		ch.Fixes = append(ch.Fixes, "release_lease")
		return ch
	}
	ch.Serving = true
	switch {
	case lease != nil:
		ch.State, ch.Reason, ch.Since, ch.Until = Leased, "held exclusively by you ("+ch.LeasedBy+")", lease.Since, lease.ExpiresAt
	case len(locks) > 0:
		ch.State = ModelsLocked
		ch.Reason = lockedModelsReason(ch.Locks)
		ch.Since, ch.Until = earliestSince(ch.Locks), ch.Locks[0].Until
	case b.State == breaker.Degraded || b.State == breaker.HalfOpen:
		ch.State, ch.Reason, ch.Since = Degraded, breakerReason(b), b.StateChangedAt
		ch.Fixes = append(ch.Fixes, "reset_breaker")
	default:
		ch.State = Serving
	}
	return ch
}

func findBlock(bs []Block, s State) (Block, bool) {
	for _, b := range bs {
		if b.State == s {
			return b, true
		}
	}
	return Block{}, false
}

// allModelsLocked: a connection with a model list is fully locked when every
// listed model is covered; without a list, it is locked only if a lock exists
// and it has no list to serve anything else from — we cannot know, so a
// connection without a list stays serving.
func allModelsLocked(c Conn, locks []lockout.Entry, fam lockout.Families) bool {
	if len(c.Models) == 0 {
		return false
	}
	for _, m := range c.Models {
		if !modelLocked(c.ProviderID, m, locks, fam) {
			return false
		}
	}
	return true
}

// modelLocked reports whether one of locks covers model on its connection.
func modelLocked(provider, model string, locks []lockout.Entry, fam lockout.Families) bool {
	for _, e := range locks {
		if lockCovers(provider, model, e, fam) {
			return true
		}
	}
	return false
}

// lockCovers reports whether e blocks model: a quota_family lock every
// model of its family (fam; nil: its own model only), any other its model.
func lockCovers(provider, model string, e lockout.Entry, fam lockout.Families) bool {
	if e.Scope == lockout.ScopeQuotaFamily && fam != nil {
		return strings.EqualFold(fam(provider, model), fam(provider, e.Model))
	}
	return strings.EqualFold(e.Model, model)
}

func earliestSince(locks []Lock) time.Time {
	var t time.Time
	for _, l := range locks {
		if t.IsZero() || (!l.Since.IsZero() && l.Since.Before(t)) {
			t = l.Since
		}
	}
	return t
}

func lockedModelsReason(locks []Lock) string {
	names := make([]string, 0, len(locks))
	for _, l := range locks {
		names = append(names, l.Model)
	}
	if len(names) == 1 {
		return names[0] + " locked: " + locks[0].Reason
	}
	return strings.Join(names, ", ") + " locked"
}

// keyRejected: the credential check's key_rejected, or live auth failures
// that became "expired" although the provider never said the credentials
// expired (a wrong key is not an expired one).
func keyRejected(term string, cd cooldown.State) bool {
	switch term {
	case "key_rejected":
		return true
	case "expired":
		return cd.ErrorCode == "UPSTREAM_AUTH_FAILED" && !strings.Contains(strings.ToLower(cd.LastError), "expir")
	}
	return false
}

// keyRejectedReason is "the provider rejected this key", with the upstream's
// own words when the check stored them.
func keyRejectedReason(cd cooldown.State) string {
	const base = "the provider rejected this key"
	if strings.HasPrefix(cd.LastError, base) {
		return cd.LastError
	}
	if cd.LastError != "" {
		return base + " (" + cd.LastError + ")"
	}
	return base
}

// endpointNotFoundReason is "this URL answers 404: check the base URL", with
// what the check stored.
func endpointNotFoundReason(cd cooldown.State) string {
	const base = "this URL answers 404: check the base URL"
	if strings.HasPrefix(cd.LastError, base) {
		return cd.LastError
	}
	return base
}

func terminalReason(term string, _ cooldown.State) string {
	label := map[string]string{"banned": "account suspended by the provider", "expired": "credentials expired", "credits_exhausted": "no credits left on the account"}[term]
	if label == "" {
		label = kindPhrase(term)
	}
	return label
}

// coolingReason says in words what the connection rests after ("rate
// limited by the provider"), never the raw error code.
func coolingReason(cd cooldown.State) string {
	return kindPhrase(orElse(cd.LastErrorType, "error"))
}

// kindPhrases are the plain words of the verdict kinds a cooldown, a lock or
// a terminal state records.
var kindPhrases = map[string]string{
	"rate_limit": "rate limited by the provider", "concurrency_limit": "too many requests at once for this account",
	"quota": "quota used up", "auth": "credentials not accepted", "forbidden": "access refused by the provider",
	"request_rejected": "request refused by the provider", "banned": "account suspended by the provider",
	"credits_exhausted": "no credits left on the account", "not_found": "the provider does not know this model or address",
	"bad_request": "the provider said the request was invalid", "context_length": "too long for the model",
	"content_policy": "refused by the provider's safety filter", "server": "errors from the provider",
	"transport": "could not reach the provider", "timeout": "no answer in time", "stall": "the answer stopped arriving",
	"error": "errors", "expired": "credentials expired",
}

// kindPhrase is the plain words of a verdict kind (an unknown kind in words).
func kindPhrase(kind string) string {
	if p, ok := kindPhrases[kind]; ok {
		return p
	}
	return strings.ReplaceAll(strings.ToLower(kind), "_", " ")
}

func breakerReason(b breaker.Snapshot) string {
	switch b.State {
	case breaker.Open:
		return "provider circuit breaker open after " + strconv.Itoa(b.Failures) + " failures"
	case breaker.HalfOpen:
		return "provider circuit breaker probing (half-open)"
	case breaker.Degraded:
		return "provider circuit breaker degraded: " + strconv.Itoa(b.Failures) + " recent failures"
	}
	return ""
}

func lockReason(e lockout.Entry) string {
	return kindPhrase(orElse(e.Reason, "error"))
}

func orElse(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// providers folds the connections into one entry per breaker key (every key
// that has a connection or a breaker).
func providers(in Input, breakers map[string]breaker.Snapshot, conns []ConnHealth, now time.Time) []ProviderHealth {
	byKey := map[string]*ProviderHealth{}
	var order []string
	get := func(key, name string) *ProviderHealth {
		p, ok := byKey[key]
		if !ok {
			p = &ProviderHealth{ID: key, Name: orElse(name, key), Breaker: string(breaker.Closed)}
			byKey[key] = p
			order = append(order, key)
		}
		return p
	}
	var earliest = map[string]time.Time{}
	// earliestState is the state of the connection back soonest: a provider
	// that is back at that time reads as that state (cooling, breaker open),
	// never "out of service" beside "back in 6 min".
	earliestState := map[string]State{}
	for _, c := range conns {
		p := get(c.Provider, c.ProviderName)
		p.Total++
		if c.Serving {
			p.Serving++
		} else if !c.Until.IsZero() && (earliest[c.Provider].IsZero() || c.Until.Before(earliest[c.Provider])) {
			earliest[c.Provider], earliestState[c.Provider] = c.Until, c.State
		}
	}
	for _, b := range in.Breakers {
		p := get(b.Provider, "")
		p.Breaker, p.Failures, p.LastFailure = string(b.State), b.Failures, b.LastFailureAt
		if b.State == breaker.Open {
			p.RetryAfterMs = b.RetryAfter.Milliseconds()
		}
	}
	out := make([]ProviderHealth, 0, len(order))
	for _, key := range order {
		p := byKey[key]
		b, hasBreaker := breakers[key]
		switch {
		case hasBreaker && b.State == breaker.Open:
			p.State, p.Reason, p.Since, p.Until = BreakerOpen, breakerReason(b), b.OpenedAt, now.Add(b.RetryAfter)
		case p.Total > 0 && p.Serving == 0:
			p.State, p.Until = worstConnState(conns, key), earliest[key]
			if !p.Until.IsZero() {
				p.State = earliestState[key]
			}
			p.Reason = "no connection of this provider can serve now"
		case hasBreaker && (b.State == breaker.Degraded || b.State == breaker.HalfOpen):
			p.State, p.Reason, p.Since = Degraded, breakerReason(b), b.StateChangedAt
		case p.Serving < p.Total:
			p.State, p.Reason, p.Until = Degraded, strconv.Itoa(p.Total-p.Serving)+" of "+strconv.Itoa(p.Total)+" connections not serving", earliest[key]
		case lockedOn(conns, key) > 0:
			p.State, p.Reason = Degraded, "models locked on "+strconv.Itoa(lockedOn(conns, key))+" of "+strconv.Itoa(p.Total)+" connections"
		case p.Total == 0:
			p.State, p.Reason = Serving, "no connections"
		default:
			p.State = Serving
		}
		out = append(out, *p)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// lockedOn counts the provider's connections that serve with some models locked.
func lockedOn(conns []ConnHealth, key string) int {
	n := 0
	for _, c := range conns {
		if c.Provider == key && c.Serving && c.State == ModelsLocked {
			n++
		}
	}
	return n
}

func worstConnState(conns []ConnHealth, key string) State {
	rank := map[State]int{KeyRejected: 0, EndpointNotFound: 0, Terminal: 0, Unreachable: 0, BreakerOpen: 1, Cooling: 2, ModelsLocked: 3, Leased: 3, Disabled: 4}
	best, bestRank := Disabled, 99
	for _, c := range conns {
		if c.Provider != key {
			continue
		}
		if r, ok := rank[c.State]; ok && r < bestRank {
			best, bestRank = c.State, r
		}
	}
	return best
}

// combos: a combo is serving when some target has a candidate connection that is
// serving and has not locked that target's model; dead otherwise, back when its
// first candidate is.
func combos(in []Combo, byID map[string]ConnHealth, conns map[string]Conn, locks map[string][]lockout.Entry, fam lockout.Families, now time.Time) []ComboHealth {
	out := make([]ComboHealth, 0, len(in))
	for _, co := range in {
		ch := ComboHealth{ID: co.ID, Name: co.Name, Total: len(co.Targets), Targets: []ComboTargetHealth{}, Fixes: []string{}}
		var reasons []string
		for _, t := range co.Targets {
			ok := false
			th := ComboTargetHealth{Model: t.Model, Connections: []ComboCandidate{}}
			var why []string
			for _, cand := range t.Candidates {
				c, known := byID[cand.ConnectionID]
				if !known {
					continue
				}
				cc := ComboCandidate{ID: c.ID, Name: c.Name, State: c.State, Reason: c.Reason, Fixes: c.Fixes}
				locked := modelLocked(conns[c.ID].ProviderID, cand.Model, locks[c.ID], fam)
				if c.Serving && !locked {
					ok = true
					cc.Reason = ""
				} else if c.Serving && locked {
					cc.State, cc.Reason = ModelsLocked, cand.Model+" locked"
				}
				th.Connections = append(th.Connections, cc)
				if c.Serving && !locked {
					continue
				}
				why = append(why, c.Name+": "+cc.Reason)
				// A connection that is not back by itself (rejected key,
				// wrong base URL, unreachable, terminal, switched off) keeps
				// the target down whatever its model locks say: no "back in".
				until := c.Until
				if !c.Serving && until.IsZero() {
					continue
				}
				for _, e := range locks[c.ID] {
					if lockCovers(conns[c.ID].ProviderID, cand.Model, e, fam) && e.ExpiresAt.After(until) {
						until = e.ExpiresAt
					}
				}
				if !until.IsZero() && until.After(now) && (th.Until.IsZero() || until.Before(th.Until)) {
					th.Until = until
				}
			}
			th.Serving = ok
			if ok {
				ch.Serving++
				th.Until = time.Time{}
			} else {
				if !th.Until.IsZero() && (ch.Until.IsZero() || th.Until.Before(ch.Until)) {
					ch.Until = th.Until
				}
				if len(t.Candidates) == 0 {
					th.Reason = "no connection serves it"
				} else {
					th.Reason = strings.Join(why, "; ")
				}
				reasons = append(reasons, t.Model+" — "+th.Reason)
				for _, cc := range th.Connections {
					for _, f := range cc.Fixes {
						if !slices.Contains(ch.Fixes, f) {
							ch.Fixes = append(ch.Fixes, f)
						}
					}
				}
			}
			ch.Targets = append(ch.Targets, th)
		}
		switch {
		case ch.Serving == 0:
			ch.State = Dead
			ch.Reason = "no target can serve now"
			if len(reasons) > 0 {
				ch.Reason += " (" + strings.Join(reasons, "; ") + ")"
			}
		case ch.Serving < ch.Total:
			ch.State, ch.Reason = Degraded, strings.Join(reasons, "; ")
			ch.Until = time.Time{}
		default:
			ch.State, ch.Until = Serving, time.Time{}
		}
		out = append(out, ch)
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i].Name) < strings.ToLower(out[j].Name) })
	return out
}

// models counts the configured models (a connection's listed models, or
// "<provider>/*" for a connection without a list) of active connections, and how
// many some serving connection can serve now.
func models(conns []Conn, byID map[string]ConnHealth, locks map[string][]lockout.Entry, fam lockout.Families) (servable, total int) {
	ok := map[string]bool{}
	var keys []string
	for _, c := range conns {
		if !c.Active {
			continue
		}
		names := c.Models
		wild := len(names) == 0
		if wild {
			names = []string{"*"}
		}
		for _, m := range names {
			key := strings.ToLower(m)
			if wild {
				key = c.Provider + "/*"
			}
			if _, seen := ok[key]; !seen {
				ok[key] = false
				keys = append(keys, key)
			}
			h := byID[c.ID]
			if h.Serving && (wild || !modelLocked(c.ProviderID, m, locks[c.ID], fam)) {
				ok[key] = true
			}
		}
	}
	for _, k := range keys {
		if ok[k] {
			servable++
		}
	}
	return servable, len(keys)
}
