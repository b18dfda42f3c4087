package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"omniroute/tests/testproc"
)

const (
	startTimeout = 15 * time.Second // binary start → banner and healthy
	stopTimeout  = 10 * time.Second // SIGTERM → exit
	cliTimeout   = 60 * time.Second // one-shot CLI commands: a hang guard (a restore derives its key at the full argon2id cost; at load 30 on 2 cores that took over 10 s)
)

// syncBuffer is an io.Writer safe for the exec copy goroutine and the test,
// signalling every write so readers can wait for output without sleeping.
type syncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{changed: make(chan struct{}, 1)} }

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	n, err := b.buf.Write(p)
	b.mu.Unlock()
	select {
	case b.changed <- struct{}{}:
	default:
	}
	return n, err
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// gatewayProc is one running `omniroute --headless` process.
type gatewayProc struct {
	t      *testing.T
	dir    string // OMNIROUTE_DATA_DIR
	port   int
	base   string // http://127.0.0.1:PORT
	key    string // default client key from the banner
	token  string // management token from the banner
	cmd    *exec.Cmd
	stdout *syncBuffer
	stderr *syncBuffer
	exited chan struct{} // closed once cmd.Wait returned
	client *http.Client
}

// baseEnv is the test process's environment without any OMNIROUTE_* variable,
// so a developer's own settings never leak into the binary under test.
func baseEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OMNIROUTE_") {
			out = append(out, kv)
		}
	}
	return out
}

// gatewayEnv is the environment a user would set to run the gateway on dir and port.
func gatewayEnv(dir string, port int, extra ...string) []string {
	env := append(baseEnv(), "OMNIROUTE_DATA_DIR="+dir, "OMNIROUTE_HOST=127.0.0.1", "OMNIROUTE_PORT="+strconv.Itoa(port))
	return append(env, extra...)
}

// startGateway starts `omniroute --headless` on dir. port 0 picks a free port
// (retrying with another one if a parallel test raced us to it); a non-zero
// port is used as is (a restart on the same address). The process is killed
// at cleanup if the test did not stop it.
func startGateway(t *testing.T, dir string, port int, extraEnv ...string) *gatewayProc {
	t.Helper()
	if port != 0 {
		g, err := tryStart(t, dir, port, extraEnv...)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	var lastErr error
	for range 3 {
		g, err := tryStart(t, dir, testproc.FreePort(t), extraEnv...)
		if err == nil {
			return g
		}
		lastErr = err
		if !strings.Contains(err.Error(), "listen on") {
			break
		}
	}
	t.Fatal(lastErr)
	return nil
}

var ()

func tryStart(t *testing.T, dir string, port int, extraEnv ...string) (*gatewayProc, error) {
	t.Helper()
	return tryStartArgs(t, dir, port, []string{"--headless"}, extraEnv...)
}

// tryStartArgs is tryStart with the binary's arguments.
func tryStartArgs(t *testing.T, dir string, port int, args []string, extraEnv ...string) (*gatewayProc, error) {
	t.Helper()
	g := &gatewayProc{t: t, dir: dir, port: port, base: fmt.Sprintf("http://127.0.0.1:%d", port),
		stdout: newSyncBuffer(), stderr: newSyncBuffer(), exited: make(chan struct{})}
	g.cmd = exec.Command(binPath, args...)
	g.cmd.Env = gatewayEnv(dir, port, extraEnv...)
	g.cmd.Stdout, g.cmd.Stderr = g.stdout, g.stderr
	g.cmd.WaitDelay = 5 * time.Second
	if err := g.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s --headless: %w", binPath, err)
	}
	go func() {
		_ = g.cmd.Wait()
		close(g.exited)
	}()
	t.Cleanup(g.kill)

	deadline := time.NewTimer(startTimeout)
	defer deadline.Stop()
	// 1. The banner tells the user where the gateway is and how to use it.
	var endpoint, dashboard string
	for {
		out := g.stdout.String()
		if b, ok := testproc.ParseBanner(out); ok {
			dashboard, endpoint, g.key = b.Dashboard, b.Endpoint, b.Key
			break
		}
		select {
		case <-g.stdout.changed:
		case <-g.exited:
			return nil, fmt.Errorf("gateway exited before printing its banner (code %d)\nstdout:\n%s\nstderr:\n%s",
				g.cmd.ProcessState.ExitCode(), g.stdout.String(), g.stderr.String())
		case <-deadline.C:
			g.kill()
			return nil, fmt.Errorf("no startup banner within %v\nstdout:\n%s\nstderr:\n%s", startTimeout, g.stdout.String(), g.stderr.String())
		}
	}
	if want := g.base + "/v1"; endpoint != want {
		t.Errorf("banner Endpoint = %q, want %q\nstdout:\n%s", endpoint, want, g.stdout.String())
	}
	if !strings.HasPrefix(g.key, "sk-omni-") || len(g.key) < len("sk-omni-")+16 {
		t.Errorf("banner API key = %q, want an sk-omni-… key\nstdout:\n%s", g.key, g.stdout.String())
	}
	wantDash := g.base + "/dashboard/#token="
	if !strings.HasPrefix(dashboard, wantDash) {
		t.Errorf("banner Dashboard = %q, want %s<token>", dashboard, wantDash)
	}
	g.token = strings.TrimPrefix(dashboard, wantDash)
	if !strings.HasPrefix(g.token, "omt_") || len(g.token) < len("omt_")+16 {
		t.Errorf("management token from the banner = %q, want omt_…", g.token)
	}

	g.client = &http.Client{
		Transport: &http.Transport{Proxy: nil, DisableCompression: true, MaxIdleConnsPerHost: 8},
		Timeout:   30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // tests look at redirects themselves
		},
	}
	t.Cleanup(g.client.CloseIdleConnections)

	// 2. It is ready once the anonymous health check answers.
	for {
		if err := g.healthy(); err == nil {
			return g, nil
		} else if g.hasExited() {
			return nil, fmt.Errorf("gateway exited during start-up: %v\nstderr:\n%s", err, g.stderr.String())
		}
		select {
		case <-g.exited:
		case <-deadline.C:
			return nil, fmt.Errorf("GET /api/monitoring/health not OK within %v\nstderr:\n%s", startTimeout, g.stderr.String())
		case <-time.After(20 * time.Millisecond): // readiness poll, not a timing assertion
		}
	}
}

