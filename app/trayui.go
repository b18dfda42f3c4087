//go:build desktop || bindings

package app

import (
	"runtime"
	"strings"

	"github.com/getlantern/systray"
	"github.com/godbus/dbus/v5"

	"omniroute/app/tray/sni"
)

// trayUI draws the tray: systray (AppIndicator on Linux, the native tray on
// macOS and Windows) or, on Linux with a StatusNotifierWatcher on the session
// bus, our own StatusNotifierItem, which also carries the tooltip and the
// icon's accessible description that AppIndicator leaves out.
type trayUI interface {
	// SetIcon shows png; desc is what a screen reader says for it.
	SetIcon(png []byte, desc string)
	// SetTooltip sets the hover text: a headline, then the details.
	SetTooltip(text string)
	AddSeparator()
	AddItem(title, tooltip string, checkbox, checked bool) trayItem
}

// trayItem is one menu entry of either tray.
type trayItem interface {
	SetTitle(string)
	SetTooltip(string)
	Check()
	Uncheck()
	Checked() bool
	Show()
	Hide()
	Disable()
	AddSubMenuItem(title, tooltip string) trayItem
	Clicked() <-chan struct{}
}

// newSNITray exports our StatusNotifierItem when this is Linux and a panel
// reads items; the error says why not (the caller falls back to systray).
func newSNITray(activate func()) (trayUI, error) {
	if runtime.GOOS != "linux" {
		return nil, errNotLinux{}
	}
	conn, err := dbus.SessionBus()
	if err != nil {
		return nil, err
	}
	t, err := sni.New(conn, sni.Options{ID: "omniroute", Title: "OmniRoute", Activate: activate})
	if err != nil {
		return nil, err
	}
	go t.Reregister(make(chan struct{})) // for the process's life: a restarted panel gets the item again
	return sniUI{t}, nil
}

type errNotLinux struct{}

func (errNotLinux) Error() string { return "the StatusNotifierItem tray is for Linux desktops" }

type sniUI struct{ t *sni.Tray }

func (u sniUI) SetIcon(png []byte, desc string) { _ = u.t.SetIcon(png, desc) }
func (u sniUI) SetTooltip(text string) {
	title, body, _ := strings.Cut(text, "\n")
	_ = u.t.SetToolTip(title, body)
}
func (u sniUI) AddSeparator() { u.t.Menu().AddSeparator() }
func (u sniUI) AddItem(title, tooltip string, checkbox, checked bool) trayItem {
	return sniItem{u.t.Menu().AddItem(title, tooltip, checkbox, checked)}
}

type sniItem struct{ *sni.MenuItem }

func (i sniItem) AddSubMenuItem(title, tooltip string) trayItem {
	return sniItem{i.MenuItem.AddSubMenuItem(title, tooltip)}
}
func (i sniItem) Clicked() <-chan struct{} { return i.ClickedCh() }

// systrayUI is getlantern/systray's tray (started by systray.Register).
type systrayUI struct{}

func (systrayUI) SetIcon(png []byte, _ string) { systray.SetIcon(png) }
func (systrayUI) SetTooltip(text string)       { systray.SetTooltip(text) }
func (systrayUI) AddSeparator()                { systray.AddSeparator() }
func (systrayUI) AddItem(title, tooltip string, checkbox, checked bool) trayItem {
	if checkbox {
		return systrayItem{systray.AddMenuItemCheckbox(title, tooltip, checked)}
	}
	return systrayItem{systray.AddMenuItem(title, tooltip)}
}

type systrayItem struct{ *systray.MenuItem }

func (i systrayItem) AddSubMenuItem(title, tooltip string) trayItem {
	return systrayItem{i.MenuItem.AddSubMenuItem(title, tooltip)}
}
func (i systrayItem) Clicked() <-chan struct{} { return i.ClickedCh }
