// Package clients drives the real clients users point at the gateway — Claude
// Code, Codex CLI, the Gemini CLI (on the Gemini-native /v1beta API),
// opencode, the Kilo Code CLI, the Continue CLI (cn), the Cline CLI, Qwen Code
// (on a Node 22 pinned from npm: it needs one newer than the machine's) and
// the official OpenAI, Anthropic and Ollama SDKs, pinned in
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
// The agents with an `omniroute setup` run right after the real setup, in
// the HOME it wrote to, with nothing else configured, and each one's tool
// round trip meets both faults no agent may notice (addFaultyNeighbours): the
// first connection answers 429, so the first request is served after a
// failover, and the final text answer (the one after the tool result) is cut
// after two text events and continued on a connection that takes an
// assistant prefill (OpenAI-compatible declaring the vLLM prefill); the
// agent's printed answer must be whole. faults_test.go adds the SDKs, and
// Claude Code and Codex on Anthropic-format continuations. Crush's CLI
// (@charmland/crush) cannot run here: its npm package downloads its binary
// from GitHub at install time, which this machine cannot reach; so
// crush.mjs reads the crush.json `omniroute setup crush` wrote as Crush does
// and runs Crush's tool round trip against the endpoint it names with the
// official OpenAI SDK, the wire of its "openai-compat" provider.
//
// Every client runs in a fresh temporary HOME (and CODEX_HOME) with the
// non-essential traffic of each client switched off, under a time bound.
// Requests pass through a recording proxy on their way to the gateway, so
// the tests also check what the client really sent; with
// OMNIROUTE_CAPTURE_DIR set, the recorded request bodies are written there
// (how the fixtures of backend/translate/testdata/clients were captured).
package clients
