// Package testproc holds what the out-of-process test suites (tests/e2e,
// tests/hostile, tests/clients, tests/pgtest) need to run the real gateway
// binary: building it once, picking a free loopback port, collecting a
// process's output and reading the start-up banner.
package testproc

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// ModuleRoot is the directory holding go.mod.
func ModuleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not inside a Go module (go env GOMOD = %q)", gomod)
	}
	return filepath.Dir(gomod), nil
}

// EnvBin names a prebuilt headless gateway (make build's bin/omniroute) the
// suites use instead of building their own: make test builds it once and
// sets it for every suite (the dashboard's browser tests read it too).
const EnvBin = "OMNIROUTE_BIN"

// BuildGateway compiles the headless gateway the way a user builds it
// (CGO_ENABLED=0, from the module root) into dir and returns its path; with
// OMNIROUTE_BIN set it copies that binary into dir instead.
func BuildGateway(dir string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "omniroute")
	if pre := os.Getenv(EnvBin); pre != "" {
		if !filepath.IsAbs(pre) {
			pre = filepath.Join(root, pre)
		}
		return bin, copyExecutable(pre, bin)
	}
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build -o %s . (in %s, CGO_ENABLED=0): %v\n%s", bin, root, err, out)
	}
	return bin, nil
}

// copyExecutable copies the prebuilt binary src to dst (mode 0755).
func copyExecutable(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("%s=%s: %w (run make build, or unset it to build the gateway here)", EnvBin, src, err)
	}
	return os.WriteFile(dst, b, 0o755)
}

// PickPort asks the kernel for an unused loopback port.
func PickPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	return port, l.Close()
}

// FreePort is PickPort for a test: a failure ends the test.
func FreePort(t testing.TB) int {
	t.Helper()
	port, err := PickPort()
	if err != nil {
		t.Fatalf("pick a free port: %v", err)
	}
	return port
}

// Output collects a process's output safely while a test reads it.
type Output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// Banner is what the gateway prints on start: where it listens, the default
// client key and the dashboard link with the management token.
type Banner struct {
	Endpoint, Key, Dashboard, Token string
}

var (
	endpointLine  = regexp.MustCompile(`(?m)^\s*Endpoint:\s+(\S+)\r?\n`)
	keyLine       = regexp.MustCompile(`(?m)^\s*API key:\s+(\S+)\r?\n`)
	dashboardLine = regexp.MustCompile(`(?m)^\s*Dashboard:\s+(\S+)\r?\n`)
)

// ParseBanner reads the banner from a process's output; ok is false until
// the dashboard line (the banner's last needed line) is complete.
func ParseBanner(out string) (b Banner, ok bool) {
	d := dashboardLine.FindStringSubmatch(out)
	if d == nil {
		return b, false
	}
	b.Dashboard = d[1]
	if _, tok, found := strings.Cut(d[1], "#token="); found {
		b.Token = tok
	}
	if e := endpointLine.FindStringSubmatch(out); e != nil {
		b.Endpoint = e[1]
	}
	if k := keyLine.FindStringSubmatch(out); k != nil {
		b.Key = k[1]
	}
	return b, true
}
