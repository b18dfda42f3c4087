# OmniRoute Desktop — build, run and test.
#   make run    build everything and start the app: the desktop window and tray
#               where a display and the GUI libraries exist, otherwise the headless
#               gateway with the dashboard in the browser
#   make test   everything CI runs, set-up included (build/test.sh: installs missing
#               system packages, a throw-away PostgreSQL, progress every 30 s;
#               OMNIROUTE_TEST_STAGES="vet race" runs a subset)
#   make install  put omniroute (and omniroute-desktop) in a directory already on PATH
#               (/usr/local/bin as root, ~/.local/bin or ~/bin), else ~/.local/bin and
#               say which line to paste; PREFIX=… or BINDIR=… choose

GO        ?= go
BIN       := bin/omniroute
DESKTOP   := bin/omniroute-desktop
# One version everywhere: the VERSION file (wails.json and the README follow it;
# tests/arch checks). The commit and build date are stamped at build time.
VERSION   ?= $(shell cat VERSION)
COMMIT    ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
BUILD_DATE ?= $(shell date -u +%Y-%m-%d)
LDFLAGS   := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.buildDate=$(BUILD_DATE)
DESKTOP_TAGS := desktop,production,webkit2_41
# The desktop build needs GTK 3, WebKitGTK 4.1 and Ayatana AppIndicator (see .ci/run).
HAVE_GUI  := $(shell pkg-config --exists gtk+-3.0 webkit2gtk-4.1 ayatana-appindicator3-0.1 2>/dev/null && echo yes)
HAVE_DISPLAY := $(if $(or $(DISPLAY),$(WAYLAND_DISPLAY)),yes,)
# Empty PREFIX: install.sh picks a place whose bin directory is on PATH.
PREFIX    ?=
PREFIX_ARG := $(if $(PREFIX),--prefix "$(PREFIX)")
BINDIR    ?= $(shell build/linux/install.sh --print-bindir $(PREFIX_ARG))


.PHONY: all build build-desktop frontend install uninstall test-package package-windows package-macos run run-headless test test-go test-race test-pins test-clients test-fuzz test-soak test-frontend test-browser test-desktop vet bench package icons clean

all: build

frontend/node_modules/.package-lock.json: frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund

# The dashboard is rebuilt only when a source changed (make test builds it once,
# not once per stage that needs it).
FRONTEND_SRC := $(shell find frontend/src -type f 2>/dev/null) frontend/index.html frontend/package.json \
	frontend/tsconfig.json frontend/vite.config.ts
frontend/dist/index.html: frontend/node_modules/.package-lock.json $(FRONTEND_SRC)
	cd frontend && npm run build

frontend: frontend/dist/index.html

# The headless flavour: no GUI libraries, no cgo.
build: frontend
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) .

# The desktop flavour: Wails window + tray (cgo, GTK, WebKitGTK).
build-desktop: frontend
	CGO_ENABLED=1 $(GO) build -tags $(DESKTOP_TAGS) -trimpath -ldflags "$(LDFLAGS)" -o $(DESKTOP) .

# make run starts the installed app in the foreground (Ctrl-C or the tray's
# Quit stops it); its banner ends with how to put omniroute on PATH when it
# is not. make test can run meanwhile in another terminal: its gateways use
# their own ports and data directories.
ifeq ($(HAVE_GUI)$(HAVE_DISPLAY),yesyes)
run: install
	"$(BINDIR)/omniroute-desktop" --log-requests
else
run: install
	"$(BINDIR)/omniroute" --headless --log-requests
endif

run-headless: build
	./$(BIN) --headless --log-requests

# The CLI (and, where the GUI libraries exist, the desktop app with its menu
# entry and icons) in BINDIR, a directory already on PATH where one is writable
# (the rest under /usr/local or ~/.local; PREFIX=… chooses), through the same
# install.sh the tarball ships; make uninstall removes exactly what it installed (never the data).
install: build $(if $(HAVE_GUI),build-desktop)
	@build/package.sh stage dist-pkg/install
	@BINDIR="$(BINDIR)" dist-pkg/install/install.sh $(PREFIX_ARG)

uninstall:
	@BINDIR="$(BINDIR)" build/linux/install.sh --uninstall $(PREFIX_ARG)

# Every Go step without the race detector (vet, the pins, fuzzing, the soak)
# compiles with build's settings, so they share one set of compiled packages
# in the build cache instead of compiling everything once per setting.
NORACE    := CGO_ENABLED=0 $(GO)
NORACE_FLAGS := -trimpath

# After make build, vet reuses build's compiled packages.
vet:
	$(NORACE) vet $(NORACE_FLAGS) ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1)

# Unit, integration and end-to-end (real binary) Go tests, with the race
# detector; then the measurements it would distort.
test-go: test-race test-pins

# build/race.sh: tests/e2e (mostly waiting on the gateways it starts) as its own
# go test and backend/server split in two, beside one go test of every other
# package (OMNIROUTE_RACE_SHARDS chooses the packages split, and how).
test-race:
	GO=$(GO) build/race.sh

# The measurements the race detector would distort (allocation pins, the
# stack an open stream holds): the packages with //go:build !race tests.
PIN_PKGS := $(shell grep -rl --include='*_test.go' '^//go:build !race' backend tests | xargs -n1 dirname | sort -u | sed 's|^|./|')
test-pins:
	$(NORACE) test $(NORACE_FLAGS) -count=1 -timeout 5m $(PIN_PKGS)

