// Package autostart turns "start at login" on and off, with each system's own
// mechanism: the XDG autostart entry ~/.config/autostart/omniroute.desktop on
// Linux and other Unix desktops, a LaunchAgent
// ~/Library/LaunchAgents/io.omniroute.desktop.plist on macOS, and the
// HKCU\…\CurrentVersion\Run value "OmniRoute" on Windows (the one the
// installer's option writes, so either place turns it off).
package autostart

import (
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

const (
	fileName = "omniroute.desktop"
	// agentLabel names the macOS LaunchAgent (and its file).
	agentLabel = "io.omniroute.desktop"
	// runValue is the Windows Run value the installer writes too.
	runValue = "OmniRoute"
)

// Entry manages one user's autostart entry.
type Entry struct {
	// ConfigDir is $XDG_CONFIG_HOME (or ~/.config): where the XDG entry goes.
	ConfigDir string
	// Home is the user's home directory: where macOS keeps LaunchAgents.
	Home string
	// OS is runtime.GOOS ("": Linux and other XDG desktops).
	OS string
	// Registry reads and writes the Windows Run value (nil: the real registry;
	// tests on other systems pass a map).
	Registry RunKey
}

// RunKey is the Windows HKCU Run key: one string value per name.
type RunKey interface {
	Get(name string) (string, bool)
	Set(name, value string) error
	Delete(name string) error
}

func (e Entry) path() string {
	if e.OS == "darwin" {
		return filepath.Join(e.Home, "Library", "LaunchAgents", agentLabel+".plist")
	}
	return filepath.Join(e.ConfigDir, "autostart", fileName)
}

func (e Entry) runKey() RunKey {
	if e.Registry != nil {
		return e.Registry
	}
	return windowsRunKey{}
}

// Enabled reports whether the app starts at login.
func (e Entry) Enabled() bool {
	if e.OS == "windows" {
		_, ok := e.runKey().Get(runValue)
		return ok
	}
	b, err := os.ReadFile(e.path())
	return err == nil && !strings.Contains(string(b), "\nHidden=true")
}

// Enable makes exe start hidden (tray only) at login.
func (e Entry) Enable(exe string) error {
	if strings.ContainsAny(exe, "\n\r\"") {
		return errors.New("autostart: executable path contains a newline or a quote")
	}
	var body string
	switch e.OS {
	case "windows":
		return e.runKey().Set(runValue, `"`+exe+`" --hidden`)
	case "darwin":
		body = launchAgent(exe)
	default:
		body = fmt.Sprintf("[Desktop Entry]\nType=Application\nName=OmniRoute\nComment=Local LLM gateway for AI coding agents\nExec=%q --hidden\nIcon=omniroute\nTerminal=false\nX-GNOME-Autostart-enabled=true\n", exe)
	}
	if err := os.MkdirAll(filepath.Dir(e.path()), 0o700); err != nil {
		return err
	}
	tmp := e.path() + ".tmp"
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, e.path())
}

// launchAgent is the LaunchAgent property list that starts exe hidden at login
// (launchd reads it at the next login; RunAtLoad without KeepAlive: a Quit from
// the tray stays quit).
func launchAgent(exe string) string {
	var esc strings.Builder
	_ = xml.EscapeText(&esc, []byte(exe))
	return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>` + agentLabel + `</string>
	<key>ProgramArguments</key>
	<array>
		<string>` + esc.String() + `</string>
		<string>--hidden</string>
	</array>
	<key>RunAtLoad</key>
	<true/>
	<key>ProcessType</key>
	<string>Interactive</string>
</dict>
</plist>
`
}

// Disable removes the entry; removing an absent entry is not an error.
func (e Entry) Disable() error {
	if e.OS == "windows" {
		return e.runKey().Delete(runValue)
	}
	err := os.Remove(e.path())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
