//go:build bindings

package app

// bindingsBuild is true when the Wails CLI builds bindings: then the app
// starts neither the listener nor the tray, or `wails build` would hang.
const bindingsBuild = true
