// Package budget holds client keys to their spend budgets and rate limits.
//
// A key may carry a budget in USD and/or tokens per period ("day" and
// "month" reset at the UTC day and month boundaries of the injected clock;
// "total" never resets) and rate limits: requests per minute (RPM) and tokens
// per minute (TPM), over a sliding 60-second window. Admit is asked before a
// request is dispatched and refuses it once the key's spend has reached its
// budget (KEY_BUDGET_EXCEEDED) or its window is full (KEY_RATE_LIMITED);
// Charge adds what an answer cost after it was served, so the request that
// crosses a budget finishes and the next one is refused.
//
// The ledger lives in memory, seeded from the request log when a key's
// budget is set (Set's seed); several instances sharing a PostgreSQL
// database each hold their own ledger (see docs/COST.md), charge budgets in
// the database (Share) and count rate windows there too (ShareRates).
package budget

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/errs"
	"omniroute/backend/store"
)

// Period is how often a budget resets.
type Period string

// Periods.
const (
	Day   Period = "day"
	Month Period = "month"
	Total Period = "total"
)

// Budget is a key's spend cap per Period: USD and/or tokens (nil: no cap).
type Budget struct {
	USD    *float64 `json:"usd,omitempty"`
	Tokens *int64   `json:"tokens,omitempty"`
	Period Period   `json:"period"`
	// AllowUnpriced lets a key with a USD cap use models of unknown price
	// (their answers charge tokens only, which the USD cap cannot see);
	// false: such a request is refused MODEL_PRICE_UNKNOWN before dispatch.
	AllowUnpriced bool `json:"allowUnpriced,omitempty"`
}

// RefusesUnpriced reports whether b is a USD cap that models of unknown
// price may not bypass.
func (b *Budget) RefusesUnpriced() bool { return b != nil && b.USD != nil && !b.AllowUnpriced }

// Validate refuses an unknown period or a negative or non-finite cap.
func (b *Budget) Validate() error {
	if b == nil {
		return nil
	}
	switch b.Period {
	case Day, Month, Total:
	default:
		return fmt.Errorf(`budget.period must be "day", "month" or "total"`)
	}
	if b.USD != nil && (*b.USD < 0 || math.IsNaN(*b.USD) || math.IsInf(*b.USD, 0)) {
		return fmt.Errorf("budget.usd must be a non-negative number")
	}
	if b.Tokens != nil && *b.Tokens < 0 {
		return fmt.Errorf("budget.tokens must not be negative")
	}
	return nil
}

// Limits are a key's rate limits per sliding minute (nil: none).
type Limits struct {
	RPM *int   `json:"rpm,omitempty"`
	TPM *int64 `json:"tpm,omitempty"`
}

// Validate refuses a limit below 1.
func (l *Limits) Validate() error {
	if l == nil {
		return nil
	}
	if l.RPM != nil && *l.RPM < 1 {
		return fmt.Errorf("limits.rpm must be at least 1")
	}
	if l.TPM != nil && *l.TPM < 1 {
		return fmt.Errorf("limits.tpm must be at least 1")
	}
	return nil
}

// Spend is what a key spent in its current period. PeriodStart is unix ms
// (nil for a total budget, or a key without one: its spend over the rows the
// request log keeps, plus what it spent since).
type Spend struct {
	USD         float64 `json:"usd"`
	Tokens      int64   `json:"tokens"`
	PeriodStart *int64  `json:"periodStart"`
	// HeldUSD and HeldTokens are the part of USD and Tokens that the
	// requests in flight hold (their estimates, replaced by what their
	// answers cost); InFlight counts those requests. This instance's holds.
	HeldUSD    float64 `json:"heldUsd"`
	HeldTokens int64   `json:"heldTokens"`
	InFlight   int     `json:"inFlight"`
}

// window is the rate-limit window.
const window = time.Minute

type event struct {
	at     time.Time
	tokens int64
}

type account struct {
	name        string // the key's name, for refusals ("" unknown)
	budget      *Budget
	limits      *Limits
	periodStart time.Time // zero: no period
	usd         float64
	tokens      int64
	requests    []time.Time // admitted requests in the window (with an RPM limit)
	charged     []event     // tokens charged in the window (with a TPM limit)
	// inflight is the tokens the admitted requests still in flight hold
	// against the TPM limit (Hold.Rate), until Settle.
	inflight int64
	alerted  int // the alert level (80, 100) already sent this period
	// held is what this instance's budget holds in flight add to usd and
	// tokens (held.n requests), until Settle.
	held struct {
		usd    float64
		tokens int64
		n      int
	}
}

