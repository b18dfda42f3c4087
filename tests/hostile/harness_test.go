//go:build linux

package hostile

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"omniroute/tests/testproc"
)

const startTimeout = 20 * time.Second

// proc is one running `omniroute --headless`.
type proc struct {
	t              *testing.T
	dir, base      string
	key, token     string
	cmd            *exec.Cmd
	stdout, stderr *testproc.Output
	exited         chan struct{}
	client         *http.Client
}

func baseEnv(dir string, port int) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OMNIROUTE_") {
			env = append(env, kv)
		}
	}
	return append(env, "OMNIROUTE_DATA_DIR="+dir, "OMNIROUTE_HOST=127.0.0.1", "OMNIROUTE_PORT="+strconv.Itoa(port))
}

// launch starts the binary without waiting for anything.
func launch(t *testing.T, dir string, port int, args ...string) *proc {
	t.Helper()
	return launchEnv(t, dir, port, nil, args...)
}

// launchEnv is launch with extra environment variables (KEY=value).
func launchEnv(t *testing.T, dir string, port int, extra []string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, dir: dir, base: fmt.Sprintf("http://127.0.0.1:%d", port), stdout: &testproc.Output{}, stderr: &testproc.Output{},
		exited: make(chan struct{})}
	p.cmd = exec.Command(binPath, append([]string{"--headless"}, args...)...)
	p.cmd.Env = append(baseEnv(dir, port), extra...)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	p.cmd.WaitDelay = 5 * time.Second
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(p.kill)
	return p
}

// start launches the gateway on dir and waits for its banner.
func start(t *testing.T, dir string, args ...string) *proc {
	t.Helper()
	return startEnv(t, dir, nil, args...)
}

// startEnv is start with extra environment variables (KEY=value).
func startEnv(t *testing.T, dir string, extra []string, args ...string) *proc {
	t.Helper()
	p := launchEnv(t, dir, testproc.FreePort(t), extra, args...)
	deadline := time.Now().Add(startTimeout)
	for {
		out := p.stdout.String()
		if b, ok := testproc.ParseBanner(out); ok && b.Key != "" && b.Token != "" {
			p.key, p.token = b.Key, b.Token
			break
		}
		if p.hasExited() {
			t.Fatalf("gateway exited at start (code %d)\n%s", p.cmd.ProcessState.ExitCode(), p.logs())
		}
		if time.Now().After(deadline) {
			t.Fatalf("no banner within %v\n%s", startTimeout, p.logs())
		}
		time.Sleep(20 * time.Millisecond) // readiness poll
	}
	p.client = &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64}, Timeout: 60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for {
		if p.healthy() == nil {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("not healthy within %v\n%s", startTimeout, p.logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *proc) logs() string { return p.stdout.String() + p.stderr.String() }

func (p *proc) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

func (p *proc) kill() {
	if !p.hasExited() {
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// stop ends the process gracefully (SIGTERM) and requires exit code 0.
func (p *proc) stop() {
	p.t.Helper()
	p.client.CloseIdleConnections()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		p.kill()
		p.t.Fatalf("no exit within 15 s of SIGTERM\n%s", p.logs())
	}
	if c := p.cmd.ProcessState.ExitCode(); c != 0 {
		p.t.Fatalf("exit code %d after SIGTERM\n%s", c, p.logs())
	}
}

func (p *proc) healthy() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.base+"/api/monitoring/health", nil)
	c := p.client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health %d", resp.StatusCode)
	}
	return nil
}

