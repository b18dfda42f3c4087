package wall

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const ms = time.Millisecond

func both() Settings { return Settings{LowPriority: true, AutoReset: true} }
func lane() Settings { return Settings{LowPriority: true} }

// wallSig is the wall 429 offering the lane, resetting at reset.
func wallSig(reset time.Time) Signal {
	return Signal{Status: 429, UnifiedStatus: "rejected", SlowOffer: "treatment", Reset: reset}
}

func TestParseReadsTheUnifiedHeaders(t *testing.T) {
	h := http.Header{}
	reset := t0.Add(2 * time.Hour)
	h.Set(HeaderStatus, "rejected")
	h.Set(HeaderSlowOffer, "treatment")
	h.Set(HeaderReset, strconv.FormatInt(reset.Unix(), 10))
	h.Set(HeaderSlowRetryAfter, "30")
	h.Set(HeaderSlowMaxWait, "120")
	h.Set(HeaderOverageInUse, "true")
	s := Parse(429, h.Get)
	if !s.Wall() || s.SlowOffer != "treatment" || !s.Reset.Equal(reset) || s.SlowRetry != 30*time.Second ||
		s.SlowMaxWait != 2*time.Minute || !s.OverageInUse {
		t.Fatalf("parsed %+v", s)
	}
	if Parse(429, http.Header{}.Get).Wall() {
		t.Fatal("a burst 429 without unified headers is not the wall")
	}
	h2 := http.Header{}
	h2.Set(HeaderStatus, "rejected")
	if Parse(200, h2.Get).Wall() {
		t.Fatal("only a 429 is the wall")
	}
}

func TestOfferAcceptedHoldsUntilResetPlusGrace(t *testing.T) {
	reset := t0.Add(90 * time.Minute)
	s, d := Decide(State{}, lane(), wallSig(reset), Request{}, t0)
	if d.Action != RetrySlow || d.Reason != "offer_accepted" {
		t.Fatalf("decision %+v", d)
	}
	until := reset.Add(LaneGrace)
	if !s.LaneUntil.Equal(until) {
		t.Fatalf("lane until %v, want %v", s.LaneUntil, until)
	}
	if !s.InLane(until.Add(-ms)) || s.InLane(until) {
		t.Fatal("the lane holds until reset+60s exactly")
	}
}

func TestNoLaneWithoutOptInOrOffer(t *testing.T) {
	reset := t0.Add(time.Hour)
	cases := []struct {
		name string
		set  Settings
		sig  Signal
	}{
		{"opt-in off", Settings{}, wallSig(reset)},
		{"no offer", lane(), Signal{Status: 429, UnifiedStatus: "rejected", Reset: reset}},
		{"burst 429", lane(), Signal{Status: 429, SlowOffer: "treatment", Reset: reset}},
		{"reset in the past", lane(), wallSig(t0)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, d := Decide(State{}, c.set, c.sig, Request{}, t0)
			if d.Action != Pass || s.InLane(t0) {
				t.Fatalf("decision %+v state %+v", d, s)
			}
		})
	}
}

func TestInLaneKeepsOnActiveAndNotNeeded(t *testing.T) {
	st := State{LaneUntil: t0.Add(time.Hour), LaneReset: t0.Add(59 * time.Minute)}
	for _, status := range []string{"active", "not_needed", ""} {
		s, d := Decide(st, lane(), Signal{Status: 200, SlowStatus: status, Reset: st.LaneReset}, Request{SentSlow: true}, t0)
		if d.Action != Pass || s != st {
			t.Fatalf("%q: decision %+v state %+v", status, d, s)
		}
	}
}

func TestSlotWaitJitterBounds(t *testing.T) {
	cases := []struct {
		hint   time.Duration
		jitter float64
		want   time.Duration
	}{
		{0, 0.5, 20 * time.Second},              // default
		{0, 0, 14 * time.Second},                // −30 %
		{0, 1, 26 * time.Second},                // +30 %
		{4 * time.Second, 0.5, 5 * time.Second}, // clamp up to 5 s
		{5 * time.Second, 0, 3500 * ms},         // 5 s −30 %
		{601 * time.Second, 0.5, 600 * time.Second},
		{600 * time.Second, 1, 780 * time.Second},
	}
	for _, c := range cases {
		if got := SlotWait(c.hint, c.jitter); got != c.want {
			t.Errorf("SlotWait(%v, %v) = %v, want %v", c.hint, c.jitter, got, c.want)
		}
	}
}

