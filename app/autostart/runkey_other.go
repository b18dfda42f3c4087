//go:build !windows

package autostart

import "errors"

// windowsRunKey exists only on Windows; elsewhere Entry.Registry is set.
type windowsRunKey struct{}

func (windowsRunKey) Get(string) (string, bool) { return "", false }
func (windowsRunKey) Set(string, string) error {
	return errors.New("autostart: no Windows registry on this system")
}
func (windowsRunKey) Delete(string) error {
	return errors.New("autostart: no Windows registry on this system")
}
