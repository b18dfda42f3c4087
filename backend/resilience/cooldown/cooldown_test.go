package cooldown_test

import (
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"

	"omniroute/backend/resilience/cooldown"
	"omniroute/backend/resilience/verdict"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// start is the fixed instant tests begin at.
func start() time.Time { return time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC) }

// rateLimit is a plain 429 verdict, optionally with an upstream hint.
func rateLimit(hint time.Duration) verdict.Verdict {
	return verdict.Verdict{
		Kind: verdict.KindRateLimit, Scope: verdict.ScopeConnection, Status: 429,
		Code: "UPSTREAM_RATE_LIMITED", Message: "rate limited", Failover: true,
		CoolConnection: true, RetryAfter: hint,
	}
}

// concurrencyLimit is a 429 "too many concurrent requests" verdict.
func concurrencyLimit(hint time.Duration) verdict.Verdict {
	return verdict.Verdict{
		Kind: verdict.KindConcurrencyLimit, Scope: verdict.ScopeConnection, Status: 429,
		Code: "UPSTREAM_CONCURRENCY_LIMITED", Message: "busy", Failover: true,
		SkipProviderBreaker: true, CoolConnection: true, FixedCooldown: time.Second, RetryAfter: hint,
	}
}

// rejected is an upstream "Request not allowed" refusal.
func rejected() verdict.Verdict {
	return verdict.Verdict{Kind: verdict.KindRequestRejected, Status: 403, Code: "UPSTREAM_REQUEST_REJECTED", Message: "Request not allowed", Failover: true, CoolConnection: true}
}

// authFailed is a 401 verdict.
func authFailed() verdict.Verdict {
	return verdict.Verdict{Kind: verdict.KindAuth, Status: 401, Code: "UPSTREAM_AUTH", Message: "token expired", Failover: true, CoolConnection: true}
}

// banned is a ban verdict.
func banned() verdict.Verdict {
	return verdict.Verdict{Kind: verdict.KindBanned, Status: 403, Code: "ACCOUNT_BANNED", Message: "account suspended", Failover: true, Terminal: verdict.TerminalBanned}
}

// apply runs Apply with defaults for the given auth type and no options.
func apply(s cooldown.State, v verdict.Verdict, authType string, now time.Time) (cooldown.State, bool) {
	return cooldown.Apply(s, v, cooldown.DefaultSettings(authType), cooldown.Options{}, now)
}

func TestDefaultSettings(t *testing.T) {
	tests := []struct {
		authType string
		base     time.Duration
	}{
		{"oauth", 5 * time.Second},
		{"apikey", 3 * time.Second},
		{"none", 3 * time.Second},
		{"", 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.authType, func(t *testing.T) {
			want := cooldown.Settings{BaseCooldown: tt.base, UseUpstreamRetryHints: true, MaxBackoffSteps: 5, MaxHintCooldown: time.Hour,
				QuotaCooldown: cooldown.DefaultQuotaCooldown}
			got := cooldown.DefaultSettings(tt.authType)
			if got != want {
				t.Fatalf("got %+v, want %+v", got, want)
			}
			if got.Normalize() != got {
				t.Fatal("defaults are not normalized")
			}
		})
	}
}