func TestSlotBusyWaitsThenEndsAtMaxWaitWithCoolOff(t *testing.T) {
	st := State{LaneUntil: t0.Add(time.Hour), LaneReset: t0.Add(59 * time.Minute)}
	busy := Signal{Status: 429, SlowStatus: "slot_busy", SlowRetry: 20 * time.Second, SlowMaxWait: 60 * time.Second, Reset: st.LaneReset}
	// 40 s waited + 20 s = exactly the 60 s max-wait: still waits.
	s, d := Decide(st, lane(), busy, Request{SentSlow: true, Waited: 40 * time.Second, Jitter: 0.5}, t0)
	if d.Action != Wait || d.Wait != 20*time.Second || s != st {
		t.Fatalf("at the bound: %+v", d)
	}
	// 1 ms more and the lane ends with a 10-minute cool-off.
	s, d = Decide(st, lane(), busy, Request{SentSlow: true, Waited: 40*time.Second + ms, Jitter: 0.5}, t0)
	if d.Action != Pass || d.Reason != EndMaxWait || s.InLane(t0) || !s.CoolOffUntil.Equal(t0.Add(CoolOff)) {
		t.Fatalf("past the bound: %+v %+v", d, s)
	}
	// The cool-off blocks re-accepting the offer until its last millisecond.
	reset := t0.Add(2 * time.Hour)
	if _, d := Decide(s, lane(), wallSig(reset), Request{}, s.CoolOffUntil.Add(-ms)); d.Action != Pass || d.Reason != "cool_off" {
		t.Fatalf("during cool-off: %+v", d)
	}
	if _, d := Decide(s, lane(), wallSig(reset), Request{}, s.CoolOffUntil); d.Action != RetrySlow {
		t.Fatalf("after cool-off: %+v", d)
	}
}

func TestA529WaitsLikeSlotBusyWithDefaults(t *testing.T) {
	st := State{LaneUntil: t0.Add(time.Hour)}
	sig := Signal{Status: 529}
	// Default max-wait 20 min: 19m40s + 20 s fits, one more ms does not.
	if _, d := Decide(st, lane(), sig, Request{SentSlow: true, Waited: 19*time.Minute + 40*time.Second, Jitter: 0.5}, t0); d.Action != Wait || d.Wait != DefaultSlowRetry {
		t.Fatalf("%+v", d)
	}
	if _, d := Decide(st, lane(), sig, Request{SentSlow: true, Waited: 19*time.Minute + 40*time.Second + ms, Jitter: 0.5}, t0); d.Reason != EndMaxWait {
		t.Fatalf("%+v", d)
	}
}

func TestMaxWaitClampAndFirstByteBudget(t *testing.T) {
	st := State{LaneUntil: t0.Add(time.Hour)}
	// slow-max-wait 10 s clamps up to 1 min.
	sig := Signal{Status: 429, SlowStatus: "slot_busy", SlowRetry: 20 * time.Second, SlowMaxWait: 10 * time.Second}
	if _, d := Decide(st, lane(), sig, Request{SentSlow: true, Waited: 40 * time.Second, Jitter: 0.5}, t0); d.Action != Wait {
		t.Fatalf("clamped to 1 min: %+v", d)
	}
	// The request's first-byte budget minus 5 s bounds the wait: 25 s left → 20 s usable.
	sig.SlowMaxWait = time.Hour
	if _, d := Decide(st, lane(), sig, Request{SentSlow: true, FirstByteLeft: 25 * time.Second, Jitter: 0.5}, t0); d.Action != Wait {
		t.Fatalf("budget exactly enough: %+v", d)
	}
	if _, d := Decide(st, lane(), sig, Request{SentSlow: true, FirstByteLeft: 25*time.Second - ms, Jitter: 0.5}, t0); d.Reason != EndMaxWait {
		t.Fatalf("budget short by 1 ms: %+v", d)
	}
}

func TestLaneEndingConditions(t *testing.T) {
	st := State{LaneUntil: t0.Add(time.Hour), LaneReset: t0.Add(59 * time.Minute)}
	cases := []struct {
		name string
		sig  Signal
		want string
	}{
		{"weekly", Signal{Status: 429, SlowStatus: "weekly_limit"}, EndWeekly},
		{"off", Signal{Status: 429, SlowStatus: "off"}, EndOff},
		{"ineligible", Signal{Status: 429, SlowStatus: "ineligible"}, EndIneligible},
		{"overage", Signal{Status: 200, SlowStatus: "active", OverageInUse: true}, EndExtraUsage},
		{"rollover", Signal{Status: 200, SlowStatus: "active", Reset: st.LaneReset.Add(5 * time.Hour)}, EndRollover},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, d := Decide(st, lane(), c.sig, Request{SentSlow: true}, t0)
			if d.Action != Pass || d.Reason != c.want || s.InLane(t0) || s.LastEnd != c.want {
				t.Fatalf("decision %+v state %+v", d, s)
			}
		})
	}
}

