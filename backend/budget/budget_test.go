package budget

import (
	"math"
	"sync"
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/errs"
)

func usd(v float64) *float64 { return &v }
func i64(v int64) *int64     { return &v }
func intp(v int) *int        { return &v }

func code(err error) string {
	if err == nil {
		return ""
	}
	return errs.As(err).Code
}

// TestBudgetBoundaries: one cent under the budget is admitted, at the budget
// refused with the time to the period's end as Retry-After.
func TestBudgetBoundaries(t *testing.T) {
	start := time.Date(2026, 3, 14, 23, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name   string
		spent  float64
		code   string
		period Period
		retry  time.Duration
	}{
		{"a cent under the day's budget", 0.99, "", Day, 0},
		{"at the day's budget", 1.00, "KEY_BUDGET_EXCEEDED", Day, time.Hour},
		{"over the day's budget", 1.50, "KEY_BUDGET_EXCEEDED", Day, time.Hour},
		{"at the month's budget", 1.00, "KEY_BUDGET_EXCEEDED", Month, (17*24 + 1) * time.Hour},
		{"at a total budget: no Retry-After", 1.00, "KEY_BUDGET_EXCEEDED", Total, 0},
	} {
		clk := clock.NewFake(start)
		l := New(clk)
		l.Set("k", &Budget{USD: usd(1), Period: c.period}, nil, Spend{})
		l.Charge("k", c.spent, 10)
		err := l.Admit("k")
		if code(err) != c.code {
			t.Fatalf("%s: %v, want %q", c.name, err, c.code)
		}
		if err != nil {
			e := errs.As(err)
			if e.Class != errs.RateLimited || e.RetryAfter != c.retry {
				t.Fatalf("%s: class %v retry %v, want 429 %v", c.name, e.Class, e.RetryAfter, c.retry)
			}
		}
	}
}

// TestTokenBudget: the token budget is held like the USD one.
func TestTokenBudget(t *testing.T) {
	l := New(clock.NewFake(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)))
	l.Set("k", &Budget{Tokens: i64(1000), Period: Total}, nil, Spend{Tokens: 999})
	if err := l.Admit("k"); err != nil {
		t.Fatalf("one token under: %v", err)
	}
	l.Charge("k", 0, 1)
	if code(l.Admit("k")) != "KEY_BUDGET_EXCEEDED" {
		t.Fatal("at the token budget: admitted")
	}
}

// TestPeriodRollover: a day's budget resets at UTC midnight, a month's at the
// first of the next month (February's end included), a total never.
func TestPeriodRollover(t *testing.T) {
	for _, c := range []struct {
		period     Period
		start, end time.Time
	}{
		{Day, time.Date(2026, 3, 14, 10, 0, 0, 0, time.UTC), time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)},
		{Month, time.Date(2026, 2, 10, 10, 0, 0, 0, time.UTC), time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)},
		{Month, time.Date(2026, 12, 31, 23, 59, 0, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		clk := clock.NewFake(c.start)
		l := New(clk)
		l.Set("k", &Budget{USD: usd(0.01), Period: c.period}, nil, Spend{})
		l.Charge("k", 0.02, 5)
		clk.Set(c.end.Add(-time.Nanosecond))
		if code(l.Admit("k")) != "KEY_BUDGET_EXCEEDED" {
			t.Fatalf("%s: admitted a nanosecond before %v", c.period, c.end)
		}
		clk.Set(c.end)
		if err := l.Admit("k"); err != nil {
			t.Fatalf("%s: refused at %v: %v", c.period, c.end, err)
		}
		s := l.Spend("k")
		if s.USD != 0 || s.Tokens != 0 || s.PeriodStart == nil || *s.PeriodStart != c.end.UnixMilli() {
			t.Fatalf("%s: spend after rollover %+v", c.period, s)
		}
	}
	clk := clock.NewFake(time.Date(2026, 3, 14, 10, 0, 0, 0, time.UTC))
	l := New(clk)
	l.Set("k", &Budget{USD: usd(0.01), Period: Total}, nil, Spend{USD: 0.01})
	clk.Advance(400 * 24 * time.Hour)
	if code(l.Admit("k")) != "KEY_BUDGET_EXCEEDED" || l.Spend("k").PeriodStart != nil {
		t.Fatal("a total budget never resets")
	}
}

