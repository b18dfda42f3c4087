// Package wall is the Claude subscription usage wall (guide §2, "Muro de uso
// do Claude OAuth"): the low-priority lane (lowPriorityMode) and the session
// limit reset claim (autoLimitReset), both opt-in per connection.
//
// Everything here is a pure state machine: the caller passes the connection's
// State, the parsed response Signal, the request's own progress and now, and
// gets back the new State and one Decision (pass the answer on, retry at once
// in the slow lane, wait then retry, claim the reset, retry at full speed).
// State lives in memory per connection (Table); a restart costs one extra wall
// 429 to accept the offer again.
//
// The wall is a 429 whose headers carry anthropic-ratelimit-unified-status:
// rejected; the lane is offered when anthropic-ratelimit-unified-slow-offer is
// "treatment". A burst 429 without the unified headers is not the wall and
// passes to the normal cooldown path.
package wall

import (
	"strconv"
	"strings"
	"sync"
	"time"
)

// Header names of the wire contract (Claude Code's /low-priority and /limit-reset).
const (
	HeaderUsageLimit     = "anthropic-usage-limit" // request: "slow" in the lane
	HeaderStatus         = "anthropic-ratelimit-unified-status"
	HeaderReset          = "anthropic-ratelimit-unified-reset"
	HeaderFiveHourReset  = "anthropic-ratelimit-unified-5h-reset"
	HeaderSlowOffer      = "anthropic-ratelimit-unified-slow-offer"
	HeaderSlowStatus     = "anthropic-ratelimit-unified-slow-status"
	HeaderSlowRetryAfter = "anthropic-ratelimit-unified-slow-retry-after"
	HeaderSlowMaxWait    = "anthropic-ratelimit-unified-slow-max-wait"
	HeaderSlowBudgetRst  = "anthropic-ratelimit-unified-slow-budget-reset"
	HeaderOverageInUse   = "anthropic-ratelimit-unified-overage-in-use"
)

// Tuning of the guide; the boundaries are exact.
const (
	// LaneGrace is added to the announced reset: the lane holds until reset + 60 s.
	LaneGrace = 60 * time.Second
	// DefaultSlowRetry is the slot_busy / 529 wait without a slow-retry-after header.
	DefaultSlowRetry = 20 * time.Second
	MinSlowRetry     = 5 * time.Second
	MaxSlowRetry     = 600 * time.Second
	// Jitter is the ±fraction applied to each wait.
	Jitter = 0.30
	// DefaultMaxWait bounds the total waiting of one request without a slow-max-wait header.
	DefaultMaxWait = 20 * time.Minute
	MinMaxWait     = time.Minute
	MaxMaxWait     = 6 * time.Hour
	// FirstByteMargin is kept from the request's remaining first-byte budget.
	FirstByteMargin = 5 * time.Second
	// CoolOff blocks re-accepting the offer after the lane ended on max-wait.
	CoolOff = 10 * time.Minute
	// BudgetMemoryMax bounds how long budget_exhausted is remembered.
	BudgetMemoryMax = 8 * 24 * time.Hour
	// ResetDefaultNext is when the reset is tried again after already_used / not_offered
	// without a next_available_at.
	ResetDefaultNext = 7 * 24 * time.Hour
	// ResetFailureBackoff follows any failure of the reset flow.
	ResetFailureBackoff = 15 * time.Minute
)

// Lane end reasons (State.LastEnd).
const (
	EndMaxWait    = "max_wait"
	EndWeekly     = "weekly_limit"
	EndBudget     = "budget_exhausted"
	EndOff        = "off"
	EndIneligible = "ineligible"
	EndRollover   = "rollover"
	EndExtraUsage = "extra_usage"
)

// Settings are a connection's opt-ins (providerSpecificData).
type Settings struct {
	LowPriority bool // lowPriorityMode
	AutoReset   bool // autoLimitReset
}

// Signal is what one upstream response says about the wall.
type Signal struct {
	Status        int
	UnifiedStatus string // allowed, allowed_warning, rejected
	SlowOffer     string // "treatment" when the lane is offered
	SlowStatus    string // active, not_needed, slot_busy, weekly_limit, budget_exhausted, off, ineligible
	Reset         time.Time
	FiveHourReset time.Time
	BudgetReset   time.Time
	SlowRetry     time.Duration // 0: not sent
	SlowMaxWait   time.Duration // 0: not sent
	OverageInUse  bool
}

// Wall reports whether the response is the usage wall (429 + unified rejected).
func (s Signal) Wall() bool { return s.Status == 429 && s.UnifiedStatus == "rejected" }

