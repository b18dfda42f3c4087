// Package autostart turns "start at login" on and off. On Linux it writes the
// XDG autostart entry ~/.config/autostart/omniroute.desktop; macOS and Windows
// use the same entry point with their own mechanism (a LaunchAgent plist and a
// Run registry value), documented in the README for the packaged builds.
package autostart

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

const fileName = "omniroute.desktop"

// Entry manages one user's autostart entry.
type Entry struct {
	// ConfigDir is $XDG_CONFIG_HOME (or ~/.config).
	ConfigDir string
}

func (e Entry) path() string { return filepath.Join(e.ConfigDir, "autostart", fileName) }

// Enabled reports whether the app starts at login.
func (e Entry) Enabled() bool {
	b, err := os.ReadFile(e.path())
	return err == nil && !strings.Contains(string(b), "\nHidden=true")
}

// Enable writes the entry so exe starts hidden (tray only) at login.
func (e Entry) Enable(exe string) error {
	if strings.ContainsAny(exe, "\n\r") {
		return errors.New("autostart: executable path contains a newline")
	}
	if err := os.MkdirAll(filepath.Dir(e.path()), 0o700); err != nil {
		return err
	}
	body := fmt.Sprintf("[Desktop Entry]\nType=Application\nName=OmniRoute\nComment=Local LLM gateway for AI coding agents\nExec=%q --hidden\nIcon=omniroute\nTerminal=false\nX-GNOME-Autostart-enabled=true\n", exe)
	tmp := e.path() + ".tmp"
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, e.path())
}

// Disable removes the entry; removing an absent entry is not an error.
func (e Entry) Disable() error {
	err := os.Remove(e.path())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
