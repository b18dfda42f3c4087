// Package clients drives the real clients users point at the gateway — Claude
// Code, Codex CLI, the Gemini CLI (on the Gemini-native /v1beta API) and the
// official OpenAI and Anthropic SDKs, pinned in
// package.json / package-lock.json and installed with `npm ci` — against the
// real built binary (`omniroute --headless` with a temporary data directory
// and port) and the fake upstream of both wire formats (tests/fakeupstream).
//
// The tests need node and the installed clients, so they are behind the
// "clients" build tag: plain `go test ./...` stays fast and needs no npm.
// `make test-clients` (part of `make test`) installs the clients and runs
//
//	go test -tags clients -count=1 ./tests/clients/
//
// and the suite fails, never skips, when a client is missing.
//
// Every client runs in a fresh temporary HOME (and CODEX_HOME) with the
// non-essential traffic of each client switched off, under a time bound.
// Requests pass through a recording proxy on their way to the gateway, so
// the tests also check what the client really sent; with
// OMNIROUTE_CAPTURE_DIR set, the recorded request bodies are written there
// (how the fixtures of backend/translate/testdata/clients were captured).
package clients
