// Package tray is the tray icon's model: the menu it shows and the icon and
// tooltip for each health state. The systray binding (desktop build only)
// renders this model; everything here is testable without a display.
package tray

import (
	"fmt"
	"time"

	"omniroute/backend/health"
)

// Health is the overall status the icon shows.
type Health string

// Health states, as GET /api/monitoring/health names them.
const (
	Setup     Health = "setup"
	Healthy   Health = "healthy"
	Degraded  Health = "degraded"
	Unhealthy Health = "unhealthy"
	// Paused: the operator paused the gateway (clients get 503).
	Paused Health = "paused"
)

// Icon names the icon file for a health state (build/icons/tray-<state>.png):
// grey for setup, green, amber, red; paused is a different shape (two bars
// instead of the ring, on slate), so it does not read as a colour only.
func Icon(h Health) string {
	switch h {
	case Setup, Healthy, Degraded, Unhealthy, Paused:
		return "tray-" + string(h) + ".png"
	}
	return "tray-unhealthy.png"
}

// Status is what the tray knows about the gateway, taken from the health model.
type Status struct {
	Health      Health
	Connections int
	Serving     int
	// CoolingDown, Terminal (out of service) and OpenBreakers are the health
	// model's summary split: Serving + the three = Connections.
	CoolingDown  int
	Terminal     int
	OpenBreakers int
	ActiveLeases int
	Locks        int
	DeadCombos   int
	// NextName is the not-serving connection back soonest, at NextBack.
	NextName string
	NextBack time.Time
	// At is when the status was computed (countdowns are relative to it).
	At     time.Time
	Paused bool
	// Update is a newer release the opt-in check verified ("" when none).
	Update string
}

// FromReport builds the tray status from the health model's report.
func FromReport(r health.Report, paused bool) Status {
	s := Status{Health: Health(r.Summary.Status), Connections: r.Summary.Total, Serving: r.Summary.Serving,
		ActiveLeases: r.Summary.Leases, Locks: r.Summary.Locks, DeadCombos: r.Summary.DeadCombo,
		NextName: r.Summary.NextName, NextBack: r.Summary.NextBack, At: r.At, Paused: paused}
	if paused {
		s.Health = Paused
	}
	// The health model's one split of the connections not serving (the
	// dashboard's tiles read the same numbers).
	s.CoolingDown, s.Terminal, s.OpenBreakers = r.Summary.Cooling, r.Summary.OutOfService, r.Summary.BreakerOpen
	return s
}

// StatusLine is the first (disabled) line of the tray menu, the same sentence
// the dashboard's Overview leads with: "2 of 5 connections serving · Work back
// in 14 min".
func StatusLine(s Status) string {
	switch {
	case s.Paused:
		return "Paused — clients get 503 until you resume"
	case s.Connections == 0:
		return "Set up: add a provider connection"
	}
	line := fmt.Sprintf("%d of %d connections serving", s.Serving, s.Connections)
	if s.Serving == s.Connections && s.Connections == 1 {
		line = "1 connection serving"
	} else if s.Serving == s.Connections {
		line = fmt.Sprintf("All %d connections serving", s.Connections)
	}
	if s.NextName != "" && !s.NextBack.IsZero() {
		line += " · " + s.NextName + " back in " + health.Human(s.NextBack.Sub(s.At))
	} else if s.Locks > 0 {
		line += fmt.Sprintf(" · %d model %s", s.Locks, plural(s.Locks, "lock", "locks"))
	}
	return line
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Headline is the tooltip's first line, "OmniRoute — degraded": also what a
// screen reader says for the icon.
func Headline(s Status) string {
	word := map[Health]string{Setup: "set up needed", Healthy: "healthy", Degraded: "degraded", Unhealthy: "unhealthy", Paused: "paused"}[s.Health]
	if word == "" {
		word = string(s.Health)
	}
	if s.Paused {
		word = "paused"
	} else if s.Connections == 0 {
		word = "set up needed"
	}
	return "OmniRoute — " + word
}

// Tooltip is the summary shown on hover: the health in words, then the status
// line (and a newer release, when there is one).
func Tooltip(s Status) string {
	tip := Headline(s) + "\n" + StatusLine(s)
	if s.Update != "" {
		tip += "\n" + UpdateTitle(s.Update)
	}
	return tip
}

// UpdateTitle is the menu line announcing a newer release; clicking it opens
// the release page (nothing is downloaded).
func UpdateTitle(version string) string {
	return "Version " + version + " is available…"
}

// Action identifies what a menu item does.
type Action string

// Menu actions.
const (
	ActOpen           Action = "open"
	ActCopyEndpoint   Action = "copy-endpoint"
	ActCopyKey        Action = "copy-key"
	ActConfigureAgent Action = "configure-agent"
	ActResetBreakers  Action = "reset-breakers"
	ActClearCooldowns Action = "clear-cooldowns"
	ActPause          Action = "pause"
	ActResume         Action = "resume"
	ActStartAtLogin   Action = "start-at-login"
	ActQuit           Action = "quit"
	// ActOpenRelease opens the newer release's page (shown only when one exists).
	ActOpenRelease Action = "open-release"
	// ActNone is a disabled line (the status line).
	ActNone Action = ""
)

// Item is one menu entry; Children make a submenu.
type Item struct {
	Title    string
	Tooltip  string
	Action   Action
	Arg      string // e.g. the agent id
	Checked  bool
	Checkbox bool
	Children []Item
	Sep      bool // a separator before this item
	Disabled bool // shown greyed out, not clickable (the status line)
	Hidden   bool // built but not shown (the update line until a release exists)
}

// Agent is one entry of the Configure Agent submenu.
type Agent struct{ ID, Name string }

// Menu builds the tray menu for the current state.
func Menu(s Status, agents []Agent, startAtLogin bool) []Item {
	sub := make([]Item, 0, len(agents))
	for _, a := range agents {
		sub = append(sub, Item{Title: a.Name, Tooltip: "Point " + a.Name + " at OmniRoute", Action: ActConfigureAgent, Arg: a.ID})
	}
	pause := Item{Title: "Pause Gateway", Tooltip: "Refuse new requests until resumed", Action: ActPause, Sep: true}
	if s.Paused {
		pause = Item{Title: "Resume Gateway", Tooltip: "Accept requests again", Action: ActResume, Sep: true}
	}
	return []Item{
		{Title: StatusLine(s), Tooltip: Tooltip(s), Disabled: true},
		{Title: UpdateTitle(s.Update), Tooltip: "Open the release page", Action: ActOpenRelease, Hidden: s.Update == ""},
		{Title: "Open Dashboard", Action: ActOpen, Sep: true},
		{Title: "Copy Endpoint URL", Action: ActCopyEndpoint},
		{Title: "Copy API Key", Action: ActCopyKey},
		{Title: "Configure Agent", Children: sub},
		{Title: "Reset Circuit Breakers", Action: ActResetBreakers, Sep: true},
		{Title: "Clear All Cooldowns", Action: ActClearCooldowns},
		pause,
		{Title: "Start at Login", Action: ActStartAtLogin, Checkbox: true, Checked: startAtLogin},
		{Title: "Quit OmniRoute", Action: ActQuit, Sep: true},
	}
}
