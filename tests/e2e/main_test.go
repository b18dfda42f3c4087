package e2e

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"omniroute/tests/testproc"

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
	root, err := testproc.ModuleRoot()
	if err != nil {
		return err
	}
	moduleRoot = root

	if b, err := os.ReadFile(filepath.Join(moduleRoot, "frontend", "dist", "index.html")); err == nil {
		dashboardBuilt, dashboardIndex = true, b
	}

	start := time.Now()
	if binPath, err = testproc.BuildGateway(dir); err != nil {
		return err
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