func (g *gatewayProc) healthy() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, g.base+"/api/monitoring/health", nil)
	resp, err := g.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var h struct {
		Status string `json:"status"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || h.Status == "" {
		return fmt.Errorf("health: %d %q", resp.StatusCode, h.Status)
	}
	return nil
}

func (g *gatewayProc) hasExited() bool {
	select {
	case <-g.exited:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM as a service manager or Ctrl-C would and requires a
// graceful exit (code 0) within stopTimeout.
func (g *gatewayProc) stop() {
	g.t.Helper()
	if g.hasExited() {
		g.t.Fatalf("gateway had already exited (code %d) before stop\nstderr:\n%s", g.cmd.ProcessState.ExitCode(), g.stderr.String())
	}
	if g.client != nil {
		g.client.CloseIdleConnections()
	}
	if err := g.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		g.t.Fatalf("SIGTERM: %v", err)
	}
	select {
	case <-g.exited:
	case <-time.After(stopTimeout):
		g.kill()
		g.t.Fatalf("gateway did not exit within %v of SIGTERM\nstderr:\n%s", stopTimeout, g.stderr.String())
	}
	if code := g.cmd.ProcessState.ExitCode(); code != 0 {
		g.t.Fatalf("gateway exited with code %d after SIGTERM, want 0 (graceful)\nstderr:\n%s", code, g.stderr.String())
	}
}

// kill ends a process the test did not stop (cleanup after a failure).
func (g *gatewayProc) kill() {
	if g.hasExited() {
		return
	}
	_ = g.cmd.Process.Kill()
	<-g.exited
}

// logs is everything the process printed.
func (g *gatewayProc) logs() string { return g.stdout.String() + g.stderr.String() }

// rawBody sends a body as is; chunked hides its length (Transfer-Encoding: chunked).
type rawBody struct {
	data    []byte
	chunked bool
}

// do sends one request. body is nil, a string or []byte (sent as is), a
// rawBody, or any value (sent as JSON). hdr "Host" sets the Host header.
func (g *gatewayProc) do(method, path string, body any, hdr map[string]string) (*http.Response, []byte) {
	g.t.Helper()
	var rd io.Reader
	length := int64(-1)
	switch b := body.(type) {
	case nil:
	case string:
		rd, length = strings.NewReader(b), int64(len(b))
	case []byte:
		rd, length = bytes.NewReader(b), int64(len(b))
	case rawBody:
		rd = bytes.NewReader(b.data)
		if !b.chunked {
			length = int64(len(b.data))
		} else {
			rd = io.MultiReader(rd) // hides the length from net/http
		}
	default:
		j, err := json.Marshal(b)
		if err != nil {
			g.t.Fatal(err)
		}
		rd, length = bytes.NewReader(j), int64(len(j))
	}
	req, err := http.NewRequest(method, g.base+path, rd)
	if err != nil {
		g.t.Fatal(err)
	}
	if rd != nil {
		req.ContentLength = length
		if length < 0 {
			req.ContentLength = -1
		}
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := g.client.Do(req)
	if err != nil {
		g.t.Fatalf("%s %s: %v\ngateway stderr:\n%s", method, path, err, g.stderr.String())
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		g.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return resp, out
}

// mgmt calls the management API with the token and decodes the JSON answer.
func (g *gatewayProc) mgmt(method, path string, body any) (int, map[string]any) {
	g.t.Helper()
	resp, out := g.do(method, path, body, map[string]string{"Authorization": "Bearer " + g.token})
	var m map[string]any
	if len(out) > 0 {
		if err := json.Unmarshal(out, &m); err != nil {
			g.t.Fatalf("%s %s: status %d, body is not JSON: %v\n%s", method, path, resp.StatusCode, err, out)
		}
	}
	return resp.StatusCode, m
}

// mustMgmt is mgmt that requires a status.
func (g *gatewayProc) mustMgmt(want int, method, path string, body any) map[string]any {
	g.t.Helper()
	code, m := g.mgmt(method, path, body)
	if code != want {
		g.t.Fatalf("%s %s: status %d, want %d: %v", method, path, code, want, m)
	}
	return m
}

// addConn creates an openai-compatible connection to the fake upstream and
// returns its id, without the check a create runs by default (routing tests
// count the fake's requests and set its faults first; issue42_probe_test.go
// covers the check).
func (g *gatewayProc) addConn(name, upstreamBaseURL, upstreamKey string, priority int) string {
	g.t.Helper()
	m := g.mustMgmt(http.StatusCreated, http.MethodPost, "/api/providers", map[string]any{
		"provider": "openai-compatible", "name": name, "authType": "apikey", "apiKey": upstreamKey,
		"baseUrl": upstreamBaseURL + "/v1", "priority": priority, "models": []string{"gpt-4o-mini"}, "verify": false,
	})
	conn, _ := m["connection"].(map[string]any)
	id, _ := conn["id"].(string)
	if id == "" {
		g.t.Fatalf("create connection: no connection.id in %v", m)
	}
	return id
}

// chatBody is a minimal OpenAI chat request.
func chatBody(model string, stream bool) map[string]any {
	return map[string]any{"model": model, "stream": stream,
		"messages": []any{map[string]any{"role": "user", "content": "hi"}}}
}

// chat sends a chat completion with client key key.
func (g *gatewayProc) chat(key, model string, stream bool) (*http.Response, []byte) {
	g.t.Helper()
	return g.do(http.MethodPost, "/v1/chat/completions", chatBody(model, stream), map[string]string{"Authorization": "Bearer " + key})
}

// runCLI runs the binary once with args and env and returns its output and exit code.
func runCLI(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env = env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("omniroute %s did not finish within %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), cliTimeout, o.String(), e.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("omniroute %s: %v", strings.Join(args, " "), err)
	}
	return o.String(), e.String(), cmd.ProcessState.ExitCode()
}

// envelope is the one error shape: {"error":{"message","type","code"}}.
type envelope struct {
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    string `json:"code"`
		Param   string `json:"param"`
		// OmnirouteCode is the gateway's code when "code" is an upstream's
		// own, relayed (docs/API.md, Envelope).
		OmnirouteCode string `json:"omniroute_code"`
	} `json:"error"`
}

var errorTypes = map[string]bool{"invalid_request_error": true, "authentication_error": true, "permission_error": true,
	"not_found_error": true, "rate_limit_error": true, "lease_error": true, "upstream_error": true, "server_error": true}

// checkError asserts status and the envelope; wantCode "" accepts any non-empty code.
func checkError(t *testing.T, what string, resp *http.Response, body []byte, wantStatus int, wantCode string) {
	t.Helper()
	if resp.StatusCode >= 500 {
		t.Errorf("%s: got %d (a server error) for bad input: %s", what, resp.StatusCode, body)
		return
	}
	if resp.StatusCode != wantStatus {
		t.Errorf("%s: status %d, want %d: %s", what, resp.StatusCode, wantStatus, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s: Content-Type %q, want application/json", what, ct)
	}
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil || env.Error == nil {
		t.Errorf("%s: body is not the error envelope (%v): %s", what, err, body)
		return
	}
	e := env.Error
	switch {
	case wantCode != "" && e.Code != wantCode:
		t.Errorf("%s: error.code %q, want %q: %s", what, e.Code, wantCode, body)
	case e.OmnirouteCode != "" && strings.ToUpper(e.OmnirouteCode) != e.OmnirouteCode:
		t.Errorf("%s: error.omniroute_code %q is not an UPPER_SNAKE identifier: %s", what, e.OmnirouteCode, body)
	case e.OmnirouteCode == "" && (e.Code == "" || strings.ToUpper(e.Code) != e.Code):
		t.Errorf("%s: error.code %q is not an UPPER_SNAKE identifier: %s", what, e.Code, body)
	}
	if strings.TrimSpace(e.Message) == "" {
		t.Errorf("%s: error.message is empty: %s", what, body)
	}
	if !errorTypes[e.Type] {
		t.Errorf("%s: error.type %q is not one of the documented types: %s", what, e.Type, body)
	}
}
