//go:build unix

package pricing

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestCheckRefusesWhatIsNotARegularFile: a FIFO (whose open would wait for a
// writer for ever) and a directory are refused at once; the check answers
// within the test's deadline.
func TestCheckRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "prices.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, dir} {
		done := make(chan error, 1)
		go func() { _, err := Check(path); done <- err }()
		select {
		case err := <-done:
			if err == nil || err.Error() != "is not a regular file" {
				t.Errorf("%s: %v, want it refused as not a regular file", path, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: Check still waits after 5 s", path)
		}
	}
}
