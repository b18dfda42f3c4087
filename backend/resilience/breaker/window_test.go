package breaker_test

import (
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/resilience/breaker"
)

// newGate returns a window gate on a fake clock where every provider uses p.
func newGate(p breaker.WindowProfile) (*breaker.WindowGate, *clock.Fake) {
	clk := clock.NewFake(start())
	return breaker.NewWindowGate(clk, func(string) breaker.WindowProfile { return p }), clk
}

func TestDefaultWindowProfile(t *testing.T) {
	tests := []struct {
		category string
		want     breaker.WindowProfile
	}{
		{"oauth", breaker.WindowProfile{FailureThreshold: 10, Window: 15 * time.Minute, Cooldown: 5 * time.Minute}},
		{"apikey", breaker.WindowProfile{FailureThreshold: 15, Window: 30 * time.Minute, Cooldown: 10 * time.Minute}},
		{"local", breaker.WindowProfile{FailureThreshold: 2, Window: 5 * time.Minute, Cooldown: time.Minute}},
		{"other", breaker.WindowProfile{FailureThreshold: 15, Window: 30 * time.Minute, Cooldown: 10 * time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.category, func(t *testing.T) {
			if got := breaker.DefaultWindowProfile(tt.category); got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestWindowGateThreshold: threshold−1 failures within the window do not cool;
// the threshold-th does, for Cooldown.
func TestWindowGateThreshold(t *testing.T) {
	for _, category := range []string{"oauth", "apikey", "local"} {
		t.Run(category, func(t *testing.T) {
			p := breaker.DefaultWindowProfile(category)
			g, clk := newGate(p)
			step := (p.Window - time.Millisecond) / time.Duration(p.FailureThreshold)
			for i := 1; i < p.FailureThreshold; i++ {
				g.RecordFailure("prov")
				if cooling, _ := g.CoolingDown("prov"); cooling {
					t.Fatalf("cooling after %d of %d failures", i, p.FailureThreshold)
				}
				clk.Advance(step)
			}
			g.RecordFailure("prov")
			cooling, left := g.CoolingDown("prov")
			if !cooling || left != p.Cooldown {
				t.Fatalf("at threshold: cooling=%v left=%v, want true %v", cooling, left, p.Cooldown)
			}
			if other, _ := g.CoolingDown("other"); other {
				t.Fatal("another provider is cooling")
			}
		})
	}
}

// TestWindowGateWindowEdge: a failure exactly Window old no longer counts; one
// Window−1ms old still does.
func TestWindowGateWindowEdge(t *testing.T) {
	p := breaker.WindowProfile{FailureThreshold: 3, Window: 10 * time.Minute, Cooldown: time.Minute}
	tests := []struct {
		name    string
		gap     time.Duration // between the first failure and the last two
		cooling bool
	}{
		{"inside by 1ms", p.Window - time.Millisecond, true},
		{"exactly window", p.Window, false},
		{"outside by 1ms", p.Window + time.Millisecond, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, clk := newGate(p)
			g.RecordFailure("prov")
			clk.Advance(tt.gap)
			g.RecordFailure("prov")
			g.RecordFailure("prov")
			if cooling, _ := g.CoolingDown("prov"); cooling != tt.cooling {
				t.Fatalf("cooling = %v, want %v", cooling, tt.cooling)
			}
		})
	}
}

// TestWindowGateCooldownExpiry: the cooldown ends exactly at its deadline.
func TestWindowGateCooldownExpiry(t *testing.T) {
	p := breaker.DefaultWindowProfile("local")
	tests := []struct {
		name    string
		advance time.Duration
		cooling bool
		left    time.Duration
	}{
		{"cooldown-1ms", p.Cooldown - time.Millisecond, true, time.Millisecond},
		{"cooldown", p.Cooldown, false, 0},
		{"cooldown+1ms", p.Cooldown + time.Millisecond, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, clk := newGate(p)
			for i := 0; i < p.FailureThreshold; i++ {
				g.RecordFailure("ollama")
			}
			clk.Advance(tt.advance)
			cooling, left := g.CoolingDown("ollama")
			if cooling != tt.cooling || left != tt.left {
				t.Fatalf("got (%v, %v), want (%v, %v)", cooling, left, tt.cooling, tt.left)
			}
		})
	}
}

func TestWindowGateAfterCooldownNeedsFullThreshold(t *testing.T) {
	p := breaker.DefaultWindowProfile("local")
	g, clk := newGate(p)
	g.RecordFailure("ollama")
	g.RecordFailure("ollama")
	g.RecordFailure("ollama") // while cooling: ignored, does not extend
	clk.Advance(p.Cooldown)
	g.RecordFailure("ollama")
	if cooling, _ := g.CoolingDown("ollama"); cooling {
		t.Fatal("one failure after the cooldown re-triggered it")
	}
	g.RecordFailure("ollama")
	if cooling, left := g.CoolingDown("ollama"); !cooling || left != p.Cooldown {
		t.Fatalf("got (%v, %v), want a fresh cooldown", cooling, left)
	}
}

func TestWindowGateSuccessClears(t *testing.T) {
	p := breaker.DefaultWindowProfile("oauth")
	tests := []struct {
		name     string
		failures int
	}{
		{"clears the window", p.FailureThreshold - 1},
		{"ends a cooldown", p.FailureThreshold},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, _ := newGate(p)
			for i := 0; i < tt.failures; i++ {
				g.RecordFailure("prov")
			}
			g.RecordSuccess("prov")
			g.RecordFailure("prov")
			if cooling, _ := g.CoolingDown("prov"); cooling {
				t.Fatal("cooling after a success and one failure")
			}
		})
	}
}

func TestWindowGateResetAll(t *testing.T) {
	g, _ := newGate(breaker.DefaultWindowProfile("local"))
	g.RecordFailure("a")
	g.RecordFailure("a")
	g.RecordFailure("b")
	if n := g.ResetAll(); n != 1 {
		t.Fatalf("ResetAll = %d, want 1", n)
	}
	g.RecordFailure("b")
	if cooling, _ := g.CoolingDown("a"); cooling {
		t.Fatal("a still cooling after ResetAll")
	}
	if cooling, _ := g.CoolingDown("b"); cooling {
		t.Fatal("b's pre-reset failure still counted")
	}
}

// Reset clears one provider (cooling: true; only counting or unknown:
// false) and leaves the others alone.
func TestWindowGateReset(t *testing.T) {
	g, _ := newGate(breaker.DefaultWindowProfile("local")) // 2 failures cool
	g.RecordFailure("a")
	g.RecordFailure("a")
	g.RecordFailure("b")
	g.RecordFailure("c")
	g.RecordFailure("c")
	if !g.Reset("a") {
		t.Fatal("Reset(a) = false, want true (it was cooling)")
	}
	if g.Reset("b") || g.Reset("nobody") {
		t.Fatal("Reset of a provider not cooling reported true")
	}
	if cooling, _ := g.CoolingDown("a"); cooling {
		t.Fatal("a still cooling after Reset")
	}
	g.RecordFailure("b")
	if cooling, _ := g.CoolingDown("b"); cooling {
		t.Fatal("b's failure before its Reset still counted")
	}
	if cooling, _ := g.CoolingDown("c"); !cooling {
		t.Fatal("c was reset with a")
	}
}

func TestWindowProfilesFromEnv(t *testing.T) {
	env := map[string]string{
		"OMNIROUTE_PROVIDER_BREAKER_OAUTH_FAILURE_THRESHOLD":   "3",
		"OMNIROUTE_PROVIDER_BREAKER_OAUTH_FAILURE_WINDOW_MS":   "60000",
		"OMNIROUTE_PROVIDER_BREAKER_OAUTH_COOLDOWN_MS":         "30000",
		"OMNIROUTE_PROVIDER_BREAKER_API_KEY_FAILURE_THRESHOLD": "zero",
		"OMNIROUTE_PROVIDER_BREAKER_API_KEY_COOLDOWN_MS":       "-5",
		"OMNIROUTE_PROVIDER_BREAKER_LOCAL_FAILURE_WINDOW_MS":   "1",
	}
	got := breaker.WindowProfilesFromEnv(func(k string) string { return env[k] })
	want := map[string]breaker.WindowProfile{
		"oauth":  {FailureThreshold: 3, Window: time.Minute, Cooldown: 30 * time.Second},
		"apikey": breaker.DefaultWindowProfile("apikey"),
		"local":  {FailureThreshold: 2, Window: time.Second, Cooldown: time.Minute},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d profiles, want %d", len(got), len(want))
	}
	for k, w := range want {
		if got[k] != w {
			t.Fatalf("%s = %+v, want %+v", k, got[k], w)
		}
	}
}