func TestSettingsNormalize(t *testing.T) {
	tests := []struct {
		name string
		in   cooldown.Settings
		want cooldown.Settings
	}{
		{"zero", cooldown.Settings{}, cooldown.Settings{BaseCooldown: 100 * time.Millisecond, MaxBackoffSteps: 0, MaxHintCooldown: time.Second}},
		{"too large", cooldown.Settings{BaseCooldown: time.Hour, UseUpstreamRetryHints: true, MaxBackoffSteps: 99, MaxHintCooldown: 30 * 24 * time.Hour},
			cooldown.Settings{BaseCooldown: 10 * time.Minute, UseUpstreamRetryHints: true, MaxBackoffSteps: 15, MaxHintCooldown: 24 * time.Hour}},
		{"negative", cooldown.Settings{BaseCooldown: -time.Second, MaxBackoffSteps: -1, MaxHintCooldown: -time.Hour},
			cooldown.Settings{BaseCooldown: 100 * time.Millisecond, MaxBackoffSteps: 0, MaxHintCooldown: time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.in.Normalize(); got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestBackoffSequence: each failure after the previous cooldown expired climbs the
// ladder 3s,6s,12s,24s,48s,96s and then stays at the cap; it never decreases.
func TestBackoffSequence(t *testing.T) {
	tests := []struct {
		authType string
		want     []time.Duration
	}{
		{"apikey", []time.Duration{3, 6, 12, 24, 48, 96, 96, 96}},
		{"oauth", []time.Duration{5, 10, 20, 40, 80, 160, 160}},
	}
	for _, tt := range tests {
		t.Run(tt.authType, func(t *testing.T) {
			now := start()
			var s cooldown.State
			prev := time.Duration(0)
			for i, secs := range tt.want {
				want := secs * time.Second
				var changed bool
				s, changed = apply(s, rateLimit(0), tt.authType, now)
				if !changed {
					t.Fatalf("step %d: not changed", i)
				}
				got := s.RateLimitedUntil.Sub(now)
				if got != want {
					t.Fatalf("step %d: cooldown %v, want %v", i, got, want)
				}
				if got < prev {
					t.Fatalf("step %d: cooldown decreased %v → %v", i, prev, got)
				}
				if wantLevel := min(i+1, 5); s.BackoffLevel != wantLevel {
					t.Fatalf("step %d: level %d, want %d", i, s.BackoffLevel, wantLevel)
				}
				if s.TestStatus != cooldown.StatusUnavailable || s.LastErrorType != "rate_limit" ||
					s.ErrorCode != "UPSTREAM_RATE_LIMITED" || s.LastError != "rate limited" || !s.LastErrorAt.Equal(now) {
					t.Fatalf("step %d: error fields not recorded: %+v", i, s)
				}
				prev = got
				now = s.RateLimitedUntil // the next failure arrives once eligible again
			}
		})
	}
}

func TestBackoffStepsSetting(t *testing.T) {
	set := cooldown.DefaultSettings("apikey")
	set.MaxBackoffSteps = 2
	now := start()
	var s cooldown.State
	for i, want := range []time.Duration{3 * time.Second, 6 * time.Second, 12 * time.Second, 12 * time.Second} {
		s, _ = cooldown.Apply(s, rateLimit(0), set, cooldown.Options{}, now)
		if got := s.RateLimitedUntil.Sub(now); got != want {
			t.Fatalf("step %d: %v, want %v", i, got, want)
		}
		if s.BackoffLevel > 2 {
			t.Fatalf("step %d: level %d above MaxBackoffSteps", i, s.BackoffLevel)
		}
		now = s.RateLimitedUntil
	}
}

// TestHintCooldown: a hint-derived cooldown is at least the hint and at most
// MaxHintCooldown; it climbs the level.
func TestHintCooldown(t *testing.T) {
	tests := []struct {
		name      string
		hint      time.Duration
		useHints  bool
		level     int
		want      time.Duration
		wantLevel int
	}{
		{"short hint wins over ladder", 500 * time.Millisecond, true, 0, 500 * time.Millisecond, 1},
		{"hint used as is", 42 * time.Second, true, 2, 42 * time.Second, 3},
		{"hint at cap", time.Hour, true, 0, time.Hour, 1},
		{"hint one ms over cap", time.Hour + time.Millisecond, true, 0, time.Hour, 1},
		{"absurd 30 days capped", 30 * 24 * time.Hour, true, 0, time.Hour, 1},
		{"hints disabled use ladder", 42 * time.Second, false, 2, 12 * time.Second, 3},
		{"level capped at steps", 10 * time.Second, true, 5, 10 * time.Second, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := cooldown.DefaultSettings("apikey")
			set.UseUpstreamRetryHints = tt.useHints
			now := start()
			s, changed := cooldown.Apply(cooldown.State{BackoffLevel: tt.level}, rateLimit(tt.hint), set, cooldown.Options{}, now)
			if !changed {
				t.Fatal("not changed")
			}
			got := s.RateLimitedUntil.Sub(now)
			if got != tt.want || s.BackoffLevel != tt.wantLevel {
				t.Fatalf("cooldown %v level %d, want %v level %d", got, s.BackoffLevel, tt.want, tt.wantLevel)
			}
			if tt.useHints && (got < min(tt.hint, set.MaxHintCooldown) || got > set.MaxHintCooldown) {
				t.Fatalf("cooldown %v outside [hint %v, cap %v]", got, tt.hint, set.MaxHintCooldown)
			}
		})
	}
}

// TestConcurrencyLimitKeepsLevel: concurrency-limit 429s cool for 1s or the hint
// and never climb the ladder.
func TestConcurrencyLimitKeepsLevel(t *testing.T) {
	tests := []struct {
		name  string
		hint  time.Duration
		level int
		want  time.Duration
	}{
		{"fixed 1s at level 0", 0, 0, time.Second},
		{"fixed 1s keeps level 3", 0, 3, time.Second},
		{"shorter hint keeps 1s", 300 * time.Millisecond, 2, time.Second},
		{"longer hint wins", 5 * time.Second, 2, 5 * time.Second},
		{"absurd hint capped", 30 * 24 * time.Hour, 1, time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := start()
			s, _ := apply(cooldown.State{BackoffLevel: tt.level}, concurrencyLimit(tt.hint), "apikey", now)
			if got := s.RateLimitedUntil.Sub(now); got != tt.want {
				t.Fatalf("cooldown %v, want %v", got, tt.want)
			}
			if s.BackoffLevel != tt.level {
				t.Fatalf("level %d, want unchanged %d", s.BackoffLevel, tt.level)
			}
			if s.TestStatus != cooldown.StatusUnavailable || s.LastErrorType != "concurrency_limit" {
				t.Fatalf("fields not recorded: %+v", s)
			}
		})
	}
}

// TestAntiThunderingHerd: failures arriving while the connection is already
// cooling never raise the level again and only move the deadline later.
func TestAntiThunderingHerd(t *testing.T) {
	now := start()
	tests := []struct {
		name        string
		second      verdict.Verdict
		secondAt    time.Time
		wantUntil   time.Time
		wantChanged bool
	}{
		{"same instant, same 429", rateLimit(0), now, now.Add(3 * time.Second), false},
		{"same instant, concurrency limit", concurrencyLimit(0), now, now.Add(3 * time.Second), false},
		{"1s later recomputed at the same level", rateLimit(0), now.Add(time.Second), now.Add(4 * time.Second), true},
		{"longer upstream hint extends", rateLimit(20 * time.Second), now, now.Add(20 * time.Second), true},
		{"shorter upstream hint does not shorten", rateLimit(time.Second), now, now.Add(3 * time.Second), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first, _ := apply(cooldown.State{}, rateLimit(0), "apikey", now)
			if first.BackoffLevel != 1 || !first.RateLimitedUntil.Equal(now.Add(3*time.Second)) {
				t.Fatalf("first failure: %+v", first)
			}
			second, changed := apply(first, tt.second, "apikey", tt.secondAt)
			if second.BackoffLevel != 1 {
				t.Fatalf("herd raised the level to %d", second.BackoffLevel)
			}
			if !second.RateLimitedUntil.Equal(tt.wantUntil) {
				t.Fatalf("until %v, want %v", second.RateLimitedUntil.Sub(now), tt.wantUntil.Sub(now))
			}
			if changed != tt.wantChanged {
				t.Fatalf("changed = %v, want %v", changed, tt.wantChanged)
			}
		})
	}
}

func TestAntiThunderingHerdManyConcurrent(t *testing.T) {
	now := start()
	s := cooldown.State{BackoffLevel: 3}
	for i := 0; i < 10; i++ {
		s, _ = apply(s, rateLimit(0), "apikey", now)
	}
	if s.BackoffLevel != 4 || !s.RateLimitedUntil.Equal(now.Add(24*time.Second)) {
		t.Fatalf("10 concurrent failures: level %d until +%v, want level 4 until +24s", s.BackoffLevel, s.RateLimitedUntil.Sub(now))
	}
}

// TestEligibleExpiryBoundary: until−1ms cooling, until and until+1ms eligible.
func TestEligibleExpiryBoundary(t *testing.T) {
	until := start().Add(3 * time.Second)
	s := cooldown.State{RateLimitedUntil: until, TestStatus: cooldown.StatusUnavailable, BackoffLevel: 1}
	tests := []struct {
		name       string
		now        time.Time
		wantOK     bool
		wantReason string
		wantLeft   time.Duration
	}{
		{"until-1ms", until.Add(-time.Millisecond), false, cooldown.ReasonCooldown, time.Millisecond},
		{"until", until, true, "", 0},
		{"until+1ms", until.Add(time.Millisecond), true, "", 0},
		{"never cooled", start(), true, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := s
			if tt.name == "never cooled" {
				st = cooldown.State{}
			}
			ok, reason, left := cooldown.Eligible(st, tt.now)
			if ok != tt.wantOK || reason != tt.wantReason || left != tt.wantLeft {
				t.Fatalf("got (%v, %q, %v), want (%v, %q, %v)", ok, reason, left, tt.wantOK, tt.wantReason, tt.wantLeft)
			}
		})
	}
}

