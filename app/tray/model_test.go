package tray

import (
	"strings"
	"testing"
)

func TestIconPerHealth(t *testing.T) {
	tests := map[Health]string{Healthy: "tray-healthy.png", Degraded: "tray-degraded.png", Unhealthy: "tray-unhealthy.png", "": "tray-unhealthy.png", "weird": "tray-unhealthy.png"}
	for h, want := range tests {
		if got := Icon(h); got != want {
			t.Errorf("Icon(%q) = %q, want %q", h, got, want)
		}
	}
}

func TestTooltip(t *testing.T) {
	tests := []struct {
		s    Status
		want string
	}{
		{Status{Health: Healthy}, "no connections yet"},
		{Status{Health: Healthy, Connections: 2, ActiveLeases: 1}, "healthy (2 connections, 1 leases)"},
		{Status{Health: Degraded, Connections: 2, CoolingDown: 1}, "degraded: 1 cooling"},
		{Status{Health: Unhealthy, Connections: 1, OpenBreakers: 1}, "1 breakers open"},
		{Status{Health: Healthy, Connections: 1, Paused: true}, "paused"},
	}
	for _, tt := range tests {
		if got := Tooltip(tt.s); !strings.Contains(got, tt.want) {
			t.Errorf("Tooltip(%+v) = %q, want it to contain %q", tt.s, got, tt.want)
		}
	}
}

func TestMenu(t *testing.T) {
	agents := []Agent{{"claude-code", "Claude Code"}, {"codex", "Codex CLI"}}
	m := Menu(Status{Health: Healthy}, agents, true)
	var titles []string
	for _, it := range m {
		titles = append(titles, it.Title)
	}
	want := "Open Dashboard|Copy Endpoint URL|Copy API Key|Configure Agent|Reset Circuit Breakers|Clear All Cooldowns|Pause Gateway|Start at Login|Quit OmniRoute"
	if got := strings.Join(titles, "|"); got != want {
		t.Fatalf("menu %s", got)
	}
	if len(m[3].Children) != 2 || m[3].Children[1].Action != ActConfigureAgent || m[3].Children[1].Arg != "codex" {
		t.Fatalf("agents submenu %+v", m[3].Children)
	}
	if !m[7].Checkbox || !m[7].Checked {
		t.Fatal("start at login not checked")
	}
	paused := Menu(Status{Paused: true}, agents, false)
	if paused[6].Title != "Resume Gateway" || paused[6].Action != ActResume || paused[7].Checked {
		t.Fatalf("paused menu %+v", paused[6])
	}
}
