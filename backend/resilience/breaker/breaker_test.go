package breaker_test

import (
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"omniroute/backend/clock"
	"omniroute/backend/resilience/breaker"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// start is the fixed instant every fake clock begins at.
func start() time.Time { return time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC) }

// newBreaker returns a breaker on a fake clock for the given profile.
func newBreaker(t *testing.T, p breaker.Profile) (*breaker.Breaker, *clock.Fake) {
	t.Helper()
	clk := clock.NewFake(start())
	return breaker.New("prov", p, clk, nil), clk
}

// fail reports n counted failures through permits.
func fail(t *testing.T, b *breaker.Breaker, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		p, ok := b.Allow()
		if !ok {
			t.Fatalf("failure %d: Allow refused in state %s", i+1, b.State())
		}
		p.Failure()
	}
}

// succeed reports n successes through permits.
func succeed(t *testing.T, b *breaker.Breaker, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		p, ok := b.Allow()
		if !ok {
			t.Fatalf("success %d: Allow refused in state %s", i+1, b.State())
		}
		p.Success()
	}
}

// openBreaker drives a fresh breaker to OPEN with counted failures.
func openBreaker(t *testing.T, b *breaker.Breaker) {
	t.Helper()
	fail(t, b, b.Profile().FailureThreshold)
	if got := b.State(); got != breaker.Open {
		t.Fatalf("state after threshold failures = %s, want OPEN", got)
	}
}