// hold adds an admitted request's hold h to the key's spend.
func (a *account) hold(h Hold) {
	a.usd += h.USD
	a.tokens += h.Tokens
	a.held.usd += h.USD
	a.held.tokens += h.Tokens
	a.held.n++
}

// unhold takes a settled hold h out of what is held in flight.
func (a *account) unhold(h Hold) {
	a.held.usd = max(a.held.usd-h.USD, 0)
	a.held.tokens = max(a.held.tokens-h.Tokens, 0)
	a.held.n = max(a.held.n-1, 0)
	if a.held.n == 0 {
		a.held.usd, a.held.tokens = 0, 0 // no float dust left by the subtractions
	}
}

// Alert reports a key whose spend crossed 80 % or 100 % of its budget in the
// current period (once per level and period): the dashboard's live feed
// and the desktop notification show it.
type Alert struct {
	KeyID   string `json:"keyId"`
	Percent int    `json:"percent"` // 80 or 100
	Spend
	Budget Budget `json:"budget"`
}

// OnAlert makes the ledger call f (outside its lock) for each alert (set
// once, at wiring, before the ledger is used).
func (l *Ledger) OnAlert(f func(Alert)) { l.alert = f }

// level is the alert level the key's spend has reached: 100 at or over its
// budget (USD or tokens), 80 at 80 % of it, else 0.
func (a *account) level() int {
	b := a.budget
	if b == nil {
		return 0
	}
	frac := 0.0
	if b.USD != nil && *b.USD > 0 {
		frac = a.usd / *b.USD
	}
	if b.Tokens != nil && *b.Tokens > 0 {
		frac = max(frac, float64(a.tokens)/float64(*b.Tokens))
	}
	switch {
	case frac >= 1:
		return 100
	case frac >= 0.8:
		return 80
	}
	return 0
}

// crossed is the alert due after a change of the key's spend, if any.
func (a *account) crossed(keyID string) (Alert, bool) {
	lv := a.level()
	if lv <= a.alerted {
		return Alert{}, false
	}
	a.alerted = lv
	al := Alert{KeyID: keyID, Percent: lv, Spend: Spend{USD: a.usd, Tokens: a.tokens}, Budget: *a.budget}
	if !a.periodStart.IsZero() {
		ms := a.periodStart.UnixMilli()
		al.PeriodStart = &ms
	}
	return al, true
}

// Ledger is every key's spend and rate windows.
type Ledger struct {
	clk    clock.Clock
	shared Shared      // nil: this instance alone (SQLite)
	rates  Rates       // nil: rate windows in this instance alone
	claims AlertClaims // nil: each alert raised by this instance
	alert  func(Alert) // nil: alerts go nowhere
	mu     sync.Mutex
	keys   map[string]*account
}

// Shared is the database the instances of a team server charge budgeted keys
// in (the store, on PostgreSQL): each charge is one atomic statement there,
// and each check reads the period's spend from it, so a key's budget holds
// across instances (overspent by at most the requests in flight when it was
// crossed, as on one instance).
type Shared interface {
	ChargeKeySpend(keyID string, periodStart int64, usd float64, tokens int64) (store.KeySpend, error)
	ReserveKeySpend(keyID string, periodStart int64, usd float64, tokens int64, capUSD float64, capTokens int64) (store.KeySpend, bool, error)
	SeedKeySpend(keyID string, periodStart int64, sp store.KeySpend) error
	KeySpendIn(keyID string, periodStart int64) (store.KeySpend, bool, error)
}

// AlertClaims decides which instance of a team server raises an alert: the
// first to claim it (store.ClaimBudgetAlert).
type AlertClaims interface {
	ClaimBudgetAlert(keyID string, periodStart int64, budget string, percent int, nowMs int64) (bool, error)
}

// ShareAlerts makes the ledger raise each alert once for the whole team:
// only when it claims it in c (set once, at wiring, before the ledger is
// used). A claim the database does not answer raises the alert here (it
// may then be raised twice, never lost).
func (l *Ledger) ShareAlerts(c AlertClaims) { l.claims = c }