// TestRPMWindow: the limit's requests pass, the next waits until the oldest
// leaves the sliding minute.
func TestRPMWindow(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	l := New(clk)
	l.Set("k", nil, &Limits{RPM: intp(2)}, Spend{})
	if l.Admit("k") != nil {
		t.Fatal("first")
	}
	clk.Advance(10 * time.Second)
	if l.Admit("k") != nil {
		t.Fatal("second")
	}
	err := l.Admit("k")
	if code(err) != "KEY_RATE_LIMITED" || errs.As(err).RetryAfter != 50*time.Second {
		t.Fatalf("third: %v (retry %v), want KEY_RATE_LIMITED after 50s", err, errs.As(err).RetryAfter)
	}
	clk.Advance(50*time.Second - time.Millisecond)
	if code(l.Admit("k")) != "KEY_RATE_LIMITED" {
		t.Fatal("admitted before the first left the window")
	}
	clk.Advance(time.Millisecond)
	if err := l.Admit("k"); err != nil {
		t.Fatalf("refused once the first left the window: %v", err)
	}
}

// TestTPMWindow: charged tokens fill the minute; at the limit a request is
// refused until enough of them age out.
func TestTPMWindow(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	l := New(clk)
	l.Set("k", nil, &Limits{TPM: i64(1000)}, Spend{})
	l.Charge("k", 0, 600)
	clk.Advance(20 * time.Second)
	l.Charge("k", 0, 399)
	if err := l.Admit("k"); err != nil {
		t.Fatalf("999 of 1000: %v", err)
	}
	l.Charge("k", 0, 1)
	err := l.Admit("k")
	if code(err) != "KEY_RATE_LIMITED" || errs.As(err).RetryAfter != 40*time.Second {
		t.Fatalf("1000 of 1000: %v (retry %v), want 40s", err, errs.As(err).RetryAfter)
	}
	clk.Advance(40 * time.Second)
	if err := l.Admit("k"); err != nil {
		t.Fatalf("after the first 600 aged out: %v", err)
	}
}

// TestUnknownKeysAndValidation: a key without budget or limits is always
// admitted but its spend is kept; bad budgets and limits are refused.
func TestUnknownKeysAndValidation(t *testing.T) {
	l := New(clock.NewFake(time.Unix(0, 0)))
	l.Charge("free", 5, 10)
	if l.Admit("free") != nil || l.Spend("free").USD != 5 || l.Admit("") != nil {
		t.Fatal("a key without budget")
	}
	for _, b := range []*Budget{{Period: "week"}, {USD: usd(-1), Period: Day}, {Tokens: i64(-1), Period: Day}} {
		if b.Validate() == nil {
			t.Errorf("%+v accepted", b)
		}
	}
	for _, lim := range []*Limits{{RPM: intp(0)}, {TPM: i64(0)}} {
		if lim.Validate() == nil {
			t.Errorf("%+v accepted", lim)
		}
	}
}

// TestReserveHoldsUntilSettled: a request admitted under the budget holds its
// estimate, so the next one is refused while it is in flight; settling at
// the real cost gives back the rest (and a request that was not served gives
// back everything); a hold taken before the period ended is not taken off
// the next period's spend.
func TestReserveHoldsUntilSettled(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 3, 14, 23, 0, 0, 0, time.UTC))
	l := New(clk)
	l.Set("k", &Budget{USD: usd(1), Tokens: i64(1000), Period: Day}, nil, Spend{USD: 0.5})
	h1, err := l.Reserve("k", 0.5, 100)
	if err != nil || !h1.Held || h1.USD != 0.5 {
		t.Fatalf("first hold: %+v %v", h1, err)
	}
	if _, err := l.Reserve("k", 0.01, 1); code(err) != "KEY_BUDGET_EXCEEDED" {
		t.Fatalf("a second request while the first holds the rest of the budget: %v", err)
	}
	l.Settle(h1, 0.2, 30) // it cost less than estimated
	if sp := l.Spend("k"); sp.USD != 0.7 || sp.Tokens != 30 {
		t.Fatalf("spend after settling %+v, want 0.7 and 30 tokens", sp)
	}
	h2, err := l.Reserve("k", 0.29, 10)
	if err != nil {
		t.Fatalf("a cent under the budget with the hold: %v", err)
	}
	l.Settle(h2, 0, 0) // not served
	if sp := l.Spend("k"); sp.USD != 0.7 || sp.Tokens != 30 {
		t.Fatalf("spend after an unserved request %+v", sp)
	}
	h3, _ := l.Reserve("k", 0.1, 10)
	clk.Advance(2 * time.Hour) // the day ended while it was in flight
	l.Settle(h3, 0.05, 5)
	if sp := l.Spend("k"); sp.USD != 0.05 || sp.Tokens != 5 {
		t.Fatalf("the next day's spend %+v, want the answer's 0.05 alone", sp)
	}
	// Tokens are held like USD.
	l.Set("t", &Budget{Tokens: i64(100), Period: Total}, nil, Spend{})
	if _, err := l.Reserve("t", 0, 100); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Reserve("t", 0, 1); code(err) != "KEY_BUDGET_EXCEEDED" {
		t.Fatalf("the token budget held: %v", err)
	}
	// A key without a budget holds nothing.
	if h, err := l.Reserve("free", 1, 1); err != nil || h.Held {
		t.Fatalf("no budget: %+v %v", h, err)
	}
}