func TestDefaultProfile(t *testing.T) {
	tests := []struct {
		category string
		want     breaker.Profile
	}{
		{"oauth", breaker.Profile{FailureThreshold: 8, DegradationThreshold: 5, ResetTimeout: 60 * time.Second, MaxBackoffMultiplier: 1, SuccessesToClose: 3}},
		{"apikey", breaker.Profile{FailureThreshold: 12, DegradationThreshold: 7, ResetTimeout: 30 * time.Second, MaxBackoffMultiplier: 1, SuccessesToClose: 3}},
		{"local", breaker.Profile{FailureThreshold: 2, DegradationThreshold: 1, ResetTimeout: 15 * time.Second, MaxBackoffMultiplier: 1, SuccessesToClose: 3}},
		{"something-else", breaker.Profile{FailureThreshold: 12, DegradationThreshold: 7, ResetTimeout: 30 * time.Second, MaxBackoffMultiplier: 1, SuccessesToClose: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.category, func(t *testing.T) {
			got := breaker.DefaultProfile(tt.category)
			if got != tt.want {
				t.Fatalf("DefaultProfile(%q) = %+v, want %+v", tt.category, got, tt.want)
			}
			if got.Normalize() != got {
				t.Fatalf("default profile %q is not normalized: %+v", tt.category, got.Normalize())
			}
		})
	}
}

func TestProfileNormalize(t *testing.T) {
	tests := []struct {
		name string
		in   breaker.Profile
		want breaker.Profile
	}{
		{
			name: "zero value",
			in:   breaker.Profile{},
			want: breaker.Profile{FailureThreshold: 1, DegradationThreshold: 1, ResetTimeout: time.Second, MaxBackoffMultiplier: 1, SuccessesToClose: 1},
		},
		{
			name: "degradation not below failure threshold",
			in:   breaker.Profile{FailureThreshold: 5, DegradationThreshold: 9, ResetTimeout: time.Minute, MaxBackoffMultiplier: 8, SuccessesToClose: 3},
			want: breaker.Profile{FailureThreshold: 5, DegradationThreshold: 4, ResetTimeout: time.Minute, MaxBackoffMultiplier: 8, SuccessesToClose: 3},
		},
		{
			name: "derived degradation is ceil 60 percent",
			in:   breaker.Profile{FailureThreshold: 10, ResetTimeout: time.Minute, MaxBackoffMultiplier: 8, SuccessesToClose: 3},
			want: breaker.Profile{FailureThreshold: 10, DegradationThreshold: 6, ResetTimeout: time.Minute, MaxBackoffMultiplier: 8, SuccessesToClose: 3},
		},
		{
			name: "upper clamps",
			in:   breaker.Profile{FailureThreshold: 3, DegradationThreshold: 2, ResetTimeout: 48 * time.Hour, MaxBackoffMultiplier: 1000, SuccessesToClose: 3},
			want: breaker.Profile{FailureThreshold: 3, DegradationThreshold: 2, ResetTimeout: time.Hour, MaxBackoffMultiplier: 64, SuccessesToClose: 3},
		},
		{
			name: "negative values",
			in:   breaker.Profile{FailureThreshold: -4, DegradationThreshold: -1, ResetTimeout: -time.Second, MaxBackoffMultiplier: -2, SuccessesToClose: -3},
			want: breaker.Profile{FailureThreshold: 1, DegradationThreshold: 1, ResetTimeout: time.Second, MaxBackoffMultiplier: 1, SuccessesToClose: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.in.Normalize(); got != tt.want {
				t.Fatalf("Normalize() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestThresholdBoundaries checks threshold−1 / threshold for both DEGRADED and OPEN,
// for every default profile, through permits and through RecordFailure.
func TestThresholdBoundaries(t *testing.T) {
	type recorder struct {
		name   string
		record func(t *testing.T, b *breaker.Breaker)
	}
	recorders := []recorder{
		{"permit", func(t *testing.T, b *breaker.Breaker) { fail(t, b, 1) }},
		{"RecordFailure", func(_ *testing.T, b *breaker.Breaker) { b.RecordFailure() }},
	}
	for _, category := range []string{"oauth", "apikey", "local"} {
		for _, rec := range recorders {
			t.Run(category+"/"+rec.name, func(t *testing.T) {
				p := breaker.DefaultProfile(category)
				b, _ := newBreaker(t, p)
				for i := 1; i <= p.FailureThreshold; i++ {
					rec.record(t, b)
					var want breaker.State
					switch {
					case i >= p.FailureThreshold:
						want = breaker.Open
					case i >= p.DegradationThreshold:
						want = breaker.Degraded
					default:
						want = breaker.Closed
					}
					s := b.Status()
					if s.State != want {
						t.Fatalf("after %d failures (degrade %d, open %d): state %s, want %s",
							i, p.DegradationThreshold, p.FailureThreshold, s.State, want)
					}
					if s.Failures != i {
						t.Fatalf("after %d failures: Failures = %d", i, s.Failures)
					}
				}
			})
		}
	}
}

// TestExplicitBoundaries spells out threshold−1 and threshold for each profile.
func TestExplicitBoundaries(t *testing.T) {
	tests := []struct {
		category string
		failures int
		want     breaker.State
	}{
		{"oauth", 4, breaker.Closed},
		{"oauth", 5, breaker.Degraded},
		{"oauth", 7, breaker.Degraded},
		{"oauth", 8, breaker.Open},
		{"apikey", 6, breaker.Closed},
		{"apikey", 7, breaker.Degraded},
		{"apikey", 11, breaker.Degraded},
		{"apikey", 12, breaker.Open},
		{"local", 0, breaker.Closed},
		{"local", 1, breaker.Degraded},
		{"local", 2, breaker.Open},
	}
	for _, tt := range tests {
		t.Run(tt.category+"/"+string(tt.want), func(t *testing.T) {
			b, _ := newBreaker(t, breaker.DefaultProfile(tt.category))
			fail(t, b, tt.failures)
			if got := b.State(); got != tt.want {
				t.Fatalf("%s after %d failures: %s, want %s", tt.category, tt.failures, got, tt.want)
			}
		})
	}
}

func TestSuccessInClosedResetsFailures(t *testing.T) {
	b, _ := newBreaker(t, breaker.DefaultProfile("oauth"))
	fail(t, b, 4)
	succeed(t, b, 1)
	fail(t, b, 4)
	if s := b.Status(); s.State != breaker.Closed || s.Failures != 4 {
		t.Fatalf("got %s with %d failures, want CLOSED with 4 (success must reset the count)", s.State, s.Failures)
	}
}

// TestResetTimeoutBoundary: reset −1 ms still OPEN, exactly reset and +1 ms HALF_OPEN.
func TestResetTimeoutBoundary(t *testing.T) {
	tests := []struct {
		offset    time.Duration
		wantState breaker.State
		wantRetry time.Duration
		wantAllow bool
	}{
		{-time.Millisecond, breaker.Open, time.Millisecond, false},
		{0, breaker.HalfOpen, 0, true},
		{time.Millisecond, breaker.HalfOpen, 0, true},
	}
	for _, category := range []string{"oauth", "apikey", "local"} {
		for _, tt := range tests {
			t.Run(category+"/"+tt.offset.String(), func(t *testing.T) {
				p := breaker.DefaultProfile(category)
				b, clk := newBreaker(t, p)
				openBreaker(t, b)
				if got := b.RetryAfter(); got != p.ResetTimeout {
					t.Fatalf("RetryAfter right after opening = %v, want %v", got, p.ResetTimeout)
				}
				clk.Advance(p.ResetTimeout + tt.offset)
				if got := b.RetryAfter(); got != tt.wantRetry {
					t.Fatalf("RetryAfter = %v, want %v", got, tt.wantRetry)
				}
				if got := b.State(); got != tt.wantState {
					t.Fatalf("state = %s, want %s", got, tt.wantState)
				}
				if _, ok := b.Allow(); ok != tt.wantAllow {
					t.Fatalf("Allow = %v, want %v", ok, tt.wantAllow)
				}
			})
		}
	}
}

// TestOpenCycleBackoff: each failed probe re-opens with a doubled hold, capped at
// ResetTimeout × MaxBackoffMultiplier.
func TestOpenCycleBackoff(t *testing.T) {
	p := breaker.DefaultProfile("apikey")
	p.MaxBackoffMultiplier = 8 // 30s, ×8 cap (the default does not grow)
	b, clk := newBreaker(t, p)
	openBreaker(t, b)
	wantHolds := []time.Duration{30 * time.Second, 60 * time.Second, 120 * time.Second, 240 * time.Second, 240 * time.Second, 240 * time.Second}
	for i, hold := range wantHolds {
		cycle := i + 1
		s := b.Status()
		if s.State != breaker.Open || s.OpenCycles != cycle || s.RetryAfter != hold {
			t.Fatalf("cycle %d: state %s cycles %d retryAfter %v, want OPEN %d %v", cycle, s.State, s.OpenCycles, s.RetryAfter, cycle, hold)
		}
		clk.Advance(hold - time.Millisecond)
		if _, ok := b.Allow(); ok {
			t.Fatalf("cycle %d: admitted 1ms before the hold ends", cycle)
		}
		clk.Advance(time.Millisecond)
		probe, ok := b.Allow()
		if !ok || !probe.Probe() {
			t.Fatalf("cycle %d: no probe at hold end (ok=%v)", cycle, ok)
		}
		probe.Failure()
	}
	// A probe success closes and forgets the cycles: the next open starts at ×1 again.
	clk.Advance(240 * time.Second)
	succeed(t, b, 1)
	if s := b.Status(); s.State != breaker.Closed || s.OpenCycles != 0 || s.Failures != 0 {
		t.Fatalf("after probe success: %+v, want CLOSED with zero counters", s)
	}
	openBreaker(t, b)
	if got := b.RetryAfter(); got != 30*time.Second {
		t.Fatalf("hold after re-close and open = %v, want 30s", got)
	}
}

func TestMultiplierCapRespectsProfile(t *testing.T) {
	tests := []struct {
		mult  int
		holds []time.Duration
	}{
		{1, []time.Duration{10 * time.Second, 10 * time.Second, 10 * time.Second}},
		{2, []time.Duration{10 * time.Second, 20 * time.Second, 20 * time.Second}},
		{64, []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 320 * time.Second, 640 * time.Second, 640 * time.Second, 640 * time.Second}},
	}
	for _, tt := range tests {
		t.Run("x"+strconv.Itoa(tt.mult), func(t *testing.T) {
			p := breaker.Profile{FailureThreshold: 1, ResetTimeout: 10 * time.Second, MaxBackoffMultiplier: tt.mult, SuccessesToClose: 1}
			b, clk := newBreaker(t, p)
			fail(t, b, 1)
			for i, hold := range tt.holds {
				if got := b.RetryAfter(); got != hold {
					t.Fatalf("cycle %d hold = %v, want %v", i+1, got, hold)
				}
				clk.Advance(hold)
				fail(t, b, 1) // the probe fails
			}
		})
	}
}

// TestDegradedDecay: a DEGRADED breaker without a new failure for ResetTimeout ×
// MaxBackoffMultiplier decays to CLOSED at exactly that boundary.
func TestDegradedDecay(t *testing.T) {
	p := breaker.DefaultProfile("oauth") // quiet window 60s × 8 = 8m
	quiet := p.ResetTimeout * time.Duration(p.MaxBackoffMultiplier)
	tests := []struct {
		name    string
		advance time.Duration
		want    breaker.State
	}{
		{"quiet-1ms", quiet - time.Millisecond, breaker.Degraded},
		{"quiet", quiet, breaker.Closed},
		{"quiet+1ms", quiet + time.Millisecond, breaker.Closed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, clk := newBreaker(t, p)
			fail(t, b, p.DegradationThreshold)
			lastFailure := clk.Now()
			clk.Advance(tt.advance)
			s := b.Status()
			if s.State != tt.want {
				t.Fatalf("state = %s, want %s", s.State, tt.want)
			}
			if tt.want == breaker.Closed {
				if s.Failures != 0 {
					t.Fatalf("decayed with %d failures, want 0", s.Failures)
				}
				if !s.StateChangedAt.Equal(lastFailure.Add(quiet)) {
					t.Fatalf("StateChangedAt = %v, want the quiet-window end %v", s.StateChangedAt, lastFailure.Add(quiet))
				}
			}
		})
	}
}

func TestDegradedQuietWindowRestartsOnFailure(t *testing.T) {
	p := breaker.DefaultProfile("oauth")
	quiet := p.ResetTimeout * time.Duration(p.MaxBackoffMultiplier)
	b, clk := newBreaker(t, p)
	fail(t, b, p.DegradationThreshold)
	clk.Advance(quiet - time.Millisecond)
	fail(t, b, 1) // still DEGRADED, restarts the quiet window
	clk.Advance(quiet - time.Millisecond)
	if got := b.State(); got != breaker.Degraded {
		t.Fatalf("state = %s, want DEGRADED (quiet window restarted)", got)
	}
	clk.Advance(time.Millisecond)
	if got := b.State(); got != breaker.Closed {
		t.Fatalf("state = %s, want CLOSED", got)
	}
}

func TestDegradedNextFailureDecaysFirst(t *testing.T) {
	p := breaker.DefaultProfile("oauth")
	b, clk := newBreaker(t, p)
	fail(t, b, p.FailureThreshold-1) // DEGRADED, one short of OPEN
	clk.Advance(p.ResetTimeout * time.Duration(p.MaxBackoffMultiplier))
	b.RecordFailure() // the stale DEGRADED decays before this failure counts
	if s := b.Status(); s.State != breaker.Closed || s.Failures != 1 {
		t.Fatalf("got %s with %d failures, want CLOSED with 1", s.State, s.Failures)
	}
}

func TestDegradedSuccessesToClose(t *testing.T) {
	p := breaker.DefaultProfile("apikey")
	tests := []struct {
		name  string
		steps string // s = success, f = failure
		want  breaker.State
	}{
		{"two successes stay degraded", "ss", breaker.Degraded},
		{"three successes close", "sss", breaker.Closed},
		{"failure restarts the success count", "ssfss", breaker.Degraded},
		{"failure then three successes close", "ssfsss", breaker.Closed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newBreaker(t, p)
			fail(t, b, p.DegradationThreshold)
			for _, c := range tt.steps {
				if c == 's' {
					succeed(t, b, 1)
				} else {
					fail(t, b, 1)
				}
			}
			if got := b.State(); got != tt.want {
				t.Fatalf("state = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestConnectionTestPassed(t *testing.T) {
	tests := []struct {
		name     string
		failures int
		want     breaker.State
	}{
		{"degraded closes", 5, breaker.Closed},
		{"closed clears count", 3, breaker.Closed},
		{"open stays open", 8, breaker.Open},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newBreaker(t, breaker.DefaultProfile("oauth"))
			fail(t, b, tt.failures)
			b.ConnectionTestPassed()
			s := b.Status()
			if s.State != tt.want {
				t.Fatalf("state = %s, want %s", s.State, tt.want)
			}
			if tt.want == breaker.Closed && s.Failures != 0 {
				t.Fatalf("failures = %d, want 0", s.Failures)
			}
		})
	}
}

// TestHalfOpenSingleProbeConcurrent: 100 goroutines racing Allow on a HALF_OPEN
// breaker get exactly one permit.
func TestHalfOpenSingleProbeConcurrent(t *testing.T) {
	p := breaker.DefaultProfile("oauth")
	b, clk := newBreaker(t, p)
	openBreaker(t, b)
	clk.Advance(p.ResetTimeout)
	if got := b.State(); got != breaker.HalfOpen {
		t.Fatalf("state = %s, want HALF_OPEN", got)
	}
	const n = 100
	var (
		granted atomic.Int32
		wg      sync.WaitGroup
		ready   = make(chan struct{})
		permits = make(chan breaker.Permit, n)
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-ready
			if pm, ok := b.Allow(); ok {
				granted.Add(1)
				permits <- pm
			}
		}()
	}
	close(ready)
	wg.Wait()
	close(permits)
	if got := granted.Load(); got != 1 {
		t.Fatalf("granted %d probe permits, want exactly 1", got)
	}
	(<-permits).Success()
	if got := b.State(); got != breaker.Closed {
		t.Fatalf("state after probe success = %s, want CLOSED", got)
	}
}

// TestProbeReleaseGivesSlotBack: a probe whose request panics (or is cancelled)
// releases the slot through a deferred Release, so the next caller can probe.
func TestProbeReleaseGivesSlotBack(t *testing.T) {
	tests := []struct {
		name string
		run  func(p breaker.Permit)
	}{
		{"panic", func(p breaker.Permit) {
			defer func() { _ = recover() }()
			defer p.Release()
			panic("handler blew up")
		}},
		{"client cancelled", func(p breaker.Permit) {
			defer p.Release()
		}},
		{"uncounted 429", func(p breaker.Permit) {
			p.Release()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := breaker.DefaultProfile("local")
			b, clk := newBreaker(t, p)
			openBreaker(t, b)
			clk.Advance(p.ResetTimeout)
			probe, ok := b.Allow()
			if !ok || !probe.Probe() {
				t.Fatal("no probe in HALF_OPEN")
			}
			if _, ok := b.Allow(); ok {
				t.Fatal("a second probe was admitted while the first is outstanding")
			}
			tt.run(probe)
			s := b.Status()
			if s.State != breaker.HalfOpen || s.OpenCycles != 1 {
				t.Fatalf("after release: %s cycles %d, want HALF_OPEN cycles 1 (no outcome counted)", s.State, s.OpenCycles)
			}
			next, ok := b.Allow()
			if !ok || !next.Probe() {
				t.Fatal("the released slot was not given to the next caller")
			}
			probe.Failure() // late outcome on the released permit: ignored
			if got := b.State(); got != breaker.HalfOpen {
				t.Fatalf("late Failure on a released permit changed state to %s", got)
			}
			next.Success()
			if got := b.State(); got != breaker.Closed {
				t.Fatalf("state = %s, want CLOSED", got)
			}
		})
	}
}

func TestPermitReportsOnce(t *testing.T) {
	tests := []struct {
		name  string
		calls func(p breaker.Permit)
		want  int
	}{
		{"failure twice", func(p breaker.Permit) { p.Failure(); p.Failure() }, 1},
		{"failure then success", func(p breaker.Permit) { p.Failure(); p.Success() }, 1},
		{"release then failure", func(p breaker.Permit) { p.Release(); p.Failure() }, 0},
		{"copy shares the record", func(p breaker.Permit) { q := p; q.Failure(); p.Failure() }, 1},
		{"zero permit is inert", func(breaker.Permit) { var z breaker.Permit; z.Failure(); z.Success(); z.Release() }, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newBreaker(t, breaker.DefaultProfile("oauth"))
			p, ok := b.Allow()
			if !ok {
				t.Fatal("Allow refused")
			}
			tt.calls(p)
			if got := b.Status().Failures; got != tt.want {
				t.Fatalf("Failures = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestStaleGenerationPermit: permits obtained before a state change never change
// the new state.
func TestStaleGenerationPermit(t *testing.T) {
	t.Run("failure after Reset", func(t *testing.T) {
		b, _ := newBreaker(t, breaker.DefaultProfile("oauth"))
		fail(t, b, 3)
		old, _ := b.Allow()
		b.Reset()
		old.Failure()
		if s := b.Status(); s.State != breaker.Closed || s.Failures != 0 {
			t.Fatalf("stale permit counted: %+v", s)
		}
	})
	t.Run("success from CLOSED must not close HALF_OPEN", func(t *testing.T) {
		p := breaker.DefaultProfile("local")
		b, clk := newBreaker(t, p)
		old, _ := b.Allow()
		fail(t, b, p.FailureThreshold)
		clk.Advance(p.ResetTimeout)
		if got := b.State(); got != breaker.HalfOpen {
			t.Fatalf("state = %s, want HALF_OPEN", got)
		}
		old.Success()
		if got := b.State(); got != breaker.HalfOpen {
			t.Fatalf("stale success moved HALF_OPEN to %s", got)
		}
		if _, ok := b.Allow(); !ok {
			t.Fatal("stale success consumed the probe slot")
		}
	})
	t.Run("probe outcome after Reset", func(t *testing.T) {
		p := breaker.DefaultProfile("local")
		b, clk := newBreaker(t, p)
		openBreaker(t, b)
		clk.Advance(p.ResetTimeout)
		probe, ok := b.Allow()
		if !ok {
			t.Fatal("no probe")
		}
		b.Reset()
		probe.Failure()
		if s := b.Status(); s.State != breaker.Closed || s.Failures != 0 || s.OpenCycles != 0 {
			t.Fatalf("stale probe changed the reset breaker: %+v", s)
		}
	})
	t.Run("failure from before OPEN does not extend the hold", func(t *testing.T) {
		p := breaker.DefaultProfile("local")
		b, clk := newBreaker(t, p)
		old, _ := b.Allow()
		fail(t, b, p.FailureThreshold)
		clk.Advance(time.Second)
		old.Failure()
		if s := b.Status(); s.OpenCycles != 1 || s.RetryAfter != p.ResetTimeout-time.Second || s.Failures != p.FailureThreshold {
			t.Fatalf("stale failure changed the OPEN breaker: %+v", s)
		}
	})
	t.Run("failure after Restore", func(t *testing.T) {
		b, _ := newBreaker(t, breaker.DefaultProfile("oauth"))
		old, _ := b.Allow()
		b.Restore(breaker.Snapshot{State: breaker.Closed, Failures: 2})
		old.Failure()
		if got := b.Status().Failures; got != 2 {
			t.Fatalf("Failures = %d, want 2", got)
		}
	})
}

func TestRecordFailureInHalfOpenReopens(t *testing.T) {
	p := breaker.DefaultProfile("local")
	p.MaxBackoffMultiplier = 8
	b, clk := newBreaker(t, p)
	openBreaker(t, b)
	clk.Advance(p.ResetTimeout)
	probe, _ := b.Allow()
	b.RecordFailure()
	s := b.Status()
	if s.State != breaker.Open || s.OpenCycles != 2 || s.RetryAfter != 2*p.ResetTimeout {
		t.Fatalf("got %+v, want OPEN cycle 2 with a doubled hold", s)
	}
	probe.Success() // fenced: the breaker re-opened after this probe was issued
	if got := b.State(); got != breaker.Open {
		t.Fatalf("stale probe success moved OPEN to %s", got)
	}
	b.RecordFailure() // ignored in OPEN: never extends the hold
	if s2 := b.Status(); s2.OpenCycles != 2 || s2.RetryAfter != 2*p.ResetTimeout || s2.Failures != s.Failures {
		t.Fatalf("failure in OPEN changed it: %+v", s2)
	}
}

func TestRestoreRoundTrip(t *testing.T) {
	p := breaker.DefaultProfile("oauth")
	p.MaxBackoffMultiplier = 8
	tests := []struct {
		name      string
		setup     func(t *testing.T, b *breaker.Breaker, clk *clock.Fake)
		downtime  time.Duration
		wantState breaker.State
	}{
		{"closed with failures", func(t *testing.T, b *breaker.Breaker, _ *clock.Fake) { fail(t, b, 3) }, time.Minute, breaker.Closed},
		{"degraded", func(t *testing.T, b *breaker.Breaker, _ *clock.Fake) { fail(t, b, 6) }, time.Minute, breaker.Degraded},
		{"open still held", func(t *testing.T, b *breaker.Breaker, _ *clock.Fake) { openBreaker(t, b) }, 59 * time.Second, breaker.Open},
		{"open expired while down", func(t *testing.T, b *breaker.Breaker, _ *clock.Fake) { openBreaker(t, b) }, time.Hour, breaker.HalfOpen},
		{"second cycle still held", func(t *testing.T, b *breaker.Breaker, clk *clock.Fake) {
			openBreaker(t, b)
			clk.Advance(p.ResetTimeout)
			fail(t, b, 1)
		}, 119 * time.Second, breaker.Open},
		{"half open", func(t *testing.T, b *breaker.Breaker, clk *clock.Fake) {
			openBreaker(t, b)
			clk.Advance(p.ResetTimeout)
			_, _ = b.Allow() // probe in flight when the process died
		}, time.Second, breaker.HalfOpen},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var saved []breaker.Snapshot
			clk := clock.NewFake(start())
			b := breaker.New("openai", p, clk, func(s breaker.Snapshot) { saved = append(saved, s) })
			tt.setup(t, b, clk)
			if len(saved) == 0 {
				t.Fatal("onChange never called")
			}
			last := saved[len(saved)-1]
			if want := b.Status(); last.State != want.State || last.Failures != want.Failures || last.OpenCycles != want.OpenCycles {
				t.Fatalf("last written snapshot %+v differs from Status %+v", last, want)
			}

			clk.Advance(tt.downtime)
			restored := breaker.New("openai", p, clk, nil)
			restored.Restore(last)
			got := restored.Status()
			if got.State != tt.wantState {
				t.Fatalf("restored state = %s, want %s", got.State, tt.wantState)
			}
			if got.Failures != last.Failures || !got.LastFailureAt.Equal(last.LastFailureAt) || !got.OpenedAt.Equal(last.OpenedAt) {
				t.Fatalf("restored %+v, saved %+v", got, last)
			}
			if tt.wantState == breaker.Open {
				want := last.OpenedAt.Add(p.ResetTimeout * time.Duration(1<<(last.OpenCycles-1))).Sub(clk.Now())
				if got.RetryAfter != want {
					t.Fatalf("restored RetryAfter = %v, want %v", got.RetryAfter, want)
				}
			}
			if tt.wantState == breaker.HalfOpen {
				if _, ok := restored.Allow(); !ok {
					t.Fatal("restored HALF_OPEN admits no probe")
				}
			}
		})
	}
}

func TestRestoreUnknownStateLoadsClosed(t *testing.T) {
	b, _ := newBreaker(t, breaker.DefaultProfile("oauth"))
	b.Restore(breaker.Snapshot{State: "WEIRD", Failures: -3, OpenCycles: 7})
	if s := b.Status(); s.State != breaker.Closed || s.Failures != 0 || s.OpenCycles != 0 {
		t.Fatalf("got %+v, want a clean CLOSED", s)
	}
}

func TestOnChange(t *testing.T) {
	p := breaker.DefaultProfile("local")
	clk := clock.NewFake(start())
	var got []breaker.Snapshot
	b := breaker.New("ollama", p, clk, func(s breaker.Snapshot) { got = append(got, s) })

	succeed(t, b, 2) // nothing to change: no write
	if len(got) != 0 {
		t.Fatalf("onChange called %d times for no-op successes", len(got))
	}
	fail(t, b, 1) // failure count 0→1 and CLOSED→DEGRADED
	fail(t, b, 1) // → OPEN
	clk.Advance(p.ResetTimeout)
	_ = b.Status()   // lazy OPEN→HALF_OPEN
	_ = b.Status()   // no change
	succeed(t, b, 1) // probe closes
	b.Reset()        // already clean: no write
	want := []struct {
		state    breaker.State
		failures int
	}{
		{breaker.Degraded, 1},
		{breaker.Open, 2},
		{breaker.HalfOpen, 2},
		{breaker.Closed, 0},
	}
	if len(got) != len(want) {
		t.Fatalf("onChange calls = %d (%+v), want %d", len(got), got, len(want))
	}
	for i, w := range want {
		if got[i].State != w.state || got[i].Failures != w.failures || got[i].Provider != "ollama" {
			t.Fatalf("call %d = %+v, want %s with %d failures", i, got[i], w.state, w.failures)
		}
	}
}

func TestOnChangeMayReenter(t *testing.T) {
	p := breaker.DefaultProfile("local")
	clk := clock.NewFake(start())
	var (
		b     *breaker.Breaker
		calls int
	)
	b = breaker.New("x", p, clk, func(s breaker.Snapshot) {
		calls++
		_ = b.Status() // must not deadlock
		if s.State == breaker.Open {
			b.Reset() // a change made from inside onChange is delivered afterwards
		}
	})
	fail(t, b, 2)
	if got := b.State(); got != breaker.Closed {
		t.Fatalf("state = %s, want CLOSED after the re-entrant Reset", got)
	}
	if calls != 3 { // DEGRADED, OPEN, CLOSED (reset)
		t.Fatalf("onChange calls = %d, want 3", calls)
	}
}

func TestSetProfile(t *testing.T) {
	b, clk := newBreaker(t, breaker.DefaultProfile("oauth"))
	openBreaker(t, b)
	b.SetProfile(breaker.Profile{FailureThreshold: 3, ResetTimeout: 10 * time.Second, MaxBackoffMultiplier: 2, SuccessesToClose: 1})
	if got := b.RetryAfter(); got != 10*time.Second {
		t.Fatalf("RetryAfter after SetProfile = %v, want the new 10s hold", got)
	}
	clk.Advance(10 * time.Second)
	if got := b.State(); got != breaker.HalfOpen {
		t.Fatalf("state = %s, want HALF_OPEN", got)
	}
	if got := b.Profile().DegradationThreshold; got != 2 {
		t.Fatalf("SetProfile did not normalize: degradation %d, want 2", got)
	}
}

func TestProfilesFromEnv(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want map[string]breaker.Profile
	}{
		{
			name: "no overrides",
			env:  nil,
			want: map[string]breaker.Profile{
				"oauth":  breaker.DefaultProfile("oauth"),
				"apikey": breaker.DefaultProfile("apikey"),
				"local":  breaker.DefaultProfile("local"),
			},
		},
		{
			name: "valid overrides",
			env: map[string]string{
				"OMNIROUTE_CIRCUIT_BREAKER_OAUTH_FAILURE_THRESHOLD":       "20",
				"OMNIROUTE_CIRCUIT_BREAKER_OAUTH_DEGRADATION_THRESHOLD":   "10",
				"OMNIROUTE_CIRCUIT_BREAKER_OAUTH_RESET_TIMEOUT_MS":        "120000",
				"OMNIROUTE_CIRCUIT_BREAKER_API_KEY_RESET_TIMEOUT_MS":      " 5000 ",
				"OMNIROUTE_CIRCUIT_BREAKER_LOCAL_FAILURE_THRESHOLD":       "10",
				"OMNIROUTE_CIRCUIT_BREAKER_API_KEY_DEGRADATION_THRESHOLD": "3",
			},
			want: map[string]breaker.Profile{
				"oauth":  {FailureThreshold: 20, DegradationThreshold: 10, ResetTimeout: 2 * time.Minute, MaxBackoffMultiplier: 1, SuccessesToClose: 3},
				"apikey": {FailureThreshold: 12, DegradationThreshold: 3, ResetTimeout: 5 * time.Second, MaxBackoffMultiplier: 1, SuccessesToClose: 3},
				"local":  {FailureThreshold: 10, DegradationThreshold: 6, ResetTimeout: 15 * time.Second, MaxBackoffMultiplier: 1, SuccessesToClose: 3},
			},
		},
		{
			name: "invalid values ignored",
			env: map[string]string{
				"OMNIROUTE_CIRCUIT_BREAKER_OAUTH_FAILURE_THRESHOLD":     "abc",
				"OMNIROUTE_CIRCUIT_BREAKER_OAUTH_DEGRADATION_THRESHOLD": "-1",
				"OMNIROUTE_CIRCUIT_BREAKER_OAUTH_RESET_TIMEOUT_MS":      "0",
				"OMNIROUTE_CIRCUIT_BREAKER_API_KEY_FAILURE_THRESHOLD":   "1.5",
				"OMNIROUTE_CIRCUIT_BREAKER_LOCAL_RESET_TIMEOUT_MS":      "",
			},
			want: map[string]breaker.Profile{
				"oauth":  breaker.DefaultProfile("oauth"),
				"apikey": breaker.DefaultProfile("apikey"),
				"local":  breaker.DefaultProfile("local"),
			},
		},
		{
			name: "out-of-range values clamped",
			env: map[string]string{
				"OMNIROUTE_CIRCUIT_BREAKER_OAUTH_FAILURE_THRESHOLD": "4", // below the default degradation 5
				"OMNIROUTE_CIRCUIT_BREAKER_OAUTH_RESET_TIMEOUT_MS":  "10",
				"OMNIROUTE_CIRCUIT_BREAKER_LOCAL_RESET_TIMEOUT_MS":  "99999999999999999",
			},
			want: map[string]breaker.Profile{
				"oauth":  {FailureThreshold: 4, DegradationThreshold: 3, ResetTimeout: time.Second, MaxBackoffMultiplier: 1, SuccessesToClose: 3},
				"apikey": breaker.DefaultProfile("apikey"),
				"local":  {FailureThreshold: 2, DegradationThreshold: 1, ResetTimeout: time.Hour, MaxBackoffMultiplier: 1, SuccessesToClose: 3},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := breaker.ProfilesFromEnv(func(k string) string { return tt.env[k] })
			if len(got) != len(tt.want) {
				t.Fatalf("got %d profiles, want %d", len(got), len(tt.want))
			}
			for k, w := range tt.want {
				if got[k] != w {
					t.Fatalf("%s = %+v, want %+v", k, got[k], w)
				}
			}
		})
	}
}

func TestRegistry(t *testing.T) {
	clk := clock.NewFake(start())
	var writes atomic.Int32
	r := breaker.NewRegistry(clk, func(provider string) breaker.Profile {
		if provider == "ollama" {
			return breaker.DefaultProfile("local")
		}
		return breaker.DefaultProfile("apikey")
	}, func(breaker.Snapshot) { writes.Add(1) })

	// Concurrent Get returns a single breaker per provider.
	var wg sync.WaitGroup
	got := make([]*breaker.Breaker, 50)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = r.Get("openai")
		}()
	}
	wg.Wait()
	for i := range got {
		if got[i] != got[0] {
			t.Fatal("concurrent Get created more than one breaker")
		}
	}

	fail(t, r.Get("ollama"), 2)    // OPEN
	fail(t, r.Get("glm"), 7)       // DEGRADED
	fail(t, r.Get("anthropic"), 1) // CLOSED with a failure
	if open, half, deg, closed, total := r.Counts(); open != 1 || half != 0 || deg != 1 || closed != 2 || total != 4 {
		t.Fatalf("Counts = %d/%d/%d/%d/%d, want 1/0/1/2/4", open, half, deg, closed, total)
	}
	clk.Advance(15 * time.Second)
	if open, half, _, _, _ := r.Counts(); open != 0 || half != 1 {
		t.Fatalf("Counts after hold = open %d half %d, want lazy HALF_OPEN", open, half)
	}

	snaps := r.Snapshots()
	var names []string
	for _, s := range snaps {
		names = append(names, s.Provider)
	}
	if want := []string{"anthropic", "glm", "ollama", "openai"}; len(names) != len(want) || names[0] != want[0] || names[1] != want[1] || names[2] != want[2] || names[3] != want[3] {
		t.Fatalf("Snapshots order = %v, want %v", names, want)
	}

	// Restore into a fresh registry reproduces the states.
	r2 := breaker.NewRegistry(clk, nil, nil)
	r2.Restore(append(snaps, breaker.Snapshot{Provider: ""}))
	if _, half, deg, closed, total := r2.Counts(); half != 1 || deg != 1 || closed != 2 || total != 4 {
		t.Fatalf("restored Counts = half %d deg %d closed %d total %d", half, deg, closed, total)
	}

	if n := r.ResetAll(); n != 2 {
		t.Fatalf("ResetAll = %d, want 2 (HALF_OPEN + DEGRADED)", n)
	}
	if _, _, _, closed, total := r.Counts(); closed != total {
		t.Fatalf("after ResetAll %d of %d closed", closed, total)
	}
	if got := r.Get("anthropic").Status().Failures; got != 0 {
		t.Fatalf("ResetAll left %d failures on a CLOSED breaker", got)
	}
	if writes.Load() == 0 {
		t.Fatal("registry onChange never called")
	}
}

func TestOnChangePanicDoesNotWedgeDelivery(t *testing.T) {
	p := breaker.DefaultProfile("local")
	clk := clock.NewFake(start())
	var got []breaker.State
	b := breaker.New("x", p, clk, func(s breaker.Snapshot) {
		got = append(got, s.State)
		if len(got) == 1 {
			panic("store down")
		}
	})
	func() {
		defer func() { _ = recover() }()
		fail(t, b, 1) // DEGRADED: onChange panics
	}()
	fail(t, b, 1) // OPEN: still delivered
	if len(got) != 2 || got[1] != breaker.Open {
		t.Fatalf("deliveries = %v, want [DEGRADED OPEN]", got)
	}
}

// TestOnChangeConcurrentLastWriteWins: with many goroutines reporting at once, the
// last snapshot delivered always matches the final state (ordered delivery).
func TestOnChangeConcurrentLastWriteWins(t *testing.T) {
	p := breaker.Profile{FailureThreshold: 1000, DegradationThreshold: 10, ResetTimeout: time.Minute, MaxBackoffMultiplier: 8, SuccessesToClose: 3}
	clk := clock.NewFake(start())
	var (
		mu   sync.Mutex
		last breaker.Snapshot
		n    int
	)
	b := breaker.New("x", p, clk, func(s breaker.Snapshot) {
		mu.Lock()
		last = s
		n++
		mu.Unlock()
	})
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 10; j++ {
				if pm, ok := b.Allow(); ok {
					pm.Failure()
				}
			}
		}()
	}
	wg.Wait()
	final := b.Status()
	mu.Lock()
	defer mu.Unlock()
	if final.Failures != 500 || last.Failures != 500 || last.State != final.State {
		t.Fatalf("final %+v, last delivered %+v", final, last)
	}
	if n != 500 { // every failure-count change is delivered
		t.Fatalf("deliveries = %d, want 500", n)
	}
}

// TestDefaultHoldDoesNotGrow: with the default profile a failed probe re-opens
// for one ResetTimeout, so a provider down for 60 s (30 s reset timeout) and
// healthy afterwards is probed — and used — within one reset timeout of its
// recovery, never after a doubled hold.
func TestDefaultHoldDoesNotGrow(t *testing.T) {
	p := breaker.DefaultProfile("apikey")
	b, clk := newBreaker(t, p)
	openBreaker(t, b)
	opened := clk.Now()
	recovered := opened.Add(60 * time.Second)
	for clk.Now().Before(recovered) {
		s := b.Status()
		if s.State != breaker.Open || s.RetryAfter != p.ResetTimeout {
			t.Fatalf("at +%v: %s hold %v, want OPEN with a %v hold", clk.Now().Sub(opened), s.State, s.RetryAfter, p.ResetTimeout)
		}
		clk.Advance(p.ResetTimeout - time.Millisecond)
		if _, ok := b.Allow(); ok {
			t.Fatal("admitted 1 ms before the hold ends")
		}
		clk.Advance(time.Millisecond)
		probe, ok := b.Allow()
		if !ok {
			t.Fatal("no probe when the hold ends")
		}
		if clk.Now().Before(recovered) {
			probe.Failure()
			continue
		}
		probe.Success()
	}
	if got := b.State(); got != breaker.Closed {
		t.Fatalf("state %s after the first probe past recovery, want CLOSED", got)
	}
	if late := clk.Now().Sub(recovered); late > p.ResetTimeout {
		t.Fatalf("recovered provider used again %v after recovery, want within %v", late, p.ResetTimeout)
	}
}

// TestFold: the team row's next state after one instance's outcome, at the
// thresholds' edges (threshold−1 → DEGRADED, threshold → OPEN) and the hold's
// (expiry −1 ms still OPEN: a failure is ignored; expiry: HALF_OPEN, a failure
// re-opens one cycle further, a success closes).
func TestFold(t *testing.T) {
	p := breaker.Profile{FailureThreshold: 4, DegradationThreshold: 3, ResetTimeout: 10 * time.Second, MaxBackoffMultiplier: 1, SuccessesToClose: 2}
	t0 := start()
	closed := func(failures int) breaker.Snapshot {
		st := breaker.Closed
		if failures >= 3 {
			st = breaker.Degraded
		}
		return breaker.Snapshot{Provider: "p", State: st, Failures: failures, LastFailureAt: t0, StateChangedAt: t0}
	}
	open := breaker.Snapshot{Provider: "p", State: breaker.Open, Failures: 4, OpenCycles: 1, LastFailureAt: t0, OpenedAt: t0, StateChangedAt: t0}
	tests := []struct {
		name       string
		s          breaker.Snapshot
		c          breaker.Cause
		at         time.Time
		wantState  breaker.State
		wantFails  int
		wantCycles int
	}{
		{"2 failures + 1 = threshold-1: DEGRADED", closed(2), breaker.CauseFailure, t0.Add(time.Second), breaker.Degraded, 3, 0},
		{"3 failures + 1 = threshold: OPEN", closed(3), breaker.CauseFailure, t0.Add(time.Second), breaker.Open, 4, 1},
		{"success clears a CLOSED count", closed(2), breaker.CauseSuccess, t0.Add(time.Second), breaker.Closed, 0, 0},
		{"OPEN, hold −1 ms: failure ignored", open, breaker.CauseFailure, t0.Add(10*time.Second - time.Millisecond), breaker.Open, 4, 1},
		{"hold over: HALF_OPEN probe failure re-opens", open, breaker.CauseFailure, t0.Add(10 * time.Second), breaker.Open, 5, 2},
		{"hold over: HALF_OPEN probe success closes", open, breaker.CauseSuccess, t0.Add(10 * time.Second), breaker.Closed, 0, 0},
		{"test passed closes DEGRADED", closed(3), breaker.CauseTestPassed, t0.Add(time.Second), breaker.Closed, 0, 0},
		{"recovery only: OPEN past its hold reads HALF_OPEN", open, breaker.CauseRecovery, t0.Add(10 * time.Second), breaker.HalfOpen, 4, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := breaker.Fold(tt.s, p, tt.c, tt.at)
			if got.State != tt.wantState || got.Failures != tt.wantFails || got.OpenCycles != tt.wantCycles || got.Provider != "p" ||
				got.Cause != tt.c || !got.At.Equal(tt.at) {
				t.Fatalf("got %s failures %d cycles %d (%+v); want %s, %d, %d", got.State, got.Failures, got.OpenCycles, got,
					tt.wantState, tt.wantFails, tt.wantCycles)
			}
		})
	}
}

// TestChangeCauses: each notification names what moved the breaker.
func TestChangeCauses(t *testing.T) {
	clk := clock.NewFake(start())
	var causes []breaker.Cause
	b := breaker.New("p", breaker.Profile{FailureThreshold: 2, DegradationThreshold: 1, ResetTimeout: time.Second, MaxBackoffMultiplier: 1, SuccessesToClose: 1},
		clk, func(s breaker.Snapshot) { causes = append(causes, s.Cause) })
	pm, _ := b.Allow()
	pm.Failure() // DEGRADED
	b.RecordFailure()
	clk.Advance(time.Second)
	_ = b.State() // HALF_OPEN on a read
	pm, _ = b.Allow()
	pm.Success()
	b.RecordFailure()
	b.ConnectionTestPassed()
	b.RecordFailure()
	b.Reset()
	want := []breaker.Cause{breaker.CauseFailure, breaker.CauseFailure, breaker.CauseRecovery, breaker.CauseSuccess,
		breaker.CauseFailure, breaker.CauseTestPassed, breaker.CauseFailure, breaker.CauseReset}
	if !slices.Equal(causes, want) {
		t.Fatalf("causes %v, want %v", causes, want)
	}
}

// TestRestoreClampsFutureTimes: a snapshot written while the clock was a year
// ahead holds OPEN for one hold from now at most (not a year), and a DEGRADED
// decays one quiet window from now; past times load as they were.
func TestRestoreClampsFutureTimes(t *testing.T) {
	p := breaker.Profile{FailureThreshold: 3, ResetTimeout: 30 * time.Second, MaxBackoffMultiplier: 4}
	year := 365 * 24 * time.Hour
	for _, tc := range []struct {
		name     string
		snap     breaker.Snapshot
		holdLeft time.Duration // when the state must change, from the load
		want     breaker.State // the state until then
		after    breaker.State // the state from then on
	}{
		{"OPEN a year ahead, cycle 1", breaker.Snapshot{State: breaker.Open, OpenCycles: 1, OpenedAt: start().Add(year)},
			30 * time.Second, breaker.Open, breaker.HalfOpen},
		{"OPEN a year ahead, cycle 9 (capped hold)", breaker.Snapshot{State: breaker.Open, OpenCycles: 9, OpenedAt: start().Add(year)},
			4 * 30 * time.Second, breaker.Open, breaker.HalfOpen},
		{"OPEN 10 s in the past keeps its deadline", breaker.Snapshot{State: breaker.Open, OpenCycles: 1, OpenedAt: start().Add(-10 * time.Second)},
			20 * time.Second, breaker.Open, breaker.HalfOpen},
		{"DEGRADED a year ahead", breaker.Snapshot{State: breaker.Degraded, Failures: 1, LastFailureAt: start().Add(year)},
			4 * 30 * time.Second, breaker.Degraded, breaker.Closed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, clk := newBreaker(t, p)
			b.Restore(tc.snap)
			if st := b.Status(); st.State != tc.want || st.OpenedAt.After(clk.Now()) || st.LastFailureAt.After(clk.Now()) {
				t.Fatalf("after Restore: %+v, want %s with no time after now", st, tc.want)
			}
			if tc.want == breaker.Open {
				if left := b.Status().RetryAfter; left != tc.holdLeft {
					t.Fatalf("RetryAfter = %v, want %v", left, tc.holdLeft)
				}
			}
			clk.Advance(tc.holdLeft - time.Nanosecond)
			if got := b.State(); got != tc.want {
				t.Fatalf("1 ns before the clamped deadline: %s, want %s", got, tc.want)
			}
			clk.Advance(time.Nanosecond)
			if got := b.State(); got != tc.after {
				t.Fatalf("at the clamped deadline: %s, want %s", got, tc.after)
			}
		})
	}
}

// TestProbeIntervalCapsEveryHold (issue 40 B): with ProbeInterval 15 s an
// API-key breaker (30 s reset timeout, hold doubling up to ×8) lets its
// probe through exactly 15 s after opening and after each failed probe,
// whatever the cycle, and says so in RetryAfter; a probe that succeeds
// closes it. Without the interval the holds are the profile's own.
func TestProbeIntervalCapsEveryHold(t *testing.T) {
	p := breaker.DefaultProfile("apikey")
	p.MaxBackoffMultiplier, p.ProbeInterval = 8, breaker.DefaultProbeInterval
	b, clk := newBreaker(t, p)
	openBreaker(t, b)
	for cycle := 1; cycle <= 4; cycle++ {
		if s := b.Status(); s.State != breaker.Open || s.RetryAfter != 15*time.Second || s.OpenCycles != cycle {
			t.Fatalf("cycle %d: %s cycles %d, next probe in %v; want OPEN, 15s", cycle, s.State, s.OpenCycles, s.RetryAfter)
		}
		clk.Advance(15*time.Second - time.Millisecond)
		if _, ok := b.Allow(); ok {
			t.Fatalf("cycle %d: admitted 1 ms before the probe interval", cycle)
		}
		clk.Advance(time.Millisecond)
		probe, ok := b.Allow()
		if !ok || !probe.Probe() {
			t.Fatalf("cycle %d: no probe at the interval", cycle)
		}
		if cycle < 4 {
			probe.Failure()
			continue
		}
		probe.Success()
	}
	if s := b.Status(); s.State != breaker.Closed {
		t.Fatalf("after a good probe: %s", s.State)
	}
	p.ProbeInterval = 0
	u, _ := newBreaker(t, p)
	openBreaker(t, u)
	if s := u.Status(); s.RetryAfter != 30*time.Second {
		t.Fatalf("without the interval: hold %v, want 30s", s.RetryAfter)
	}
}