func TestTerminalVerdicts(t *testing.T) {
	now := start()
	cooling := cooldown.State{RateLimitedUntil: now.Add(time.Minute), TestStatus: cooldown.StatusUnavailable, BackoffLevel: 2}
	tests := []struct {
		name string
		v    verdict.Verdict
		want string
	}{
		{"banned", banned(), verdict.TerminalBanned},
		{"credits exhausted", verdict.Verdict{Kind: verdict.KindCreditsExhausted, Status: 402, Code: "CREDITS", Message: "no credits", Terminal: verdict.TerminalCreditsExhausted}, verdict.TerminalCreditsExhausted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, changed := apply(cooling, tt.v, "apikey", now)
			if !changed || s.Terminal != tt.want || s.TestStatus != tt.want || !s.RateLimitedUntil.IsZero() {
				t.Fatalf("got %+v changed=%v, want terminal %s with no cooldown", s, changed, tt.want)
			}
			if s.LastError != tt.v.Message || s.ErrorCode != tt.v.Code {
				t.Fatalf("terminal cause not recorded: %+v", s)
			}
			if ok, reason, _ := cooldown.Eligible(s, now.Add(time.Hour)); ok || reason != tt.want {
				t.Fatalf("Eligible = (%v, %q), want (false, %q)", ok, reason, tt.want)
			}
		})
	}
}