// mustBeUp fails the test if the process died or stopped answering.
func (p *proc) mustBeUp(when string) {
	p.t.Helper()
	if p.hasExited() {
		p.t.Fatalf("%s: the gateway died (code %d)\n%s", when, p.cmd.ProcessState.ExitCode(), tail(p.logs(), 4000))
	}
	if err := p.healthy(); err != nil {
		p.t.Fatalf("%s: the gateway does not answer health: %v", when, err)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// do sends one request; body is nil, []byte or a JSON-able value.
func (p *proc) do(method, path string, body any, hdr map[string]string) (*http.Response, []byte) {
	p.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			p.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, p.base+path, rd)
	if err != nil {
		p.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		p.t.Fatalf("%s %s: %v\n%s", method, path, err, tail(p.logs(), 4000))
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		p.t.Fatalf("%s %s: read: %v", method, path, err)
	}
	return resp, out
}

func (p *proc) auth() map[string]string { return map[string]string{"Authorization": "Bearer " + p.key} }

// mgmt calls the management API and requires status want.
func (p *proc) mgmt(want int, method, path string, body any) map[string]any {
	p.t.Helper()
	resp, out := p.do(method, path, body, map[string]string{"Authorization": "Bearer " + p.token})
	if resp.StatusCode != want {
		p.t.Fatalf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, want, out)
	}
	var m map[string]any
	if len(out) > 0 {
		if err := json.Unmarshal(out, &m); err != nil {
			p.t.Fatalf("%s %s: not JSON: %s", method, path, out)
		}
	}
	return m
}

func (p *proc) settings(patch map[string]any) {
	p.mgmt(http.StatusOK, http.MethodPatch, "/api/settings", patch)
}

// addConn adds an openai-compatible connection to base with key, serving model,
// without the check a create runs by default (the tests count the upstream's
// requests and set its faults first).
func (p *proc) addConn(name, base, key, model string, priority int) string {
	p.t.Helper()
	m := p.mgmt(http.StatusCreated, http.MethodPost, "/api/providers", map[string]any{
		"provider": "openai-compatible", "name": name, "authType": "apikey", "apiKey": key,
		"baseUrl": base + "/v1", "priority": priority, "models": []string{model}, "verify": false})
	c, _ := m["connection"].(map[string]any)
	id, _ := c["id"].(string)
	if id == "" {
		p.t.Fatalf("no connection id in %v", m)
	}
	return id
}

func chat(model string, stream bool) map[string]any {
	return map[string]any{"model": model, "stream": stream, "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
}

// memKB reads VmRSS and VmHWM (peak RSS) of the process, in KiB.
func (p *proc) memKB() (rss, hwm int64) {
	p.t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		p.t.Fatalf("read /proc status: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = n
		case "VmHWM:":
			hwm = n
		}
	}
	return rss, hwm
}

// fds counts the process's open file descriptors.
func (p *proc) fds() int {
	es, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.cmd.Process.Pid))
	if err != nil {
		p.t.Fatalf("read fds: %v", err)
	}
	return len(es)
}

// memBound asserts the peak RSS grew less than limitMiB over idle.
func (p *proc) memBound(idleKB int64, limitMiB int64, what string) {
	p.t.Helper()
	_, hwm := p.memKB()
	grew := (hwm - idleKB) / 1024
	p.t.Logf("%s: peak RSS %d MiB, %d MiB over idle", what, hwm/1024, grew)
	if grew >= limitMiB {
		p.t.Errorf("%s: peak RSS grew %d MiB over idle, want < %d MiB", what, grew, limitMiB)
	}
}

// envelope is the one error shape.
type envelope struct {
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    string `json:"code"`
		Param   string `json:"param"`
	} `json:"error"`
}

// checkEnvelope asserts status and the JSON error envelope (code "" = any).
func checkEnvelope(t *testing.T, what string, status int, ct string, body []byte, wantStatus int, wantCode string) {
	t.Helper()
	if status != wantStatus {
		t.Errorf("%s: status %d, want %d: %.300s", what, status, wantStatus, body)
	}
	if !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s: Content-Type %q, want application/json: %.200s", what, ct, body)
	}
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil || env.Error == nil || env.Error.Code == "" || env.Error.Message == "" {
		t.Errorf("%s: not the error envelope: %.300s", what, body)
		return
	}
	if wantCode != "" && env.Error.Code != wantCode {
		t.Errorf("%s: code %q, want %q: %.300s", what, env.Error.Code, wantCode, body)
	}
}

// rawExchange sends raw bytes on a new connection and reads the answer until
// the server closes or timeout passes.
func rawExchange(t *testing.T, base string, req []byte, timeout time.Duration) (*http.Response, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write(req); err != nil {
		t.Fatalf("write: %v", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}
