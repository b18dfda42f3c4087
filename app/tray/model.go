// Package tray is the tray icon's model: the menu it shows and the icon and
// tooltip for each health state. The systray binding (desktop build only)
// renders this model; everything here is testable without a display.
package tray

import "fmt"

// Health is the overall status the icon shows.
type Health string

// Health states, as GET /api/monitoring/health names them.
const (
	Healthy   Health = "healthy"
	Degraded  Health = "degraded"
	Unhealthy Health = "unhealthy"
)

// Icon names the icon file for a health state (build/icons/tray-<state>.png).
func Icon(h Health) string {
	switch h {
	case Healthy, Degraded, Unhealthy:
		return "tray-" + string(h) + ".png"
	}
	return "tray-unhealthy.png"
}

// Status is what the tray knows about the gateway.
type Status struct {
	Health       Health
	Connections  int
	CoolingDown  int
	Terminal     int
	OpenBreakers int
	ActiveLeases int
	Paused       bool
}

// Tooltip is the one-line summary shown on hover.
func Tooltip(s Status) string {
	if s.Paused {
		return "OmniRoute — paused"
	}
	switch {
	case s.Connections == 0:
		return "OmniRoute — no connections yet"
	case s.Health == Healthy:
		return fmt.Sprintf("OmniRoute — healthy (%d connections, %d leases)", s.Connections, s.ActiveLeases)
	default:
		return fmt.Sprintf("OmniRoute — %s: %d cooling, %d unavailable, %d breakers open", s.Health, s.CoolingDown, s.Terminal, s.OpenBreakers)
	}
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
		{Title: "Open Dashboard", Action: ActOpen},
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
