//go:build clients

package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"omniroute/tests/fakeupstream"
	"omniroute/tests/testproc"
)

// Time bounds. They only cut a hung run short; no outcome depends on them.
const (
	startTimeout  = 20 * time.Second
	clientTimeout = 60 * time.Second
)

var (
	binPath    string // the gateway binary built by TestMain
	clientsDir string // this directory: package.json and node_modules
)

// Client executables, relative to clientsDir.
const (
	claudeBin = "node_modules/.bin/claude"
	codexBin  = "node_modules/.bin/codex"
)

func TestMain(m *testing.M) {
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "clients:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

// setup checks that the pinned clients are installed (a missing client is a
// failure, never a skip), builds the gateway and runs the tests.
func setup(m *testing.M) (int, error) {
	wd, err := os.Getwd()
	if err != nil {
		return 0, err
	}
	clientsDir = wd
	for _, p := range []string{claudeBin, codexBin, geminiBin, opencodeBin, continueBin, kiloBin, clineBin, qwenBin, node22Dir + "/node", "node_modules/openai/package.json", "node_modules/@anthropic-ai/sdk/package.json"} {
		if _, err := os.Stat(filepath.Join(clientsDir, p)); err != nil {
			return 0, fmt.Errorf("%s is missing: run `npm ci` in tests/clients (make test-clients does)", p)
		}
	}
	if _, err := exec.LookPath("node"); err != nil {
		return 0, fmt.Errorf("node is not on PATH: %w", err)
	}
	dir, err := os.MkdirTemp("", "omniroute-clients-bin-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	if binPath, err = testproc.BuildGateway(dir); err != nil {
		return 0, err
	}
	return m.Run(), nil
}

// cleanEnv is the test's environment without anything that configures a
// client or the gateway, so a developer's own settings never leak in.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "OMNIROUTE_"), strings.HasPrefix(k, "ANTHROPIC_"), strings.HasPrefix(k, "OPENAI_"),
			strings.HasPrefix(k, "CLAUDE_"), strings.HasPrefix(k, "CODEX_"), k == "HOME", k == "XDG_CONFIG_HOME",
			strings.HasSuffix(k, "_PROXY"), strings.HasSuffix(k, "_proxy"):
			continue
		}
		out = append(out, kv)
	}
	return out
}

// stack is a running gateway, the fake upstream behind it and the recording
// proxy clients talk to.
type stack struct {
	t     *testing.T
	up    *fakeupstream.Upstream
	upURL string // fake base URL, without /v1
	gw    string // gateway base URL
	key   string // default client key
	token string // management token
	base  string // what clients use: the recording proxy in front of the gateway
	home  string // the gateway user's HOME
	data  string // OMNIROUTE_DATA_DIR
	port  int
	rec   *recorder
	http  *http.Client
}

// newStack starts the fake upstream, the gateway binary on a fresh data dir
// and a free port, and the recording proxy.
func newStack(t *testing.T) *stack {
	t.Helper()
	s := &stack{t: t, up: fakeupstream.New(), http: &http.Client{Timeout: 30 * time.Second}}
	s.upURL = s.up.Start()
	t.Cleanup(s.up.Close)
	t.Cleanup(s.http.CloseIdleConnections)

	dir := t.TempDir()
	port := testproc.FreePort(t)
	s.home, s.data, s.port = dir, filepath.Join(dir, "data"), port
	s.gw = "http://127.0.0.1:" + strconv.Itoa(port)
	var out testproc.Output
	cmd := exec.Command(binPath, "--headless")
	cmd.Env = s.userEnv()
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	deadline := time.Now().Add(startTimeout)
	for {
		text := out.String()
		if b, ok := testproc.ParseBanner(text); ok && b.Key != "" && b.Token != "" {
			s.key, s.token = b.Key, b.Token
			if resp, err := s.http.Get(s.gw + "/api/monitoring/health"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
		}
		select {
		case <-exited:
			t.Fatalf("gateway exited during start-up:\n%s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway not ready within %v:\n%s", startTimeout, out.String())
		}
		time.Sleep(20 * time.Millisecond) // readiness poll
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("gateway output:\n%s", out.String())
		}
	})

	s.rec = &recorder{}
	target, _ := url.Parse(s.gw)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	srv := httptest.NewServer(s.rec.wrap(proxy))
	t.Cleanup(srv.Close)
	s.base = srv.URL
	return s
}