// claimed reports whether this instance raises al (its claim won, or the
// database did not answer).
func (l *Ledger) claimed(al Alert) bool {
	if l.claims == nil {
		return true
	}
	var ps int64
	if al.PeriodStart != nil {
		ps = *al.PeriodStart
	}
	ok, err := l.claims.ClaimBudgetAlert(al.KeyID, ps, budgetName(al.Budget), al.Percent, l.clk.Now().UnixMilli())
	return ok || err != nil
}

// budgetName names a budget's caps and period, so an alert is raised again
// after the budget changed.
func budgetName(b Budget) string {
	n := "period=" + string(b.Period)
	if b.USD != nil {
		n += fmt.Sprintf(";usd=%g", *b.USD)
	}
	if b.Tokens != nil {
		n += fmt.Sprintf(";tokens=%d", *b.Tokens)
	}
	return n
}

// Share makes the ledger charge budgeted keys in s (set once, at wiring,
// before the ledger is used).
func (l *Ledger) Share(s Shared) { l.shared = s }

// ms is a period start as stored (0 for a total budget's zero time).
func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// refresh reads a budgeted key's spend in its current period from the
// shared database (a failed read keeps this instance's view).
func (l *Ledger) refresh(keyID string) {
	l.mu.Lock()
	a := l.keys[keyID]
	if a == nil || a.budget == nil {
		l.mu.Unlock()
		return
	}
	a.roll(l.clk.Now())
	ps := a.periodStart
	l.mu.Unlock()
	sp, ok, err := l.shared.KeySpendIn(keyID, ms(ps))
	if err != nil || !ok {
		return
	}
	l.mu.Lock()
	if a.periodStart.Equal(ps) {
		a.usd, a.tokens = sp.USD, sp.Tokens
	}
	l.mu.Unlock()
}

// New returns an empty ledger on clk.
func New(clk clock.Clock) *Ledger {
	return &Ledger{clk: clk, keys: map[string]*account{}}
}

// PeriodStart is the start of the period holding now: the UTC day or month
// (zero for a total budget).
func PeriodStart(p Period, now time.Time) time.Time {
	now = now.UTC()
	switch p {
	case Day:
		return time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	case Month:
		return time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return time.Time{}
}

// PeriodEnd is when the period starting at start ends (zero: never).
func PeriodEnd(p Period, start time.Time) time.Time {
	switch p {
	case Day:
		return start.AddDate(0, 0, 1)
	case Month:
		return start.AddDate(0, 1, 0)
	}
	return time.Time{}
}

// Set gives a key its budget and limits (nil, nil: none), with what it has
// already spent in the current period (seed, read from the request log).
// Setting a key again keeps its rate windows.
func (l *Ledger) Set(keyID string, b *Budget, lim *Limits, seed Spend) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.keys[keyID]
	if a == nil {
		a = &account{}
		l.keys[keyID] = a
	}
	// A budget changed within the same period keeps what this ledger
	// counted when that is more than the seed: the request log's newest
	// rows may not be written yet.
	same := a.budget != nil && b != nil && a.budget.Period == b.Period
	// The same budget set again (a team server reloads its keys on every
	// change notification) keeps the alerts already due: a reload that
	// reads the spend over a level, holds of requests in flight included,
	// must not swallow the alert the crossing charge is about to raise.
	unchanged := same && budgetName(*a.budget) == budgetName(*b)
	a.budget, a.limits = b, lim
	prev := a.periodStart
	a.periodStart = time.Time{}
	if b != nil {
		a.periodStart = PeriodStart(b.Period, l.clk.Now())
	}
	// A seed summed from rows written before costs were bounded may be
	// +Inf: counted as a bounded number, so the spend stays encodable.
	seed.USD, seed.Tokens = finiteUSD(seed.USD), max(seed.Tokens, 0)
	if same && prev.Equal(a.periodStart) {
		seed.USD, seed.Tokens = max(seed.USD, a.usd), max(seed.Tokens, a.tokens)
	} else {
		// Holds of another period (or budget) are not settled against this one.
		a.held.usd, a.held.tokens, a.held.n = 0, 0, 0
	}
	a.usd, a.tokens = seed.USD, seed.Tokens
	if !unchanged || !prev.Equal(a.periodStart) {
		a.alerted = a.level() // what was spent before is no news
	}
}