// TestTerminalNeverOverwritten: no later verdict, success or bulk clear touches a
// terminal state; only ClearTerminal does.
func TestTerminalNeverOverwritten(t *testing.T) {
	now := start()
	term, _ := apply(cooldown.State{}, banned(), "apikey", now)
	later := []struct {
		name string
		v    verdict.Verdict
	}{
		{"429", rateLimit(0)},
		{"429 with hint", rateLimit(time.Minute)},
		{"concurrency limit", concurrencyLimit(0)},
		{"auth", authFailed()},
		{"credits exhausted", verdict.Verdict{Kind: verdict.KindCreditsExhausted, Terminal: verdict.TerminalCreditsExhausted}},
		{"success verdict", verdict.Verdict{Kind: verdict.KindSuccess}},
	}
	for _, tt := range later {
		t.Run(tt.name, func(t *testing.T) {
			s, changed := apply(term, tt.v, "apikey", now.Add(time.Second))
			if changed || s != term {
				t.Fatalf("terminal state overwritten: %+v", s)
			}
		})
	}
	t.Run("Success", func(t *testing.T) {
		if s, changed := cooldown.Success(term); changed || s != term {
			t.Fatalf("Success cleared a terminal state: %+v", s)
		}
	})
	t.Run("terminal from test_status only", func(t *testing.T) {
		loaded := cooldown.State{TestStatus: verdict.TerminalExpired}
		if s, changed := apply(loaded, rateLimit(0), "apikey", now); changed || s != loaded {
			t.Fatalf("terminal test_status overwritten: %+v", s)
		}
		if ok, reason, _ := cooldown.Eligible(loaded, now); ok || reason != verdict.TerminalExpired {
			t.Fatalf("Eligible = (%v, %q)", ok, reason)
		}
	})
	t.Run("ClearTerminal", func(t *testing.T) {
		s := cooldown.ClearTerminal(term)
		if s != (cooldown.State{TestStatus: cooldown.StatusActive}) {
			t.Fatalf("ClearTerminal = %+v", s)
		}
		if ok, _, _ := cooldown.Eligible(s, now); !ok {
			t.Fatal("not eligible after ClearTerminal")
		}
	})
}

func TestClear(t *testing.T) {
	now := start()
	cooling, _ := apply(cooldown.State{RejectStreak: 1}, rateLimit(0), "apikey", now)
	cooling.RejectStreak = 2
	term, _ := apply(cooldown.State{}, banned(), "apikey", now)
	tests := []struct {
		name        string
		in          cooldown.State
		wantChanged bool
		check       func(t *testing.T, s cooldown.State)
	}{
		{"clears a cooldown", cooling, true, func(t *testing.T, s cooldown.State) {
			if !s.RateLimitedUntil.IsZero() || s.BackoffLevel != 0 || s.RejectStreak != 0 || s.TestStatus != cooldown.StatusActive {
				t.Fatalf("cooldown not cleared: %+v", s)
			}
			if s.LastError != "rate limited" {
				t.Fatalf("last error history dropped: %+v", s)
			}
		}},
		{"skips terminal", term, false, func(t *testing.T, s cooldown.State) {
			if s != term {
				t.Fatalf("terminal changed: %+v", s)
			}
		}},
		{"already active", cooldown.State{TestStatus: cooldown.StatusActive}, false, func(*testing.T, cooldown.State) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, changed := cooldown.Clear(tt.in)
			if changed != tt.wantChanged {
				t.Fatalf("changed = %v, want %v", changed, tt.wantChanged)
			}
			tt.check(t, s)
		})
	}
}

// TestRequestRejectedStreak: refusals 1 and 2 cool, the 3rd bans; refusals from the
// same concurrent herd count once; any other outcome resets the streak.
func TestRequestRejectedStreak(t *testing.T) {
	t.Run("1 and 2 cool, 3 bans", func(t *testing.T) {
		now := start()
		var s cooldown.State
		for i := 1; i <= 3; i++ {
			s, _ = apply(s, rejected(), "oauth", now)
			if s.RejectStreak != i {
				t.Fatalf("refusal %d: streak %d", i, s.RejectStreak)
			}
			if i < 3 {
				if s.Terminal != "" || !s.RateLimitedUntil.After(now) || s.TestStatus != cooldown.StatusUnavailable {
					t.Fatalf("refusal %d should only cool: %+v", i, s)
				}
				now = s.RateLimitedUntil
				continue
			}
			if s.Terminal != verdict.TerminalBanned || s.TestStatus != verdict.TerminalBanned || !s.RateLimitedUntil.IsZero() {
				t.Fatalf("refusal 3 should ban: %+v", s)
			}
		}
	})
	t.Run("concurrent refusals count once", func(t *testing.T) {
		now := start()
		var s cooldown.State
		for i := 0; i < 5; i++ {
			s, _ = apply(s, rejected(), "oauth", now)
		}
		if s.RejectStreak != 1 || s.Terminal != "" {
			t.Fatalf("5 concurrent refusals: %+v, want streak 1 and no ban", s)
		}
	})
	resets := []struct {
		name string
		v    verdict.Verdict
	}{
		{"success", verdict.Verdict{Kind: verdict.KindSuccess}},
		{"429", rateLimit(0)},
		{"server error", verdict.Verdict{Kind: verdict.KindServer, Status: 503, CountsForBreaker: true}},
		{"not found", verdict.Verdict{Kind: verdict.KindNotFound, Status: 404}},
	}
	for _, tt := range resets {
		t.Run("reset by "+tt.name, func(t *testing.T) {
			now := start()
			s := cooldown.State{RejectStreak: 2}
			s, changed := apply(s, tt.v, "oauth", now)
			if !changed || s.RejectStreak != 0 {
				t.Fatalf("streak not reset: %+v changed=%v", s, changed)
			}
			now = now.Add(time.Hour)
			s, _ = apply(s, rejected(), "oauth", now)
			if s.Terminal != "" || s.RejectStreak != 1 {
				t.Fatalf("after reset one refusal should only cool: %+v", s)
			}
		})
	}
	t.Run("client cancel does not reset", func(t *testing.T) {
		s := cooldown.State{RejectStreak: 2}
		if got, changed := apply(s, verdict.Verdict{Kind: verdict.KindClientCanceled}, "oauth", start()); changed || got.RejectStreak != 2 {
			t.Fatalf("client cancel changed the state: %+v", got)
		}
	})
}