# The real clients (Claude Code, Codex CLI, Gemini CLI, opencode, Kilo Code CLI,
# Continue CLI, Cline CLI, the OpenAI, Anthropic and Ollama SDKs,
# pinned in tests/clients/package-lock.json) against the built binary and the
# fake upstreams; the suite fails when a client is missing.
tests/clients/node_modules/.package-lock.json: tests/clients/package-lock.json
	cd tests/clients && npm ci --no-audit --no-fund

test-clients: tests/clients/node_modules/.package-lock.json
	CGO_ENABLED=1 $(GO) test -tags clients -race -count=1 -timeout 10m ./tests/clients/

# Every Go fuzz target over untrusted bytes (JSON validation, requests,
# translations, SSE, classification and retry hints, the server's own error
# answers): each target's seed corpus and the inputs found before, then
# FUZZTIME new executions (build/fuzz.sh: one instrumented test binary per
# package). 10,000 here, about 80 s of CPU for the 32 targets; the nightly
# run (test-nightly) gives each a million.
FUZZTIME  ?= 10000x
FUZZ_PKGS := ./backend/jsonv ./backend/gateway ./backend/httpx ./backend/translate/... ./backend/resilience/verdict
test-fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) build/fuzz.sh $(FUZZ_PKGS)

test-frontend: frontend
	cd frontend && npm test

# The dashboard in Debian's Chromium, driven by playwright-core, against the real binary.
test-browser: build
	cd frontend && OMNIROUTE_BIN=$(CURDIR)/$(BIN) npm run test:browser

# The Wails window under Xvfb with a D-Bus session: screenshot and tray checks.
test-desktop: build-desktop
	./tests/desktop/smoke.sh $(CURDIR)/$(DESKTOP)

# 10,000 streams, 30 % cancelled by the client: no leak of goroutines, heap,
# upstream connections, permits or cooldowns (no race detector: it measures).
test-soak:
	$(NORACE) test $(NORACE_FLAGS) -tags soak -count=1 -v -run TenThousand ./tests/soak/

# Everything CI runs, in stages (build vet race pins fuzz, then clients frontend
# browser desktop package in two lanes side by side, then soak), set-up and a
# throw-away PostgreSQL included: see build/test.sh.
test:
	@build/test.sh

# The health endpoint polled by 8 clients while chat traffic runs through a
# gateway of 40 connections: p50/p95/p99 and errors printed against their
# budgets; it fails (non-zero exit) when either is missed: an error, or a p95
# over 50 ms.
bench-health:
	CGO_ENABLED=0 $(GO) test -run '^$$' -bench HealthUnderLoad -benchtime 5000x ./tests/bench/

# The long suites for a scheduled (nightly) job, not for every change: every
# fuzz target for 100x the executions of make test, the soak, the health
# endpoint under load and the full speed and memory benchmark. About 45 min.
test-nightly:
	$(MAKE) test-fuzz FUZZTIME=1000000x
	$(MAKE) test-soak
	$(MAKE) bench-health
	$(MAKE) bench

bench: build
	./tests/bench/run.sh

# Linux packages (.deb, .rpm, a tarball with install.sh) of both binaries,
# built with dpkg-deb and rpmbuild (build/package.sh); macOS and Windows
# builds use the Wails CLI on those systems: `wails build -tags desktop`.
package: build build-desktop
	build/package.sh all

# The packages' contents and metadata, an install into a throw-away root and
# into a prefix, the installed gateway answering, and a clean removal; the
# Windows installer's build. Built as make package and package-windows build
# them, with faster compression (the same formats: xz level 1 in the .deb and
# the .rpm, zlib in the installer; releases keep xz 6 and 9 and solid LZMA),
# the Linux packages and the Windows installer at once (no file in common).
test-package: build build-desktop
	@PACKAGE_FAST=1 build/package.sh all & linux=$$!; \
	$(MAKE) --no-print-directory package-windows NSISDEFS=-DFAST_COMPRESSION; windows=$$?; \
	wait $$linux && [ $$windows = 0 ]
	tests/package/check.sh

# macOS (on a Mac, with Xcode's tools and the Wails CLI: go install
# github.com/wailsapp/wails/v2/cmd/wails@v2.11.0): the .app bundle; not built on
# Linux. docs/INSTALL.md has the steps (icon set, tray-only LSUIElement).
package-macos:
	@[ "$$(uname)" = Darwin ] || { echo "package-macos runs on macOS (see docs/INSTALL.md)"; exit 2; }
	wails build -platform darwin/universal -tags desktop -ldflags "$(LDFLAGS)" -o omniroute

# Windows: both binaries cross-compiled without cgo (Wails' WebView2 backend
# and the tray need none) and a per-user NSIS installer (Start-menu entry,
# optional start at login, uninstaller that keeps the user's data), built with
# Debian's makensis: bin/omniroute-<version>-windows-amd64-setup.exe.
WINDIR := dist-pkg/windows
package-windows: frontend
	rm -rf $(WINDIR) && mkdir -p $(WINDIR)
	GOOS=windows GOARCH=amd64 CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(WINDIR)/omniroute.exe .
	GOOS=windows GOARCH=amd64 CGO_ENABLED=0 $(GO) build -tags desktop,production -trimpath -ldflags "$(LDFLAGS) -H windowsgui" -o $(WINDIR)/omniroute-desktop.exe .
	cp build/windows/omniroute.ico README.md $(WINDIR)/
	makensis -V2 $(NSISDEFS) -DVERSION=$(VERSION) -DSRC=$(CURDIR)/$(WINDIR) -DOUTFILE=$(CURDIR)/bin/omniroute-$(VERSION)-windows-amd64-setup.exe build/windows/installer.nsi

icons:
	$(GO) run ./build/genicons

clean:
	rm -rf bin dist-pkg frontend/node_modules
	find frontend/dist -mindepth 1 ! -name .gitkeep -delete