// Remove forgets a key.
func (l *Ledger) Remove(keyID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.keys, keyID)
}

// roll starts a new period when now is past the current one.
func (a *account) roll(now time.Time) {
	if a.budget == nil || a.budget.Period == Total {
		return
	}
	if start := PeriodStart(a.budget.Period, now); !start.Equal(a.periodStart) {
		a.periodStart, a.usd, a.tokens, a.alerted = start, 0, 0, 0
		a.held.usd, a.held.tokens, a.held.n = 0, 0, 0 // reset with the period they were taken in
	}
}

// prune drops the window's entries older than a minute before now.
func (a *account) prune(now time.Time) {
	cut := now.Add(-window)
	i := 0
	for i < len(a.requests) && !a.requests[i].After(cut) {
		i++
	}
	a.requests = a.requests[i:]
	j := 0
	for j < len(a.charged) && !a.charged[j].at.After(cut) {
		j++
	}
	a.charged = a.charged[j:]
}

// retryIn is d rounded up to a whole second, at least one.
func retryIn(d time.Duration) time.Duration {
	return max(time.Second, (d+time.Second-1)/time.Second*time.Second)
}

// Admit refuses a request of keyID that its budget or rate limits do not
// allow now; an admitted request counts towards the key's RPM window. A key
// the ledger does not know (no budget, no limits) is always admitted.
// (Reserve with nothing to hold.)
func (l *Ledger) Admit(keyID string) error {
	h, err := l.Reserve(keyID, 0, 0)
	if h.TeamTokens != 0 {
		l.rates.SettleKeyTokens(keyID, h.TeamTokens, 0)
	}
	if h.Rate > 0 { // nothing to hold: not in flight against the TPM limit
		l.mu.Lock()
		if a := l.keys[keyID]; a != nil {
			a.inflight = max(a.inflight-h.Rate, 0)
		}
		l.mu.Unlock()
	}
	return err
}

// Hold is what an admitted request holds of its key's budget, from its
// admission until Settle replaces it with what the answer cost.
type Hold struct {
	Key    string
	USD    float64
	Tokens int64
	// PeriodStart is the budget period the hold was taken in (unix ms, 0
	// for a total budget); Held reports a hold at all (a budgeted key);
	// Shared, a hold taken in the shared database (not only in memory).
	PeriodStart  int64
	Held, Shared bool
	// Rate is the tokens held against the key's TPM limit (0: none): a
	// request admitted under the limit counts towards it while in flight.
	Rate int64
	// TeamTokens is the hold in the team's shared TPM window (Rates; 0:
	// none), replaced by the answer's tokens at Settle.
	TeamTokens int64
	// Request is when the request took its place in the key's RPM window
	// (unix ns; 0: none) and TeamRequest its place in the team's (Rates;
	// 0: none): Release gives them back.
	Request, TeamRequest int64
}

// RefusesUnpriced reports whether keyID has a USD budget that models of
// unknown price may not bypass (Budget.RefusesUnpriced), with the key's name
// and budget for the refusal.
func (l *Ledger) RefusesUnpriced(keyID string) (name string, b Budget, refuses bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.keys[keyID]
	if a == nil || !a.budget.RefusesUnpriced() {
		return "", Budget{}, false
	}
	return a.name, *a.budget, true
}

// Budgeted reports whether keyID has a budget (its requests are estimated
// and held at admission).
func (l *Ledger) Budgeted(keyID string) bool {
	budgeted, _ := l.Estimated(keyID)
	return budgeted
}

// Estimated reports whether keyID's requests are estimated and held at
// admission: it has a budget, or a TPM limit (in-flight requests count
// towards it).
func (l *Ledger) Estimated(keyID string) (budgeted, tpm bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.keys[keyID]
	if a == nil {
		return false, false
	}
	return a.budget != nil, a.limits != nil && a.limits.TPM != nil
}