// TestAlertsAt80And100Percent: one alert when the settled spend reaches 80 %
// of the budget and one at 100 %, never twice per period; a new period alerts
// again; a key set at 90 % (spend read back at start) is no news.
func TestAlertsAt80And100Percent(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC))
	l := New(clk)
	var got []int
	l.OnAlert(func(a Alert) { got = append(got, a.Percent) })
	l.Set("k", &Budget{USD: usd(1), Period: Day}, nil, Spend{})
	for _, c := range []struct {
		charge float64
		want   []int
	}{
		{0.79, nil},
		{0.01, []int{80}}, // exactly 80 %
		{0.1, []int{80}},
		{0.0999, []int{80}}, // 99.99 %
		{0.0001, []int{80, 100}},
		{0.5, []int{80, 100}},
	} {
		l.Charge("k", c.charge, 1)
		if len(got) != len(c.want) || (len(got) > 0 && got[len(got)-1] != c.want[len(c.want)-1]) {
			t.Fatalf("after +%v: alerts %v, want %v", c.charge, got, c.want)
		}
	}
	clk.Advance(12 * time.Hour) // the next day
	l.Charge("k", 0.85, 1)
	if len(got) != 3 || got[2] != 80 {
		t.Fatalf("the next day: %v", got)
	}
	l.Set("s", &Budget{Tokens: i64(100), Period: Total}, nil, Spend{Tokens: 90})
	l.Charge("s", 0, 5)
	if len(got) != 3 {
		t.Fatalf("a key set at 90 %% alerted: %v", got)
	}
	l.Charge("s", 0, 5)
	if len(got) != 4 || got[3] != 100 {
		t.Fatalf("the token budget reached: %v", got)
	}
}

// TestSetKeepsTheCountedSpend: a budget changed within its period keeps the
// spend the ledger counted when the seed (the request log, whose newest rows
// may not be written yet) has less; a seed with more wins.
func TestSetKeepsTheCountedSpend(t *testing.T) {
	l := New(clock.NewFake(time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)))
	l.Set("k", &Budget{USD: usd(1), Period: Day}, nil, Spend{})
	l.Charge("k", 0.3, 30)
	l.Set("k", &Budget{USD: usd(2), Period: Day}, nil, Spend{USD: 0.1, Tokens: 10})
	if sp := l.Spend("k"); sp.USD != 0.3 || sp.Tokens != 30 {
		t.Fatalf("spend %+v, want the counted 0.3", sp)
	}
	l.Set("k", &Budget{USD: usd(2), Period: Day}, nil, Spend{USD: 0.5, Tokens: 50})
	if sp := l.Spend("k"); sp.USD != 0.5 {
		t.Fatalf("spend %+v, want the seed's 0.5", sp)
	}
	l.Set("k", &Budget{USD: usd(2), Period: Month}, nil, Spend{USD: 0.2, Tokens: 20})
	if sp := l.Spend("k"); sp.USD != 0.2 {
		t.Fatalf("another period: spend %+v, want the seed's 0.2", sp)
	}
}

// TestTPMCountsRequestsInFlight: requests admitted together hold their
// estimated tokens against the TPM limit until settled, so 40 concurrent
// requests of 60 tokens each against tpm 100 admit two (the second is
// admitted under the limit with the first in flight, as a budget admits the
// request that crosses it), not 40; settling gives the holds back.
func TestTPMCountsRequestsInFlight(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, c := range []struct {
		name   string
		budget *Budget
	}{
		{"rate limit alone", nil},
		{"with a budget", &Budget{USD: usd(100), Period: Day}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := New(clk)
			l.Set("k", c.budget, &Limits{TPM: i64(100)}, Spend{})
			var (
				mu       sync.Mutex
				admitted []Hold
				refused  int
				wg       sync.WaitGroup
				start    = make(chan struct{})
			)
			for range 40 {
				wg.Go(func() {
					<-start
					h, err := l.Reserve("k", 0.001, 60)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						admitted = append(admitted, h)
					case code(err) == "KEY_RATE_LIMITED" && errs.As(err).RetryAfter == time.Second:
						refused++
					default:
						t.Errorf("refusal %v (retry %v)", err, errs.As(err).RetryAfter)
					}
				})
			}
			close(start)
			wg.Wait()
			if len(admitted) != 2 || refused != 38 {
				t.Fatalf("admitted %d, refused %d of 40 against tpm 100 at 60 tokens each; want 2 and 38", len(admitted), refused)
			}
			for _, h := range admitted {
				if h.Rate != 60 {
					t.Fatalf("hold %+v, want 60 tokens held against the limit", h)
				}
				l.Settle(h, 0, 0) // not served: nothing charged, the holds given back
			}
			if err := l.Admit("k"); err != nil {
				t.Fatalf("after the holds were given back: %v", err)
			}
			h, err := l.Reserve("k", 0, 60)
			if err != nil {
				t.Fatal(err)
			}
			l.Settle(h, 0, 100) // served: its real tokens fill the window
			if err := l.Admit("k"); code(err) != "KEY_RATE_LIMITED" || errs.As(err).RetryAfter != time.Minute {
				t.Fatalf("a full window: %v (retry %v), want a minute", err, errs.As(err).RetryAfter)
			}
		})
	}
}