// TestAuthExpiredAfterRetries: auth failures cool with exponential backoff and the
// ExpiredRetryMax-th becomes terminal "expired".
func TestAuthExpiredAfterRetries(t *testing.T) {
	now := start()
	var s cooldown.State
	wantCooldowns := []time.Duration{5 * time.Second, 10 * time.Second}
	for i := 1; i <= cooldown.ExpiredRetryMax; i++ {
		s, _ = apply(s, authFailed(), "oauth", now)
		if s.ExpiredRetries != i {
			t.Fatalf("auth failure %d: retries %d", i, s.ExpiredRetries)
		}
		if i < cooldown.ExpiredRetryMax {
			if s.Terminal != "" || s.RateLimitedUntil.Sub(now) != wantCooldowns[i-1] {
				t.Fatalf("auth failure %d: %+v, want a %v cooldown", i, s, wantCooldowns[i-1])
			}
			now = s.RateLimitedUntil
			continue
		}
		if s.Terminal != verdict.TerminalExpired || s.TestStatus != verdict.TerminalExpired || !s.RateLimitedUntil.IsZero() {
			t.Fatalf("auth failure %d should expire: %+v", i, s)
		}
	}
	t.Run("success resets retries", func(t *testing.T) {
		s, _ := apply(cooldown.State{}, authFailed(), "oauth", start())
		s, _ = apply(s, authFailed(), "oauth", s.RateLimitedUntil)
		s, _ = cooldown.Success(s)
		s, _ = apply(s, authFailed(), "oauth", start().Add(time.Hour))
		if s.ExpiredRetries != 1 || s.Terminal != "" {
			t.Fatalf("after success: %+v, want retries 1", s)
		}
	})
	t.Run("concurrent auth failures count once", func(t *testing.T) {
		var s cooldown.State
		for i := 0; i < 4; i++ {
			s, _ = apply(s, authFailed(), "oauth", start())
		}
		if s.ExpiredRetries != 1 || s.Terminal != "" {
			t.Fatalf("4 concurrent auth failures: %+v", s)
		}
	})
}

func TestStall(t *testing.T) {
	stall := verdict.Verdict{Kind: verdict.KindStall, Code: "STREAM_STALLED", Message: "no content for 90s", Failover: true}
	tests := []struct {
		name       string
		opt        cooldown.Options
		wantCooled bool
	}{
		{"default records only", cooldown.Options{}, false},
		{"StallCooldown cools", cooldown.Options{StallCooldown: true}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := start()
			s, changed := cooldown.Apply(cooldown.State{TestStatus: cooldown.StatusActive}, stall, cooldown.DefaultSettings("oauth"), tt.opt, now)
			if !changed || s.LastError != stall.Message || s.LastErrorType != "stall" || s.ErrorCode != "STREAM_STALLED" || !s.LastErrorAt.Equal(now) {
				t.Fatalf("stall not recorded: %+v", s)
			}
			ok, _, _ := cooldown.Eligible(s, now)
			if cooled := !ok; cooled != tt.wantCooled {
				t.Fatalf("cooled = %v, want %v (%+v)", cooled, tt.wantCooled, s)
			}
			if tt.wantCooled {
				if s.RateLimitedUntil.Sub(now) != 5*time.Second || s.BackoffLevel != 1 || s.TestStatus != cooldown.StatusUnavailable {
					t.Fatalf("stall cooldown: %+v", s)
				}
			} else if s.BackoffLevel != 0 || s.TestStatus != cooldown.StatusActive {
				t.Fatalf("stall without cooldown touched the ladder: %+v", s)
			}
		})
	}
}