// Reserve is Admit that also holds an admitted request's estimated cost
// (usd) and tokens against its key's budget, so requests admitted together
// cannot all pass a budget that only the first of them fits: each admission
// sees what the requests in flight may cost. Settle gives the hold back for
// what the answer really cost. With a shared database the check and the
// hold are one conditional statement there (ReserveKeySpend), so the
// instances of a team server admit against one another's holds: a key
// overspends by at most one request (the one admitted under the budget
// whose answer crosses it), as long as answers cost no more than estimated.
func (l *Ledger) Reserve(keyID string, usd float64, tokens int64) (Hold, error) {
	if keyID == "" {
		return Hold{}, nil
	}
	if l.rates == nil {
		return l.reserve(keyID, usd, tokens)
	}
	t, err := l.teamRates(keyID, tokens)
	if err != nil {
		return Hold{}, err
	}
	h, err := l.reserve(keyID, usd, tokens)
	if err != nil {
		t.undo(l.rates, keyID) // refused here: not counted team-wide either
		return h, err
	}
	if t.tokens != 0 {
		h.Key, h.TeamTokens = keyID, t.tokens
	}
	if t.rpm != 0 {
		h.Key, h.TeamRequest = keyID, t.rpm
	}
	return h, nil
}

// Rates counts keys' rate windows across the instances of a team server
// (backend/teamlimits): shared false means nothing was counted there (the
// database does not answer, or the limits are per instance) and this
// instance's own window decides alone; ok false, the team's window is full.
type Rates interface {
	KeyRequest(keyID string, rpm int) (hold int64, retryAfter time.Duration, ok, shared bool)
	UndoKeyRequest(keyID string, hold int64)
	KeyTokens(keyID string, tpm, tokens int64) (hold int64, retryAfter time.Duration, ok, shared bool)
	SettleKeyTokens(keyID string, hold, tokens int64)
	// KeyRates is KeyTokens and KeyRequest at once (one statement) for a
	// key with both limits.
	KeyRates(keyID string, rpm int, tpm, tokens int64) (tokenHold, requestHold int64, retryAfter time.Duration,
		tpmFull, rpmFull, shared bool)
}

// ShareRates makes the ledger count keys' RPM and TPM windows in r as well
// as in memory (set once, at wiring, before the ledger is used). A key
// without limits costs r nothing.
func (l *Ledger) ShareRates(r Rates) { l.rates = r }

// teamTake is what a request took of its key's team-wide windows.
type teamTake struct {
	rpm    int64 // the RPM place (0: none taken)
	tokens int64 // the TPM hold (0: none)
}

func (t teamTake) undo(r Rates, keyID string) {
	if t.rpm != 0 {
		r.UndoKeyRequest(keyID, t.rpm)
	}
	if t.tokens != 0 {
		r.SettleKeyTokens(keyID, t.tokens, 0)
	}
}

// teamRates takes the request's place in its key's team-wide windows: the
// TPM hold (its estimated tokens) first, then the RPM place; a full window
// refuses it with KEY_RATE_LIMITED as this instance's would.
func (l *Ledger) teamRates(keyID string, tokens int64) (teamTake, error) {
	l.mu.Lock()
	var lim Limits
	if a := l.keys[keyID]; a != nil && a.limits != nil {
		lim = *a.limits
	}
	l.mu.Unlock()
	var t teamTake
	if lim.TPM != nil && lim.RPM != nil {
		th, rh, retry, tpmFull, rpmFull, shared := l.rates.KeyRates(keyID, *lim.RPM, *lim.TPM, max(tokens, 1))
		switch {
		case shared && tpmFull:
			return t, tpmRefusal(*lim.TPM, retry)
		case shared && rpmFull:
			return t, rpmRefusal(*lim.RPM, retry)
		}
		return teamTake{rpm: rh, tokens: th}, nil
	}
	if lim.TPM != nil {
		hold, retry, ok, shared := l.rates.KeyTokens(keyID, *lim.TPM, max(tokens, 1))
		if shared && !ok {
			return t, tpmRefusal(*lim.TPM, retry)
		}
		t.tokens = hold
	}
	if lim.RPM != nil {
		hold, retry, ok, shared := l.rates.KeyRequest(keyID, *lim.RPM)
		if shared && !ok {
			t.undo(l.rates, keyID)
			return teamTake{}, rpmRefusal(*lim.RPM, retry)
		}
		t.rpm = hold
	}
	return t, nil
}

// tpmRefusal and rpmRefusal refuse a request at its key's full team-wide
// window.
func tpmRefusal(tpm int64, retry time.Duration) error {
	return errs.New(errs.RateLimited, "KEY_RATE_LIMITED", "this API key is limited to %d tokens per minute (across the team's instances)", tpm).
		WithRetryAfter(retryIn(retry))
}