func TestBudgetExhaustedIsRememberedUntilItsResetAtMostEightDays(t *testing.T) {
	st := State{LaneUntil: t0.Add(time.Hour)}
	budgetReset := t0.Add(3 * 24 * time.Hour)
	s, d := Decide(st, lane(), Signal{Status: 429, SlowStatus: "budget_exhausted", BudgetReset: budgetReset}, Request{SentSlow: true}, t0)
	if d.Reason != EndBudget || !s.BudgetUntil.Equal(budgetReset) {
		t.Fatalf("%+v %+v", d, s)
	}
	offer := wallSig(budgetReset.Add(time.Hour))
	if _, d := Decide(s, lane(), offer, Request{}, budgetReset.Add(-ms)); d.Reason != "budget_exhausted" {
		t.Fatalf("before the budget reset: %+v", d)
	}
	if _, d := Decide(s, lane(), offer, Request{}, budgetReset); d.Action != RetrySlow {
		t.Fatalf("at the budget reset: %+v", d)
	}
	// A budget reset announced further than 8 days out is capped at 8 days.
	s, _ = Decide(st, lane(), Signal{Status: 429, SlowStatus: "budget_exhausted", BudgetReset: t0.Add(30 * 24 * time.Hour)}, Request{SentSlow: true}, t0)
	if !s.BudgetUntil.Equal(t0.Add(BudgetMemoryMax)) {
		t.Fatalf("budget memory %v", s.BudgetUntil)
	}
}

func TestResetTriedBeforeTheLane(t *testing.T) {
	reset := t0.Add(time.Hour)
	if _, d := Decide(State{}, both(), wallSig(reset), Request{}, t0); d.Action != ClaimReset {
		t.Fatalf("%+v", d)
	}
	// After the flow ran for this request the lane is next.
	if _, d := Decide(State{}, both(), wallSig(reset), Request{ResetTried: true}, t0); d.Action != RetrySlow {
		t.Fatalf("%+v", d)
	}
}

func TestResetOutcomes(t *testing.T) {
	next := t0.Add(3 * 24 * time.Hour)
	cases := []struct {
		name     string
		out      ResetOutcome
		full     bool
		nextAt   time.Time
		backoff  time.Time
		recorded string
	}{
		{"claimed", ResetOutcome{Result: ResultReset}, true, t0.Add(ResetDefaultNext), time.Time{}, ResultReset},
		{"not limited", ResetOutcome{Result: ResultNotLimited}, true, time.Time{}, time.Time{}, ResultNotLimited},
		{"already used with next", ResetOutcome{Result: ResultAlreadyUsed, NextAvailableAt: next}, false, next, time.Time{}, ResultAlreadyUsed},
		{"not offered default week", ResetOutcome{Result: ResultNotOffered}, false, t0.Add(7 * 24 * time.Hour), time.Time{}, ResultNotOffered},
		{"failure backs off 15 min", ResetOutcome{Result: ResultFailed}, false, time.Time{}, t0.Add(15 * time.Minute), ResultFailed},
		{"unknown result is a failure", ResetOutcome{Result: "weird"}, false, time.Time{}, t0.Add(15 * time.Minute), ResultFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, full := AfterReset(State{}, c.out, t0)
			if full != c.full || !s.ResetNextAt.Equal(c.nextAt) || !s.ResetBackoffUntil.Equal(c.backoff) || s.ResetResult != c.recorded {
				t.Fatalf("full=%v state %+v", full, s)
			}
		})
	}
}

func TestResetMemoryBoundaries(t *testing.T) {
	reset := t0.Add(30 * time.Hour)
	// already_used: not tried again before next_available_at, tried at it.
	s, _ := AfterReset(State{}, ResetOutcome{Result: ResultAlreadyUsed, NextAvailableAt: t0.Add(24 * time.Hour)}, t0)
	if _, d := Decide(s, both(), wallSig(reset), Request{}, s.ResetNextAt.Add(-ms)); d.Action == ClaimReset {
		t.Fatal("reset tried before next_available_at")
	}
	if _, d := Decide(s, both(), wallSig(reset), Request{}, s.ResetNextAt); d.Action != ClaimReset {
		t.Fatal("reset not tried at next_available_at")
	}
	// failure: 15 minutes of back-off, exactly.
	s, _ = AfterReset(State{}, ResetOutcome{Result: ResultFailed}, t0)
	if _, d := Decide(s, both(), wallSig(reset), Request{}, t0.Add(15*time.Minute-ms)); d.Action == ClaimReset {
		t.Fatal("reset tried during the back-off")
	}
	if _, d := Decide(s, both(), wallSig(reset), Request{}, t0.Add(15*time.Minute)); d.Action != ClaimReset {
		t.Fatal("reset not tried after the back-off")
	}
}

func TestTableKeepsStatePerConnection(t *testing.T) {
	tb := NewTable()
	tb.Update("a", func(s State) State { s.LaneUntil = t0; return s })
	if tb.Get("a").LaneUntil != t0 || !tb.Get("b").LaneUntil.IsZero() {
		t.Fatal("state not per connection")
	}
	tb.Update("a", func(State) State { return State{} })
	if len(tb.m) != 0 {
		t.Fatal("a zero state is not kept")
	}
}