// TestSettleBoundsWhatItCounts: a cost that is not a finite number or is
// negative, and negative tokens, never make a spend +Inf, NaN or smaller.
func TestSettleBoundsWhatItCounts(t *testing.T) {
	l := New(clock.NewFake(time.Unix(0, 0)))
	l.Set("k", &Budget{USD: usd(1), Period: Total}, nil, Spend{})
	l.Charge("k", 0.5, 10)
	l.Charge("k", -100, -1<<62)
	if sp := l.Spend("k"); sp.USD != 0.5 || sp.Tokens != 10 {
		t.Fatalf("after negative counts: %+v", sp)
	}
	l.Charge("k", math.Inf(1), 0)
	l.Charge("k", math.NaN(), 0)
	if sp := l.Spend("k"); math.IsInf(sp.USD, 0) || math.IsNaN(sp.USD) || sp.USD < MaxUSD {
		t.Fatalf("after +Inf and NaN costs: %+v, want finite and at least %g", sp, MaxUSD)
	}
	if err := l.Admit("k"); code(err) != "KEY_BUDGET_EXCEEDED" {
		t.Fatalf("a budget after an unbounded cost: %v", err)
	}
	// A spend read back from rows stored before costs were bounded.
	l.Set("old", &Budget{USD: usd(1), Period: Total}, nil, Spend{USD: math.Inf(1), Tokens: -5})
	if sp := l.Spend("old"); math.IsInf(sp.USD, 0) || sp.USD < 1 || sp.Tokens != 0 {
		t.Fatalf("a seed of +Inf: %+v, want a finite spend over the budget", sp)
	}
}

// TestHeldBesideSpent (issue 42 item 4): the holds of the requests in flight
// are shown apart from what was spent, the refusal they cause names the key,
// the budget, the spent part and the held part, and a settled or new-period
// hold is no longer held.
func TestHeldBesideSpent(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC))
	l := New(clk)
	l.Set("k", &Budget{USD: usd(0.002), Period: Day}, nil, Spend{})
	l.mu.Lock()
	l.keys["k"].name = "ci"
	l.mu.Unlock()
	first, err := l.Reserve("k", 0.0008, 10)
	if err != nil {
		t.Fatal(err)
	}
	l.Settle(first, 0.0008, 10) // spent
	h1, _ := l.Reserve("k", 0.0006, 5)
	h2, _ := l.Reserve("k", 0.0006, 5)
	if s := l.Spend("k"); math.Abs(s.USD-0.002) > 1e-12 || math.Abs(s.HeldUSD-0.0012) > 1e-12 || s.HeldTokens != 10 || s.InFlight != 2 {
		t.Fatalf("spend with two holds: %+v", s)
	}
	_, err = l.Reserve("k", 0.0001, 1)
	want := `API key "ci" has reached its day budget of $0.0020: $0.0008 spent, $0.0012 held by 2 request(s) in flight`
	if code(err) != "KEY_BUDGET_EXCEEDED" || errs.As(err).Message != want {
		t.Fatalf("refusal %v, want %q", err, want)
	}
	l.Settle(h1, 0.0005, 5)
	if s := l.Spend("k"); math.Abs(s.HeldUSD-0.0006) > 1e-12 || s.InFlight != 1 {
		t.Fatalf("after one settled: %+v", s)
	}
	clk.Advance(24 * time.Hour) // a new day: the old hold is not held in it
	if s := l.Spend("k"); s.HeldUSD != 0 || s.InFlight != 0 || s.USD != 0 {
		t.Fatalf("a new period: %+v", s)
	}
	l.Settle(h2, 0.0006, 5) // charged in full to the new day, nothing held
	if s := l.Spend("k"); math.Abs(s.USD-0.0006) > 1e-12 || s.HeldUSD != 0 || s.InFlight != 0 {
		t.Fatalf("the late answer: %+v", s)
	}
}
