package e2e

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"omniroute/tests/testproc"
)

// TestWaitForDBStopsOnSIGTERM: an instance waiting for an unreachable
// database (--wait-for-db 10m, nothing listening on the port) exits within
// 2 s of SIGTERM, non-zero, saying it was interrupted while waiting. Before,
// it slept through the signal until the wait ran out.
func TestWaitForDBStopsOnSIGTERM(t *testing.T) {
	closed := testproc.FreePort(t) // free: nothing listens there
	stdout, stderr := newSyncBuffer(), newSyncBuffer()
	cmd := exec.Command(binPath, "--headless", "--wait-for-db", "10m")
	cmd.Env = gatewayEnv(t.TempDir(), testproc.FreePort(t),
		fmt.Sprintf("OMNIROUTE_DATABASE_URL=postgres://u:p@127.0.0.1:%d/db?sslmode=disable", closed))
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	waiting := time.NewTimer(startTimeout)
	defer waiting.Stop()
	for !strings.Contains(stderr.String(), "not reachable yet, retrying") {
		select {
		case <-stderr.changed:
		case <-exited:
			t.Fatalf("exited before waiting for the database\nstderr:\n%s", stderr.String())
		case <-waiting.C:
			t.Fatalf("no retry logged within %v\nstderr:\n%s", startTimeout, stderr.String())
		}
	}
	signalled := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(2 * time.Second):
		t.Fatalf("still waiting 2 s after SIGTERM\nstderr:\n%s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code == 0 || code == -1 {
		t.Fatalf("exit code %d after SIGTERM; want a non-zero exit of its own", code)
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Fatalf("stderr does not say the wait was interrupted:\n%s", stderr.String())
	}
	t.Logf("exited %v after SIGTERM", time.Since(signalled).Round(time.Millisecond))
}