// Parse reads a response's wall headers through get (http.Header.Get).
func Parse(status int, get func(string) string) Signal {
	s := Signal{Status: status,
		UnifiedStatus: strings.ToLower(strings.TrimSpace(get(HeaderStatus))),
		SlowOffer:     strings.ToLower(strings.TrimSpace(get(HeaderSlowOffer))),
		SlowStatus:    strings.ToLower(strings.TrimSpace(get(HeaderSlowStatus))),
		Reset:         unixTime(get(HeaderReset)),
		FiveHourReset: unixTime(get(HeaderFiveHourReset)),
		BudgetReset:   unixTime(get(HeaderSlowBudgetRst)),
		SlowRetry:     seconds(get(HeaderSlowRetryAfter)),
		SlowMaxWait:   seconds(get(HeaderSlowMaxWait)),
		OverageInUse:  strings.EqualFold(strings.TrimSpace(get(HeaderOverageInUse)), "true"),
	}
	if s.Reset.IsZero() {
		s.Reset = s.FiveHourReset
	}
	return s
}

func unixTime(v string) time.Time {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil && n > 0 {
		return time.UnixMilli(int64(n * 1000))
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t
	}
	return time.Time{}
}

func seconds(v string) time.Duration {
	n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || n <= 0 {
		return 0
	}
	return time.Duration(n * float64(time.Second))
}

// State is one connection's wall memory.
type State struct {
	// LaneUntil: requests before it carry anthropic-usage-limit: slow.
	LaneUntil time.Time `json:"laneUntil"`
	// LaneReset is the announced reset the lane was accepted for (rollover detection).
	LaneReset time.Time `json:"laneReset"`
	// CoolOffUntil blocks accepting the offer again (after a max-wait end).
	CoolOffUntil time.Time `json:"coolOffUntil"`
	// BudgetUntil remembers budget_exhausted: the offer is not accepted before it.
	BudgetUntil time.Time `json:"budgetUntil"`
	// LastEnd is why the lane last ended.
	LastEnd string `json:"lastEnd,omitempty"`
	// ResetNextAt: the reset is not tried before it (already used / not offered).
	ResetNextAt time.Time `json:"resetNextAt"`
	// ResetBackoffUntil: the reset flow failed; not tried before it.
	ResetBackoffUntil time.Time `json:"resetBackoffUntil"`
	// ResetResult is the last reset outcome (reset, not_limited, already_used, not_offered, failed).
	ResetResult string `json:"resetResult,omitempty"`
	// ResetAt is when the reset was last claimed.
	ResetAt time.Time `json:"resetAt"`
}

// InLane reports whether requests at now go in the low-priority lane.
func (s State) InLane(now time.Time) bool { return now.Before(s.LaneUntil) }

// Action is what the caller does with a response.
type Action int

// Decisions.
const (
	// Pass hands the response on (success, or the normal failure path).
	Pass Action = iota
	// RetrySlow retries the same account at once with anthropic-usage-limit: slow.
	RetrySlow
	// Wait waits Decision.Wait then retries in the lane.
	Wait
	// ClaimReset runs the limit reset flow (then AfterReset).
	ClaimReset
)

// Decision is the state machine's answer for one response.
type Decision struct {
	Action Action
	Wait   time.Duration
	// Reason names the transition (for logs and tests).
	Reason string
}

// Request is the request's own progress through the wall.
type Request struct {
	// SentSlow: the response answers a request that carried the slow header.
	SentSlow bool
	// Waited is the total slot_busy waiting this request already did.
	Waited time.Duration
	// FirstByteLeft is what remains of the request's first-byte budget (≤ 0: unbounded).
	FirstByteLeft time.Duration
	// ResetTried: the reset flow already ran for this request.
	ResetTried bool
	// Jitter is a uniform random number in [0, 1) for the wait's ±30 %.
	Jitter float64
}

// Decide folds one response into the state.
func Decide(s State, set Settings, sig Signal, req Request, now time.Time) (State, Decision) {
	if req.SentSlow {
		return inLane(s, sig, req, now)
	}
	if !sig.Wall() {
		return s, Decision{Action: Pass}
	}
	if set.AutoReset && !req.ResetTried && !now.Before(s.ResetNextAt) && !now.Before(s.ResetBackoffUntil) {
		return s, Decision{Action: ClaimReset, Reason: "reset_available"}
	}
	if !set.LowPriority || sig.SlowOffer != "treatment" {
		return s, Decision{Action: Pass, Reason: "wall"}
	}
	if now.Before(s.CoolOffUntil) {
		return s, Decision{Action: Pass, Reason: "cool_off"}
	}
	if now.Before(s.BudgetUntil) {
		return s, Decision{Action: Pass, Reason: "budget_exhausted"}
	}
	reset := sig.Reset
	if reset.IsZero() || !reset.After(now) {
		return s, Decision{Action: Pass, Reason: "no_reset"}
	}
	s.LaneUntil, s.LaneReset, s.LastEnd = reset.Add(LaneGrace), reset, ""
	return s, Decision{Action: RetrySlow, Reason: "offer_accepted"}
}