func TestNonCoolingVerdictsRecordNothing(t *testing.T) {
	now := start()
	base := cooldown.State{TestStatus: cooldown.StatusActive, LastError: "old", BackoffLevel: 2}
	tests := []verdict.Verdict{
		{Kind: verdict.KindServer, Status: 500, CountsForBreaker: true, Failover: true},
		{Kind: verdict.KindServer, Status: 503, CountsForBreaker: true, Failover: true},
		{Kind: verdict.KindNotFound, Status: 404, Scope: verdict.ScopeModel, Failover: true},
		{Kind: verdict.KindBadRequest, Status: 400},
		{Kind: verdict.KindTransport, CountsForBreaker: true, Failover: true},
		{Kind: verdict.KindClientCanceled},
		{Kind: verdict.KindQuota, Status: 429, Scope: verdict.ScopeQuotaFamily}, // model lockout's business
	}
	for i, v := range tests {
		t.Run(strconv.Itoa(i)+"/"+string(v.Kind), func(t *testing.T) {
			s, changed := apply(base, v, "apikey", now)
			if changed || s != base {
				t.Fatalf("%s changed the connection: %+v", v.Kind, s)
			}
		})
	}
}

func TestSuccess(t *testing.T) {
	now := start()
	cooling, _ := apply(cooldown.State{}, rateLimit(0), "apikey", now)
	tests := []struct {
		name        string
		in          cooldown.State
		wantChanged bool
	}{
		{"clean active is a no-op", cooldown.State{TestStatus: cooldown.StatusActive}, false},
		{"never tested becomes active", cooldown.State{}, true},
		{"cooling connection is cleared", cooling, true},
		{"expired cooldown still clears fields", cooldown.State{TestStatus: cooldown.StatusUnavailable, RateLimitedUntil: now.Add(-time.Hour), BackoffLevel: 3}, true},
		{"only a streak", cooldown.State{TestStatus: cooldown.StatusActive, ExpiredRetries: 1}, true},
		{"only an error message", cooldown.State{TestStatus: cooldown.StatusActive, LastError: "x"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, changed := cooldown.Success(tt.in)
			if changed != tt.wantChanged {
				t.Fatalf("changed = %v, want %v", changed, tt.wantChanged)
			}
			if s != (cooldown.State{TestStatus: cooldown.StatusActive}) {
				t.Fatalf("not clean: %+v", s)
			}
			if _, again := cooldown.Success(s); again {
				t.Fatal("second Success reported a change")
			}
		})
	}
}

func TestApplyNormalizesSettings(t *testing.T) {
	now := start()
	s, _ := cooldown.Apply(cooldown.State{}, rateLimit(30*24*time.Hour), cooldown.Settings{UseUpstreamRetryHints: true}, cooldown.Options{}, now)
	if got := s.RateLimitedUntil.Sub(now); got != time.Second {
		t.Fatalf("zero-value settings: hint cooldown %v, want the 1s minimum cap", got)
	}
}

// TestFailureStreak: N consecutive recoverable failures across the
// connection's models cool it with the ladder; N−1 do not; a herd of
// failures during the cooldown counts once; success resets the streak.
func TestFailureStreak(t *testing.T) {
	now := start()
	opt := cooldown.Options{FailureStreak: 3}
	set := cooldown.DefaultSettings("apikey")
	kinds := []verdict.Verdict{
		{Kind: verdict.KindServer, Status: 503, CountsForBreaker: true, Failover: true, Code: "UPSTREAM_SERVER_ERROR"},
		{Kind: verdict.KindTransport, CountsForBreaker: true, Failover: true, Code: "UPSTREAM_TRANSPORT_ERROR"},
		{Kind: verdict.KindTimeout, CountsForBreaker: true, Failover: true, Code: "UPSTREAM_TIMEOUT"},
	}
	s := cooldown.State{TestStatus: cooldown.StatusActive}
	for i := 0; i < 2; i++ { // threshold − 1
		s, _ = cooldown.Apply(s, kinds[i], set, opt, now)
		if ok, _, _ := cooldown.Eligible(s, now); !ok {
			t.Fatalf("failure %d of 3 cooled the connection: %+v", i+1, s)
		}
	}
	if s.FailStreak != 2 {
		t.Fatalf("streak %d after two failures, want 2", s.FailStreak)
	}
	s, _ = cooldown.Apply(s, kinds[2], set, opt, now) // threshold
	ok, reason, remaining := cooldown.Eligible(s, now)
	if ok || reason != cooldown.ReasonCooldown || remaining != 3*time.Second || s.BackoffLevel != 1 || s.FailStreak != 0 {
		t.Fatalf("third failure: ok=%v reason=%q remaining=%v state=%+v, want a 3 s ladder cooldown", ok, reason, remaining, s)
	}
	// A herd failing during the cooldown does not count.
	herd, _ := cooldown.Apply(s, kinds[0], set, opt, now.Add(time.Second))
	if herd.FailStreak != 0 || herd.BackoffLevel != 1 {
		t.Fatalf("a failure while cooling counted: %+v", herd)
	}
	// Expiry −1 ms still cooling, +0 eligible.
	if ok, _, _ := cooldown.Eligible(s, now.Add(3*time.Second-time.Millisecond)); ok {
		t.Fatal("eligible 1 ms before the cooldown ends")
	}
	if ok, _, _ := cooldown.Eligible(s, now.Add(3*time.Second)); !ok {
		t.Fatal("not eligible when the cooldown ends")
	}
	// A success between failures restarts the count.
	s2 := cooldown.State{TestStatus: cooldown.StatusActive}
	s2, _ = cooldown.Apply(s2, kinds[0], set, opt, now)
	s2, _ = cooldown.Apply(s2, kinds[0], set, opt, now)
	s2, _ = cooldown.Success(s2)
	s2, _ = cooldown.Apply(s2, kinds[0], set, opt, now)
	if ok, _, _ := cooldown.Eligible(s2, now); !ok || s2.FailStreak != 1 {
		t.Fatalf("streak survived a success: %+v", s2)
	}
	// Off: no streak at all.
	s3, _ := cooldown.Apply(cooldown.State{}, kinds[0], set, cooldown.Options{}, now)
	if s3.FailStreak != 0 {
		t.Fatalf("streak counted with FailureStreak 0: %+v", s3)
	}
}

