# OmniRoute Desktop — build, run and test.
#   make run    build everything and start the app (desktop window where a display
#               and the GUI libraries exist, otherwise the headless gateway)
#   make test   everything CI runs

GO        ?= go
BIN       := bin/omniroute
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X main.version=$(VERSION)
export CGO_ENABLED ?= 0

.PHONY: all build frontend run run-headless test test-go test-e2e vet bench clean

all: build

frontend/node_modules/.package-lock.json: frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund

frontend: frontend/node_modules/.package-lock.json
	cd frontend && npm run build

build: frontend
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) .

run: build
	./$(BIN) --headless

run-headless: build
	./$(BIN) --headless

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1)

# Unit and integration tests (race detector needs cgo), then end-to-end tests
# against the real built binary.
test: frontend vet
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 15m ./...

bench: build
	./tests/bench/run.sh

clean:
	rm -rf bin frontend/node_modules
	find frontend/dist -mindepth 1 ! -name .gitkeep -delete