func rpmRefusal(rpm int, retry time.Duration) error {
	return errs.New(errs.RateLimited, "KEY_RATE_LIMITED", "this API key is limited to %d requests per minute (across the team's instances)", rpm).
		WithRetryAfter(retryIn(retry))
}

func (l *Ledger) reserve(keyID string, usd float64, tokens int64) (Hold, error) {
	l.mu.Lock()
	a := l.keys[keyID]
	if a == nil || (a.budget == nil && a.limits == nil) {
		l.mu.Unlock()
		return Hold{}, nil
	}
	now := l.clk.Now()
	a.roll(now)
	if err := a.limited(now); err != nil {
		l.mu.Unlock()
		return Hold{}, err
	}
	usd, tokens = finiteUSD(usd), max(tokens, 0)
	if a.budget == nil {
		h := a.admitted(now, keyID, tokens)
		l.mu.Unlock()
		return h, nil
	}
	h := Hold{Key: keyID, USD: usd, Tokens: tokens, PeriodStart: ms(a.periodStart), Held: true}
	if l.shared == nil {
		defer l.mu.Unlock()
		if err := a.overBudget(now); err != nil {
			return Hold{}, err
		}
		a.hold(h)
		ad := a.admitted(now, keyID, tokens)
		h.Rate, h.Request = ad.Rate, ad.Request
		return h, nil
	}
	// The check and the hold in the database, in one statement against
	// every instance's spend and holds (outside the lock: the database
	// orders them); its totals replace this instance's view.
	caps := *a.budget
	l.mu.Unlock()
	sp, ok, err := l.reserveShared(caps, h)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		// The database did not answer: this instance's view decides.
		if err := a.overBudget(now); err != nil {
			return Hold{}, err
		}
		a.hold(h)
		ad := a.admitted(now, keyID, tokens)
		h.Rate, h.Request = ad.Rate, ad.Request
		return h, nil
	}
	if ms(a.periodStart) == h.PeriodStart {
		a.usd, a.tokens = sp.USD, sp.Tokens
	}
	if !ok {
		if e := a.overBudget(now); e != nil {
			return Hold{}, e
		}
		return Hold{}, a.refusal(now, a.usd, a.tokens, true)
	}
	if ms(a.periodStart) == h.PeriodStart {
		// The database's totals (set above) already count the hold.
		a.held.usd += h.USD
		a.held.tokens += h.Tokens
		a.held.n++
	}
	ad := a.admitted(now, keyID, tokens)
	h.Rate, h.Request = ad.Rate, ad.Request
	h.Shared = true
	return h, nil
}

// reserveShared holds h in the shared database unless the key's stored
// spend (with every instance's holds) has reached its budget; a key without
// a row for the period gets one first (a new period starts at 0).
func (l *Ledger) reserveShared(b Budget, h Hold) (store.KeySpend, bool, error) {
	capUSD, capTokens := math.MaxFloat64, int64(math.MaxInt64)
	if b.USD != nil {
		capUSD = *b.USD
	}
	if b.Tokens != nil {
		capTokens = *b.Tokens
	}
	sp, ok, err := l.shared.ReserveKeySpend(h.Key, h.PeriodStart, h.USD, h.Tokens, capUSD, capTokens)
	if err != nil || ok {
		return sp, ok, err
	}
	cur, found, err := l.shared.KeySpendIn(h.Key, h.PeriodStart)
	if err != nil {
		return sp, false, err
	}
	if found {
		return cur, false, nil // refused: at the budget
	}
	if _, err := l.shared.ChargeKeySpend(h.Key, h.PeriodStart, 0, 0); err != nil {
		return sp, false, err
	}
	return l.shared.ReserveKeySpend(h.Key, h.PeriodStart, h.USD, h.Tokens, capUSD, capTokens)
}

// overBudget is the refusal of a key whose spend reached its budget (nil:
// under it).
func (a *account) overBudget(now time.Time) error {
	b := a.budget
	if b == nil {
		return nil
	}
	switch {
	case b.USD != nil && a.usd >= *b.USD, b.Tokens != nil && a.tokens >= *b.Tokens:
		return a.refusal(now, a.usd, a.tokens, false)
	}
	return nil
}

