// Package e2e holds end-to-end tests that build the real omniroute binary
// (headless flavour, CGO_ENABLED=0), start it as a user would, and drive it
// over HTTP against the in-process fake upstream (tests/fakeupstream).
//
// Run: CGO_ENABLED=1 go test -race -count=1 ./tests/e2e/
package e2e