// TestQuotaCooldownHonoursTheReset: an exhausted quota cools until the
// announced reset (beyond MaxHintCooldown, up to 24 h) or for the long default.
func TestQuotaCooldownHonoursTheReset(t *testing.T) {
	now := start()
	set := cooldown.DefaultSettings("apikey")
	q := func(hint time.Duration) verdict.Verdict {
		return verdict.Verdict{Kind: verdict.KindQuota, Scope: verdict.ScopeQuotaFamily, Status: 429, Failover: true,
			CoolConnection: true, SkipProviderBreaker: true, RetryAfter: hint, Code: "UPSTREAM_QUOTA_EXHAUSTED"}
	}
	tests := []struct {
		name string
		hint time.Duration
		set  cooldown.Settings
		want time.Duration
	}{
		{"announced reset in 5h", 5 * time.Hour, set, 5 * time.Hour},
		{"announced reset capped at 24h", 30 * time.Hour, set, 24 * time.Hour},
		{"no reset: long default", 0, set, cooldown.DefaultQuotaCooldown},
		{"no reset: setting", 0, func() cooldown.Settings { s := set; s.QuotaCooldown = 10 * time.Minute; return s }(), 10 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := cooldown.Apply(cooldown.State{}, q(tt.hint), tt.set, cooldown.Options{}, now)
			if got := s.RateLimitedUntil.Sub(now); got != tt.want {
				t.Fatalf("cooldown %v, want %v", got, tt.want)
			}
		})
	}
}

// TestRestatedQuotaTakesTheLadder (guide §7, issue 33 item 1): a quota the
// upstream reported as 403 and a restatement corrected is a short window by
// declaration: the connection climbs the ordinary ladder (3 s, 6 s, 12 s for
// an API key), or waits the upstream's own hint, never the 1 h quota cooldown.
func TestRestatedQuotaTakesTheLadder(t *testing.T) {
	now := start()
	set := cooldown.DefaultSettings("apikey")
	v := verdict.Verdict{Kind: verdict.KindQuota, Scope: verdict.ScopeConnection, Status: 429, RestatedFrom: 403, Failover: true,
		CoolConnection: true, SkipProviderBreaker: true, Code: verdict.CodeQuotaRestated, ClientRetryAfter: time.Minute}
	var s cooldown.State
	for i, want := range []time.Duration{3 * time.Second, 6 * time.Second, 12 * time.Second} {
		s, _ = cooldown.Apply(s, v, set, cooldown.Options{}, now)
		if got := s.RateLimitedUntil.Sub(now); got != want {
			t.Fatalf("restatement %d: cooldown %v, want %v", i+1, got, want)
		}
		now = s.RateLimitedUntil
	}
	v.RetryAfter = 20 * time.Second
	s, _ = cooldown.Apply(cooldown.State{}, v, set, cooldown.Options{}, now)
	if got := s.RateLimitedUntil.Sub(now); got != 20*time.Second {
		t.Fatalf("with the upstream's hint: cooldown %v, want 20s", got)
	}
}