// inLane handles a response to a request sent in the lane.
func inLane(s State, sig Signal, req Request, now time.Time) (State, Decision) {
	if sig.OverageInUse {
		return end(s, EndExtraUsage), Decision{Action: Pass, Reason: EndExtraUsage}
	}
	switch sig.SlowStatus {
	case EndWeekly, EndOff, EndIneligible:
		return end(s, sig.SlowStatus), Decision{Action: Pass, Reason: sig.SlowStatus}
	case EndBudget:
		until := sig.BudgetReset
		if until.IsZero() {
			until = sig.Reset
		}
		if until.IsZero() || until.After(now.Add(BudgetMemoryMax)) {
			until = now.Add(BudgetMemoryMax)
		}
		s = end(s, EndBudget)
		s.BudgetUntil = until
		return s, Decision{Action: Pass, Reason: EndBudget}
	}
	if !s.LaneReset.IsZero() && sig.Reset.After(s.LaneReset) && !sig.Wall() && sig.Status != 529 && sig.SlowStatus != "slot_busy" {
		return end(s, EndRollover), Decision{Action: Pass, Reason: EndRollover}
	}
	if (sig.Status == 429 && sig.SlowStatus == "slot_busy") || sig.Status == 529 {
		d := SlotWait(sig.SlowRetry, req.Jitter)
		limit := clamp(orDefault(sig.SlowMaxWait, DefaultMaxWait), MinMaxWait, MaxMaxWait)
		if req.FirstByteLeft > 0 {
			limit = min(limit, req.FirstByteLeft-FirstByteMargin)
		}
		if req.Waited+d > limit {
			s = end(s, EndMaxWait)
			s.CoolOffUntil = now.Add(CoolOff)
			return s, Decision{Action: Pass, Reason: EndMaxWait}
		}
		return s, Decision{Action: Wait, Wait: d, Reason: "slot_busy"}
	}
	return s, Decision{Action: Pass}
}

// SlotWait is one slot_busy wait: the server's hint (default 20 s) clamped to
// 5–600 s, then ±30 % by jitter in [0, 1) (0 → −30 %, 0.5 → exact, 1 → +30 %).
func SlotWait(hint time.Duration, jitter float64) time.Duration {
	base := clamp(orDefault(hint, DefaultSlowRetry), MinSlowRetry, MaxSlowRetry)
	jitter = min(max(jitter, 0), 1)
	return time.Duration(float64(base) * (1 + Jitter*(2*jitter-1)))
}

func end(s State, reason string) State {
	s.LaneUntil, s.LaneReset, s.LastEnd = time.Time{}, time.Time{}, reason
	return s
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func clamp(d, lo, hi time.Duration) time.Duration { return min(max(d, lo), hi) }

// Reset results of the claim endpoint, plus the gateway's own "failed".
const (
	ResultReset       = "reset"
	ResultNotLimited  = "not_limited"
	ResultAlreadyUsed = "already_used"
	ResultNotOffered  = "not_offered"
	ResultFailed      = "failed"
)

// ResetOutcome is what the reset flow produced.
type ResetOutcome struct {
	// Result is one of the Result* constants.
	Result string
	// NextAvailableAt is the server's next_available_at (zero: not given).
	NextAvailableAt time.Time
}

// AfterReset folds the reset flow's outcome into the state. retryFull is true
// when the request is retried at once at full speed; otherwise the caller
// decides the lane with Decide (Request.ResetTried set).
func AfterReset(s State, out ResetOutcome, now time.Time) (ns State, retryFull bool) {
	s.ResetResult = out.Result
	switch out.Result {
	case ResultReset:
		s.ResetAt = now
		s.ResetNextAt = orTime(out.NextAvailableAt, now.Add(ResetDefaultNext))
		return s, true
	case ResultNotLimited:
		return s, true
	case ResultAlreadyUsed, ResultNotOffered:
		s.ResetNextAt = orTime(out.NextAvailableAt, now.Add(ResetDefaultNext))
		return s, false
	default:
		s.ResetResult = ResultFailed
		s.ResetBackoffUntil = now.Add(ResetFailureBackoff)
		return s, false
	}
}

func orTime(t, def time.Time) time.Time {
	if t.IsZero() {
		return def
	}
	return t
}

// Table holds every connection's State in memory.
type Table struct {
	mu sync.Mutex
	m  map[string]State
}

// NewTable returns an empty table.
func NewTable() *Table { return &Table{m: map[string]State{}} }

// Get returns a connection's state (zero when none).
func (t *Table) Get(id string) State {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[id]
}

// Update applies f to a connection's state atomically and returns the result.
func (t *Table) Update(id string, f func(State) State) State {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := f(t.m[id])
	if s == (State{}) {
		delete(t.m, id)
	} else {
		t.m[id] = s
	}
	return s
}
