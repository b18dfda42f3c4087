package server_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"go.uber.org/goleak"

	"omniroute/backend/backup"
	"omniroute/backend/clock"
	"omniroute/backend/config"
	"omniroute/backend/datadir"
	"omniroute/backend/server"
	"omniroute/tests/dbtemplate"
	"omniroute/tests/fakeupstream"
)

// freshDB is a migrated SQLite database made once (TestMain): each env's
// first start begins from a copy of it instead of migrating an empty file.
var freshDB *dbtemplate.SQLite

// testBackupCost is the key derivation of the env's backups and of the files
// the tests seal themselves: one pass over 64 KiB. The default (64 MiB) takes
// seconds per backup, restore or sealed file under the race detector.
func testBackupCost() backup.Cost { return backup.Cost{Time: 1, Memory: 64, Threads: 1} }

func TestMain(m *testing.M) {
	var err error
	if freshDB, err = dbtemplate.New(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("database/sql.(*DB).connectionOpener"))
}

// env is a gateway wired by server.New over a temp data dir, served over real
// loopback HTTP, with a fake upstream and a fake clock for resilience timers.
type env struct {
	t     *testing.T
	dir   string
	srv   *server.Server
	ts    *httptest.Server
	up    *fakeupstream.Upstream
	upURL string
	clk   *clock.Fake
	real  bool // use the wall clock (tests of real waits)
	token string
	key   string
	envs  map[string]string
	dbURL string // OMNIROUTE_DATABASE_URL ("" : SQLite)
	// started: the gateway was started once (the first start on SQLite
	// copies freshDB into an empty data dir).
	started bool
}

func newEnv(t *testing.T) *env { return newEnvClock(t, false) }

// newEnvClock builds an env on the fake clock, or on the wall clock when real.
func newEnvClock(t *testing.T, real bool) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), clk: clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), real: real, envs: map[string]string{}}
	e.up = fakeupstream.New()
	e.upURL = e.up.Start() + "/v1"
	t.Cleanup(e.up.Close)
	e.start()
	t.Cleanup(e.stop)
	return e
}

func (e *env) start() {
	e.t.Helper()
	if !e.started && e.dbURL == "" {
		if _, err := os.Stat(filepath.Join(e.dir, datadir.DBFile)); errors.Is(err, os.ErrNotExist) {
			freshDB.WriteTo(e.t, filepath.Join(e.dir, datadir.DBFile))
		}
	}
	e.started = true
	var clk clock.Clock = e.clk
	if e.real {
		clk = clock.Real{}
	}
	srv, err := server.New(server.Options{
		Process:   config.Process{DataDir: e.dir, Host: "127.0.0.1", Port: 0, DatabaseURL: e.dbURL},
		Dashboard: fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>OmniRoute</title>")}},
		Version:   "test",
		Log:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		Clock:     clk,
		Getenv:    func(k string) string { return e.envs[k] },
		// The least bcrypt cost: the race detector makes the default take seconds.
		PasswordCost: 4,
		BackupCost:   testBackupCost(),
	})
	if err != nil {
		e.t.Fatal(err)
	}
	e.srv = srv
	e.ts = httptest.NewServer(srv.Handler())
	e.token = srv.Token()
	key, err := srv.DefaultKey()
	if err != nil {
		e.t.Fatal(err)
	}
	e.key = key
}

func (e *env) stop() {
	if e.ts == nil {
		return
	}
	e.ts.Close()
	if err := e.srv.Close(); err != nil {
		e.t.Errorf("close: %v", err)
	}
	e.ts = nil
}

// restart stops the gateway and starts a new one on the same data dir.
func (e *env) restart() {
	e.stop()
	e.start()
}

func (e *env) do(method, path string, body any, hdr map[string]string) (*http.Response, []byte) {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.ts.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, out
}

func (e *env) mgmt(method, path string, body any) (int, map[string]any) {
	e.t.Helper()
	resp, out := e.do(method, path, body, map[string]string{"Authorization": "Bearer " + e.token})
	var m map[string]any
	_ = json.Unmarshal(out, &m)
	return resp.StatusCode, m
}

// addConn creates an openai-compatible connection to the fake with an upstream
// key, without the check a create runs by default (routing tests count the
// fake's requests and set its faults before adding; probeonsave_test.go
// covers the check).
func (e *env) addConn(name, upstreamKey string, priority int) string {
	e.t.Helper()
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "openai-compatible", "name": name,
		"apiKey": upstreamKey, "baseUrl": e.upURL, "priority": priority, "models": []string{"gpt-4o-mini"}, "verify": false})
	if code != http.StatusCreated {
		e.t.Fatalf("create connection: %d %v", code, m)
	}
	return m["connection"].(map[string]any)["id"].(string)
}

func (e *env) chat(model string, stream bool, hdr map[string]string) (*http.Response, []byte) {
	e.t.Helper()
	h := map[string]string{"Authorization": "Bearer " + e.key}
	for k, v := range hdr {
		h[k] = v
	}
	body := map[string]any{"model": model, "stream": stream, "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
	return e.do("POST", "/v1/chat/completions", body, h)
}

func (e *env) patchSettings(patch map[string]any) {
	e.t.Helper()
	if code, m := e.mgmt("PATCH", "/api/settings", patch); code != 200 {
		e.t.Fatalf("patch settings: %d %v", code, m)
	}
}

func errorCode(body []byte) string {
	var m struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &m)
	return m.Error.Code
}