// TestApplyStored: the rule the database applies to a shared row. Whether the
// stored row is cooling at the failure's instant decides (until now+1ms: a
// herd, nothing moves; until now or now−1ms: the ladder climbs one rung); a
// herd never moves the deadline, longer evidence does, and terminal verdicts
// and successes pass as in Apply.
func TestApplyStored(t *testing.T) {
	t0 := start()
	cooled := func(until time.Time) cooldown.State { // set by a 429 at t0 at level 0
		return cooldown.State{RateLimitedUntil: until, TestStatus: cooldown.StatusUnavailable, BackoffLevel: 1,
			LastError: "rate limited", LastErrorType: string(verdict.KindRateLimit), ErrorCode: "UPSTREAM_RATE_LIMITED", LastErrorAt: t0}
	}
	tests := []struct {
		name        string
		stored      cooldown.State
		v           verdict.Verdict
		at          time.Time
		wantLevel   int
		wantUntil   time.Time
		wantChanged bool
		wantStatus  string
	}{
		{"clean row: first failure cools at level 0", cooldown.State{}, rateLimit(0), t0, 1, t0.Add(3 * time.Second), true, cooldown.StatusUnavailable},
		{"cooling until now+1ms: herd, nothing moves", cooled(t0.Add(3 * time.Second)), rateLimit(0), t0.Add(3*time.Second - time.Millisecond), 1, t0.Add(3 * time.Second), false, cooldown.StatusUnavailable},
		{"cooling 1s later: herd, deadline kept (Apply would move it)", cooled(t0.Add(3 * time.Second)), rateLimit(0), t0.Add(time.Second), 1, t0.Add(3 * time.Second), false, cooldown.StatusUnavailable},
		{"until == now: expired, climbs to level 2", cooled(t0.Add(3 * time.Second)), rateLimit(0), t0.Add(3 * time.Second), 2, t0.Add(9 * time.Second), true, cooldown.StatusUnavailable},
		{"until now-1ms: expired, climbs to level 2", cooled(t0.Add(3 * time.Second)), rateLimit(0), t0.Add(3*time.Second + time.Millisecond), 2, t0.Add(9*time.Second + time.Millisecond), true, cooldown.StatusUnavailable},
		{"cooling, longer hint extends", cooled(t0.Add(3 * time.Second)), rateLimit(20 * time.Second), t0.Add(time.Second), 1, t0.Add(21 * time.Second), true, cooldown.StatusUnavailable},
		{"cooling, hint as long as the running cooldown: kept", cooled(t0.Add(3 * time.Second)), rateLimit(3 * time.Second), t0.Add(time.Second), 1, t0.Add(3 * time.Second), false, cooldown.StatusUnavailable},
		{"cooling, concurrency limit: kept", cooled(t0.Add(3 * time.Second)), concurrencyLimit(0), t0.Add(time.Second), 1, t0.Add(3 * time.Second), false, cooldown.StatusUnavailable},
		{"cooling, ban still terminal", cooled(t0.Add(3 * time.Second)), banned(), t0.Add(time.Second), 1, time.Time{}, true, verdict.TerminalBanned},
		{"cooling, success clears", cooled(t0.Add(3 * time.Second)), verdict.Verdict{Kind: verdict.KindSuccess, Status: 200}, t0.Add(time.Second), 0, time.Time{}, true, cooldown.StatusActive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed := cooldown.ApplyStored(tt.stored, tt.v, cooldown.DefaultSettings("apikey"), cooldown.Options{}, tt.at)
			if got.BackoffLevel != tt.wantLevel || !got.RateLimitedUntil.Equal(tt.wantUntil) || changed != tt.wantChanged || got.TestStatus != tt.wantStatus {
				t.Fatalf("got level %d until %v changed %v status %q; want %d, %v, %v, %q", got.BackoffLevel, got.RateLimitedUntil.Sub(t0),
					changed, got.TestStatus, tt.wantLevel, tt.wantUntil.Sub(t0), tt.wantChanged, tt.wantStatus)
			}
		})
	}
}

// TestApplyStoredHerdOfMany: many failures folded into one stored row in any
// order around the same instant raise the level once and set one deadline.
func TestApplyStoredHerdOfMany(t *testing.T) {
	t0 := start()
	s := cooldown.State{BackoffLevel: 3}
	for i := range 20 {
		s, _ = cooldown.ApplyStored(s, rateLimit(0), cooldown.DefaultSettings("apikey"), cooldown.Options{}, t0.Add(time.Duration(i)*time.Millisecond))
	}
	if s.BackoffLevel != 4 || !s.RateLimitedUntil.Equal(t0.Add(24*time.Second)) {
		t.Fatalf("20 failures over 19 ms: level %d until +%v, want level 4 until +24s (the first failure's)", s.BackoffLevel, s.RateLimitedUntil.Sub(t0))
	}
}

// TestMaxCooldown: the longest cooldown settings can set is the largest of an
// announced quota reset (24 h), the quota cooldown, the hint cap and the top
// of the ladder.
func TestMaxCooldown(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  cooldown.Settings
		want time.Duration
	}{
		{"defaults", cooldown.DefaultSettings("apikey"), cooldown.MaxQuotaCooldown},
		{"oauth defaults", cooldown.DefaultSettings("oauth"), cooldown.MaxQuotaCooldown},
		{"a ladder past 24 h", cooldown.Settings{BaseCooldown: 10 * time.Minute, MaxBackoffSteps: 15, MaxHintCooldown: time.Hour},
			10 * time.Minute << 15},
		{"a base past its 10 min cap (normalised)", cooldown.Settings{BaseCooldown: 24*time.Hour + time.Millisecond, MaxBackoffSteps: 0},
			cooldown.MaxQuotaCooldown},
		{"zero settings", cooldown.Settings{}, cooldown.MaxQuotaCooldown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.set.MaxCooldown(); got != tc.want {
				t.Fatalf("MaxCooldown = %v, want %v", got, tc.want)
			}
		})
	}
}
