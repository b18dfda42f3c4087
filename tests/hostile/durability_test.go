//go:build linux

package hostile

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"omniroute/tests/testproc"
)

// runOnce runs the binary on dir until it exits (or 15 s pass) and returns
// its output and exit code.
func runOnce(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, append([]string{"--headless"}, args...)...)
	cmd.Env = baseEnv(dir, testproc.FreePort(t))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("the binary did not exit within 15 s (it should have refused to start):\n%s", out.String())
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

// snapshot is every file of dir (not the lock file) with its bytes.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.IsDir() || e.Name() == "omniroute.lock" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func sameFiles(t *testing.T, what string, before, after map[string][]byte) {
	t.Helper()
	for n, b := range before {
		if a, ok := after[n]; !ok || !bytes.Equal(a, b) {
			t.Errorf("%s: %s changed or vanished", what, n)
		}
	}
	for n := range after {
		if _, ok := before[n]; !ok {
			t.Errorf("%s: %s was created", what, n)
		}
	}
}

// configured starts a gateway on a fresh dir, adds an encrypted connection,
// stops it, and returns the dir.
func configured(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	p := start(t, dir)
	p.addConn("work", "http://127.0.0.1:9", "sk-durable-0123456789", "m", 1)
	p.stop()
	return dir
}

func TestSecondInstanceIsRefusedBeforeTouchingTheDatabase(t *testing.T) {
	dir := configured(t)
	p := start(t, dir)
	out, code := runOnce(t, dir)
	if code == 0 {
		t.Fatalf("a second instance on the same data dir exited 0:\n%s", out)
	}
	if !strings.Contains(out, "in use") || !strings.Contains(out, "PID "+strconv.Itoa(p.cmd.Process.Pid)) {
		t.Fatalf("the refusal does not name the holder (PID %d):\n%s", p.cmd.Process.Pid, out)
	}
	p.mustBeUp("the first instance after the second was refused")
	p.stop()
	// The lock dies with the holder: a restart works.
	start(t, dir).stop()
}

func TestLostDatabaseIsRefusedNotRecreated(t *testing.T) {
	for _, tc := range []struct {
		name string
		lose func(db string)
	}{
		{"0-byte", func(db string) { _ = os.WriteFile(db, nil, 0o600) }},
		{"missing", func(db string) { _ = os.Remove(db) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := configured(t)
			db := filepath.Join(dir, "omniroute.db")
			tc.lose(db)
			_ = os.Remove(db + "-wal")
			_ = os.Remove(db + "-shm")
			before := snapshot(t, dir)
			out, code := runOnce(t, dir)
			if code == 0 || !strings.Contains(out, "secret.key") || !strings.Contains(out, "--reset") {
				t.Fatalf("exit %d; want a refusal naming secret.key and --reset:\n%s", code, out)
			}
			sameFiles(t, "after the refusal", before, snapshot(t, dir))

			// --reset starts fresh and keeps the old files aside.
			p := start(t, dir, "--reset")
			p.stop()
			matches, _ := filepath.Glob(filepath.Join(dir, "reset-*", "secret.key"))
			if len(matches) != 1 {
				t.Fatalf("--reset did not move secret.key aside: %v", matches)
			}
			if kept, _ := os.ReadFile(matches[0]); !bytes.Equal(kept, before["secret.key"]) {
				t.Fatal("the key moved aside is not the old key")
			}
		})
	}
}

func TestMissingKeyWithEncryptedRowsIsRefused(t *testing.T) {
	dir := configured(t)
	if err := os.Remove(filepath.Join(dir, "secret.key")); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	out, code := runOnce(t, dir)
	if code == 0 || !strings.Contains(out, "secret.key is missing") {
		t.Fatalf("exit %d; want a refusal that names the missing secret.key:\n%s", code, out)
	}
	if !strings.Contains(out, "encrypted") {
		t.Fatalf("the refusal does not say encrypted data would be stranded:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "secret.key")); err == nil {
		t.Fatal("a new secret.key was written")
	}
	after := snapshot(t, dir)
	if !bytes.Equal(before["omniroute.db"], after["omniroute.db"]) {
		t.Error("the database changed")
	}
}

func TestPermissionsAreTightenedAtStart(t *testing.T) {
	dir := configured(t)
	_ = os.Chmod(dir, 0o755)
	for _, n := range []string{"omniroute.db", "secret.key", "management.token"} {
		_ = os.Chmod(filepath.Join(dir, n), 0o644)
	}
	p := start(t, dir)
	check := func(path string, want os.FileMode) {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s: mode %o, want %o", path, st.Mode().Perm(), want)
		}
	}
	check(dir, 0o700)
	for _, n := range []string{"omniroute.db", "omniroute.db-wal", "omniroute.db-shm", "secret.key", "management.token", "omniroute.lock"} {
		check(filepath.Join(dir, n), 0o600)
	}
	p.stop()
}