// refusal is KEY_BUDGET_EXCEEDED, with Retry-After = the period's reset. Its
// message names the key, the budget, what was spent and what the requests
// in flight hold (usd and tokens count both; shared: every instance's
// totals, whose holds are not all this instance's).
func (a *account) refusal(now time.Time, usd float64, tokens int64, shared bool) error {
	b := a.budget
	who := "this API key"
	if a.name != "" {
		who = fmt.Sprintf("API key %q", a.name)
	}
	var caps, spent, held []string
	if b.USD != nil {
		caps = append(caps, fmt.Sprintf("$%.4f", *b.USD))
		spent = append(spent, fmt.Sprintf("$%.4f", max(usd-a.held.usd, 0)))
		held = append(held, fmt.Sprintf("$%.4f", a.held.usd))
	}
	if b.Tokens != nil {
		caps = append(caps, fmt.Sprintf("%d tokens", *b.Tokens))
		spent = append(spent, fmt.Sprintf("%d tokens", max(tokens-a.held.tokens, 0)))
		held = append(held, fmt.Sprintf("%d tokens", a.held.tokens))
	}
	inFlight := fmt.Sprintf("held by %d request(s) in flight", a.held.n)
	if shared {
		inFlight += " here (the spent part includes the other instances' holds)"
	}
	e := errs.New(errs.RateLimited, "KEY_BUDGET_EXCEEDED", "%s has reached its %s budget of %s: %s spent, %s %s",
		who, b.Period, strings.Join(caps, " and "), strings.Join(spent, " and "), strings.Join(held, " and "), inFlight)
	if end := PeriodEnd(b.Period, a.periodStart); !end.IsZero() {
		e = e.WithRetryAfter(retryIn(end.Sub(now)))
	}
	return e
}

// admitted counts an admitted request in the key's RPM window and holds its
// estimated tokens against the key's TPM limit while it is in flight (the
// returned hold's Rate, given back by Settle).
func (a *account) admitted(now time.Time, keyID string, tokens int64) Hold {
	if a.limits == nil {
		return Hold{}
	}
	var h Hold
	if a.limits.RPM != nil {
		a.requests = append(a.requests, now)
		h.Key, h.Request = keyID, now.UnixNano()
	}
	if a.limits.TPM == nil {
		return h
	}
	rate := max(tokens, 1) // an admitted request always counts while in flight
	a.inflight += rate
	h.Key, h.Rate = keyID, rate
	return h
}

// unrequest gives back the RPM window's place taken at (unix ns), if the
// window still counts it.
func (a *account) unrequest(at int64) {
	for i := len(a.requests) - 1; i >= 0; i-- {
		if a.requests[i].UnixNano() == at {
			a.requests = append(a.requests[:i], a.requests[i+1:]...)
			return
		}
	}
}

// limited is the refusal of a key at its rate limits (nil: within them).
func (a *account) limited(now time.Time) error {
	if lim := a.limits; lim != nil {
		a.prune(now)
		if lim.RPM != nil && len(a.requests) >= *lim.RPM {
			return errs.New(errs.RateLimited, "KEY_RATE_LIMITED", "this API key is limited to %d requests per minute", *lim.RPM).
				WithRetryAfter(retryIn(a.requests[0].Add(window).Sub(now)))
		}
		if lim.TPM != nil {
			var used int64
			for _, c := range a.charged {
				used += c.tokens
			}
			if used < *lim.TPM && used+a.inflight >= *lim.TPM {
				// The requests in flight hold the rest of the minute's
				// tokens: retry once they may have settled.
				return errs.New(errs.RateLimited, "KEY_RATE_LIMITED",
					"this API key is limited to %d tokens per minute (with its requests in flight)", *lim.TPM).
					WithRetryAfter(time.Second)
			}
			if used >= *lim.TPM {
				// Wait until enough of the window's tokens age out.
				wait, left := time.Duration(0), used
				for _, c := range a.charged {
					left -= c.tokens
					if wait = c.at.Add(window).Sub(now); left < *lim.TPM {
						break
					}
				}
				return errs.New(errs.RateLimited, "KEY_RATE_LIMITED", "this API key is limited to %d tokens per minute", *lim.TPM).
					WithRetryAfter(retryIn(wait))
			}
		}
	}
	return nil
}

// Charge adds an answer's cost and tokens to keyID's spend and TPM window.
// Every key is tracked, budget or not (its spend is shown).
func (l *Ledger) Charge(keyID string, usd float64, tokens int64) {
	l.Settle(Hold{Key: keyID}, usd, tokens)
}