// userEnv is the environment of the user running the gateway: their HOME,
// data directory and port, nothing else of OmniRoute's or of a client's.
func (s *stack) userEnv() []string {
	return append(cleanEnv(), "HOME="+s.home, "OMNIROUTE_DATA_DIR="+s.data,
		"OMNIROUTE_HOST=127.0.0.1", "OMNIROUTE_PORT="+strconv.Itoa(s.port))
}

// addConn creates a connection to the fake upstream: provider is
// "openai-compatible" or "anthropic-compatible"; upstreamKey tells the
// connections apart at the fake.
func (s *stack) addConn(provider, upstreamKey string, priority int, models ...string) {
	s.t.Helper()
	s.addConnData(provider, upstreamKey, priority, nil, models...)
}

// addConnData is addConn with the connection's providerSpecificData.
func (s *stack) addConnData(provider, upstreamKey string, priority int, data map[string]any, models ...string) {
	s.t.Helper()
	conn := map[string]any{"provider": provider, "name": upstreamKey, "apiKey": upstreamKey,
		"baseUrl": s.upURL + "/v1", "priority": priority, "models": models,
		// Without the check a create runs by default: the tests count the
		// fake's requests (backend/server/probeonsave_test.go covers it).
		"verify": false}
	if data != nil {
		conn["providerSpecificData"] = data
	}
	body, _ := json.Marshal(conn)
	req, _ := http.NewRequest(http.MethodPost, s.gw+"/api/providers", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.http.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		b, _ := io.ReadAll(resp.Body)
		s.t.Fatalf("create connection: %d %s", resp.StatusCode, b)
	}
}

// run runs a client executable (relative to clientsDir, or "node") in dir
// with env, bounded by clientTimeout; it returns stdout, stderr and the exit
// code (-1 when it could not run or was killed at the bound).
func run(t *testing.T, dir string, env []string, name string, args ...string) (string, string, int) {
	t.Helper()
	return runWithin(t, clientTimeout, dir, env, name, args...)
}

// runWithin is run with its own bound, for a client whose start-up alone
// takes tens of seconds on a loaded machine (the Kilo Code CLI).
func runWithin(t *testing.T, bound time.Duration, dir string, env []string, name string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	path := name
	if strings.HasPrefix(name, "node_modules/") {
		path = filepath.Join(clientsDir, name)
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = nil // closed: clients must not wait for input
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %q did not finish within %v\nstdout:\n%s\nstderr:\n%s", name, args, bound, stdout.String(), stderr.String())
	}
	code := 0
	if err != nil {
		code = -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			t.Fatalf("run %s: %v", name, err)
		}
	}
	return stdout.String(), stderr.String(), code
}

// recorded is one client request as the client sent it.
type recorded struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// recorder keeps every request passing through the proxy.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
}

func (rc *recorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rc.mu.Lock()
		rc.reqs = append(rc.reqs, recorded{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		rc.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// posts returns the recorded POSTs to path.
func (rc *recorder) posts(path string) []recorded {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []recorded
	for _, r := range rc.reqs {
		if r.Method == http.MethodPost && r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// capture writes the recorded POST bodies to path into $OMNIROUTE_CAPTURE_DIR
// as name-N.json (indented), when that variable is set.
func (rc *recorder) capture(t *testing.T, path, name string) {
	t.Helper()
	dir := os.Getenv("OMNIROUTE_CAPTURE_DIR")
	if dir == "" {
		return
	}
	for i, r := range rc.posts(path) {
		var buf bytes.Buffer
		if err := json.Indent(&buf, r.Body, "", "  "); err != nil {
			t.Fatal(err)
		}
		buf.WriteByte('\n')
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.json", name, i+1)), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
