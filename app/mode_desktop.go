//go:build desktop && !bindings

package app

// bindingsBuild is true only when the Wails CLI builds bindings.
const bindingsBuild = false