// Release gives back what a request that was not served holds (refused or
// failed before an answer was served): its budget and token holds (Settle
// with nothing) and its places in its key's requests-per-minute windows,
// this instance's and the team's — a request that was not served does not
// count towards the key's RPM limit, any more than towards its TPM limit.
func (l *Ledger) Release(h Hold) {
	l.Settle(h, 0, 0)
	if h.Key == "" {
		return
	}
	if h.Request != 0 {
		l.mu.Lock()
		if a := l.keys[h.Key]; a != nil {
			a.unrequest(h.Request)
		}
		l.mu.Unlock()
	}
	if h.TeamRequest != 0 && l.rates != nil {
		l.rates.UndoKeyRequest(h.Key, h.TeamRequest)
	}
}

// Settle replaces a request's hold (Reserve; a zero Hold but for its Key:
// none) with what its answer cost: usd and tokens (0 and 0 for a request
// that was not served). A hold taken in a period that has since ended was
// reset with it: the answer is charged in full to the current one.
func (l *Ledger) Settle(h Hold, usd float64, tokens int64) {
	keyID := h.Key
	if keyID == "" {
		return
	}
	l.mu.Lock()
	a := l.keys[keyID]
	if a == nil {
		a = &account{}
		l.keys[keyID] = a
	}
	now := l.clk.Now()
	a.roll(now)
	usd, tokens = finiteUSD(usd), max(tokens, 0)
	a.inflight = max(a.inflight-h.Rate, 0)
	dUSD, dTokens := usd, tokens
	if h.Held && ms(a.periodStart) == h.PeriodStart {
		dUSD, dTokens = usd-h.USD, tokens-h.Tokens
		a.unhold(h)
	}
	a.usd += dUSD
	a.tokens += dTokens
	if a.limits != nil && a.limits.TPM != nil && tokens > 0 {
		a.prune(now)
		a.charged = append(a.charged, event{now, tokens})
	}
	budgeted, ps := a.budget != nil, a.periodStart
	al, alert := Alert{}, false
	if budgeted && l.shared == nil {
		al, alert = a.crossed(keyID)
	}
	l.mu.Unlock()
	if alert && l.alert != nil {
		l.alert(al)
	}
	if h.TeamTokens != 0 && l.rates != nil {
		l.rates.SettleKeyTokens(keyID, h.TeamTokens, tokens)
	}
	if !h.Shared {
		dUSD, dTokens = usd, tokens // the database never saw the hold
	}
	if l.shared == nil || !budgeted || (dUSD == 0 && dTokens == 0) {
		return
	}
	// The charge in the database, outside the lock; its totals (every
	// instance's charges) replace this instance's view.
	sp, err := l.shared.ChargeKeySpend(keyID, ms(ps), dUSD, dTokens)
	if err != nil {
		return
	}
	l.mu.Lock()
	if a.periodStart.Equal(ps) {
		a.usd, a.tokens = sp.USD, sp.Tokens
		if a.budget != nil {
			al, alert = a.crossed(keyID)
		}
	}
	l.mu.Unlock()
	if alert && l.alert != nil && l.claimed(al) {
		l.alert(al)
	}
}

// MaxUSD bounds one request's cost as the ledger counts it: a cost that is
// not a finite number (a price stored before prices were bounded) is
// counted as this much, never as +Inf or NaN, so a spend stays a number.
const MaxUSD = 1e12

// finiteUSD is usd within 0 … MaxUSD (NaN: MaxUSD).
func finiteUSD(usd float64) float64 {
	if math.IsNaN(usd) {
		return MaxUSD
	}
	return min(max(usd, 0), MaxUSD)
}

// Spend is keyID's spend in its current period.
func (l *Ledger) Spend(keyID string) Spend {
	if l.shared != nil {
		l.refresh(keyID)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.keys[keyID]
	if a == nil {
		return Spend{}
	}
	a.roll(l.clk.Now())
	s := Spend{USD: a.usd, Tokens: a.tokens, HeldUSD: a.held.usd, HeldTokens: a.held.tokens, InFlight: a.held.n}
	if !a.periodStart.IsZero() {
		ms := a.periodStart.UnixMilli()
		s.PeriodStart = &ms
	}
	return s
}
