package tray

import (
	"strings"
	"testing"
	"time"

	"omniroute/backend/health"
	"omniroute/backend/resilience/breaker"
	"omniroute/backend/resilience/cooldown"
	"omniroute/backend/resilience/lockout"
)

func TestIconPerHealth(t *testing.T) {
	tests := map[Health]string{Setup: "tray-setup.png", Healthy: "tray-healthy.png", Degraded: "tray-degraded.png", Unhealthy: "tray-unhealthy.png", Paused: "tray-paused.png", "": "tray-unhealthy.png", "weird": "tray-unhealthy.png"}
	for h, want := range tests {
		if got := Icon(h); got != want {
			t.Errorf("Icon(%q) = %q, want %q", h, got, want)
		}
	}
}

var at = time.Date(2026, 12, 3, 13, 0, 0, 0, time.UTC)

// report runs the real health model over five connections, as the issue's
// scenario: a cooldown on Work, an OPEN breaker on the lab endpoint, model locks
// and a lease.
func report(conns []health.Conn, breakers []breaker.Snapshot, locks []lockout.Entry, leases []health.Lease) health.Report {
	return health.Compute(health.Input{Now: at, Connections: conns, Breakers: breakers, Lockouts: locks, Leases: leases})
}

func c(id, name, provider string, models ...string) health.Conn {
	return health.Conn{ID: id, Name: name, Provider: provider, ProviderID: provider, Active: true, Models: models}
}

func TestStatusLineAndTooltipPerHealth(t *testing.T) {
	work := c("w", "Work", "openai", "gpt-4o")
	work.Cooldown = cooldown.State{RateLimitedUntil: at.Add(13*time.Minute + 20*time.Second), LastErrorType: "rate_limit"}
	lab := c("l", "Lab", "openai-compatible:lab", "m1")
	five := []health.Conn{work, lab, c("a", "A", "openai", "gpt-4o"), c("b", "B", "anthropic", "claude"), c("d", "D", "glm", "glm-4.6")}
	open := []breaker.Snapshot{{Provider: "openai-compatible:lab", State: breaker.Open, RetryAfter: 50 * time.Minute}}
	locks := []lockout.Entry{{Provider: "anthropic", ConnectionID: "b", Model: "claude", Scope: lockout.ScopeModel, ExpiresAt: at.Add(20 * time.Minute)}}
	allCooling := []health.Conn{work}

	tests := []struct {
		name           string
		s              Status
		icon           string
		line, tipStart string
	}{
		{"no connections: set up, grey", FromReport(report(nil, nil, nil, nil), false), "tray-setup.png",
			"Set up: add a provider connection", "OmniRoute — set up needed"},
		{"all serving", FromReport(report(five[2:3], nil, nil, nil), false), "tray-healthy.png",
			"1 connection serving", "OmniRoute — healthy"},
		{"issue scenario: 2 of 5 serving, Work back in 14 min", FromReport(report(five, open, locks, nil), false), "tray-degraded.png",
			"2 of 5 connections serving · Work back in 14 min", "OmniRoute — degraded"},
		{"nothing serves", FromReport(report(allCooling, nil, nil, nil), false), "tray-unhealthy.png",
			"0 of 1 connections serving · Work back in 14 min", "OmniRoute — unhealthy"},
		{"only a partial lock", FromReport(report([]health.Conn{c("b", "B", "anthropic", "claude", "haiku")}, nil, locks, nil), false), "tray-degraded.png",
			"1 connection serving · 1 model lock", "OmniRoute — degraded"},
		{"paused", FromReport(report(five[2:3], nil, nil, nil), true), "tray-paused.png",
			"Paused — clients get 503 until you resume", "OmniRoute — paused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Icon(tt.s.Health); got != tt.icon {
				t.Errorf("icon %s, want %s", got, tt.icon)
			}
			if got := StatusLine(tt.s); got != tt.line {
				t.Errorf("status line %q, want %q", got, tt.line)
			}
			tip := Tooltip(tt.s)
			if !strings.HasPrefix(tip, tt.tipStart) || !strings.HasSuffix(tip, tt.line) {
				t.Errorf("tooltip %q, want %q… ending with the status line", tip, tt.tipStart)
			}
			if m := Menu(tt.s, nil, false); m[0].Title != tt.line || !m[0].Disabled || m[0].Action != ActNone {
				t.Errorf("menu status line %+v", m[0])
			}
		})
	}
}

func TestStatusCounts(t *testing.T) {
	banned := c("x", "X", "openai")
	banned.Cooldown = cooldown.State{Terminal: "banned"}
	s := FromReport(report([]health.Conn{banned, c("l", "Lab", "lab")}, []breaker.Snapshot{{Provider: "lab", State: breaker.Open, RetryAfter: time.Second}}, nil, nil), false)
	if s.Terminal != 1 || s.OpenBreakers != 1 || s.Serving != 0 || s.Health != Unhealthy || s.NextName != "Lab" {
		t.Fatalf("%+v", s)
	}
}

func TestMenu(t *testing.T) {
	agents := []Agent{{"claude-code", "Claude Code"}, {"codex", "Codex CLI"}}
	m := Menu(Status{Health: Healthy}, agents, true)
	var titles []string
	for _, it := range m {
		if !it.Hidden {
			titles = append(titles, it.Title)
		}
	}
	want := "Set up: add a provider connection|Open Dashboard|Copy Endpoint URL|Copy API Key|Configure Agent|Reset Circuit Breakers|Clear All Cooldowns|Pause Gateway|Start at Login|Quit OmniRoute"
	if got := strings.Join(titles, "|"); got != want {
		t.Fatalf("menu %s", got)
	}
	if agentsMenu := item(m, ""); len(agentsMenu.Children) != 2 || agentsMenu.Children[1].Action != ActConfigureAgent || agentsMenu.Children[1].Arg != "codex" {
		t.Fatalf("agents submenu %+v", agentsMenu.Children)
	}
	if login := item(m, ActStartAtLogin); !login.Checkbox || !login.Checked {
		t.Fatal("start at login not checked")
	}
	paused := Menu(Status{Paused: true}, agents, false)
	if resume := item(paused, ActResume); resume.Title != "Resume Gateway" || item(paused, ActStartAtLogin).Checked {
		t.Fatalf("paused menu %+v", resume)
	}
}

// TestMenuAnnouncesANewerRelease: the update line is built hidden and shown,
// with the version in the tooltip too, only once the check found a release.
func TestMenuAnnouncesANewerRelease(t *testing.T) {
	for _, tt := range []struct {
		update string
		hidden bool
	}{{"", true}, {"0.3.0", false}} {
		s := Status{Health: Healthy, Connections: 1, Serving: 1, Update: tt.update}
		it := item(Menu(s, nil, false), ActOpenRelease)
		if it.Hidden != tt.hidden {
			t.Errorf("update %q: hidden %v", tt.update, it.Hidden)
		}
		tip := Tooltip(s)
		if got := strings.Contains(tip, "is available"); got == tt.hidden {
			t.Errorf("update %q: tooltip %q", tt.update, tip)
		}
		if !tt.hidden && (it.Title != "Version 0.3.0 is available…" || !strings.HasSuffix(tip, "\nVersion 0.3.0 is available…")) {
			t.Errorf("update line %q, tooltip %q", it.Title, tip)
		}
	}
}

// item is the menu's entry for action (ActNone: the one with children).
func item(m []Item, a Action) Item {
	for _, it := range m {
		if it.Action == a && (a != ActNone || len(it.Children) > 0) {
			return it
		}
	}
	return Item{}
}
