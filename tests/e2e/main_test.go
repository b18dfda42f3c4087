package e2e

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

var (
	// binPath is the gateway binary built once by TestMain.
	binPath string
	// moduleRoot is the directory holding go.mod.
	moduleRoot string
	// dashboardBuilt reports whether frontend/dist/index.html existed when the
	// binary was built (it is embedded, so the dashboard serves it).
	dashboardBuilt bool
	// dashboardIndex is that file's content; nil if it changed during the
	// build (someone rebuilt the frontend concurrently), so only its shape
	// can be checked.
	dashboardIndex []byte
)

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "omniroute-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: temp dir:", err)
		os.Exit(1)
	}
	if err := build(dir); err != nil {
		_ = os.RemoveAll(dir)
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { _ = os.RemoveAll(dir) }))
}

// build compiles the headless gateway the way a user builds it.
func build(dir string) error {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("go tool not found: %w", err)
	}
	out, err := exec.Command(goTool, "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return fmt.Errorf("not inside a Go module (go env GOMOD = %q)", gomod)
	}
	moduleRoot = filepath.Dir(gomod)

	if b, err := os.ReadFile(filepath.Join(moduleRoot, "frontend", "dist", "index.html")); err == nil {
		dashboardBuilt, dashboardIndex = true, b
	}

	binPath = filepath.Join(dir, "omniroute")
	start := time.Now()
	cmd := exec.Command(goTool, "build", "-o", binPath, ".")
	cmd.Dir = moduleRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build -o %s . (in %s, CGO_ENABLED=0): %v\n%s", binPath, moduleRoot, err, stderr.String())
	}
	if dashboardBuilt {
		if after, err := os.ReadFile(filepath.Join(moduleRoot, "frontend", "dist", "index.html")); err != nil || !bytes.Equal(after, dashboardIndex) {
			dashboardIndex = nil
		}
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "e2e: built %s in %v (dashboard built: %v)\n", binPath, time.Since(start).Round(time.Millisecond), dashboardBuilt)
	}
	return nil
}
