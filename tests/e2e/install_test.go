package e2e

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallPutsTheCLIOnPath is the first command after `make run`
// (`omniroute token`) in the same terminal, on a fresh home: install.sh
// (what `make install` and the tarball run) without --prefix puts omniroute
// in a directory the shell already searches, so `omniroute --version`
// resolves with the PATH the user had before installing; when no candidate
// is on PATH its last line is the export to paste, and pasting it works.
// --uninstall without --prefix finds and removes what it installed.
func TestInstallPutsTheCLIOnPath(t *testing.T) {
	payload := stagePayload(t)
	for _, c := range []struct {
		name    string
		path    string // PATH before installing; HOME stands for the fake home
		mkdirs  []string
		args    []string
		wantBin string // where omniroute lands, under HOME
		paste   bool   // the last line is the export to paste
	}{
		{name: "~/.local/bin on PATH, not made yet", path: "HOME/.local/bin:/usr/bin:/bin", wantBin: ".local/bin/omniroute"},
		{name: "~/bin on PATH", path: "HOME/bin:/usr/bin:/bin", mkdirs: []string{"bin"}, wantBin: "bin/omniroute"},
		{name: "~/.local/bin preferred over ~/bin", path: "HOME/bin:HOME/.local/bin:/usr/bin:/bin", mkdirs: []string{"bin"}, wantBin: ".local/bin/omniroute"},
		{name: "nothing of ours on PATH", path: "/usr/bin:/bin", args: []string{"--prefix", "HOME/.local"}, wantBin: ".local/bin/omniroute", paste: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			for _, d := range c.mkdirs {
				if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			path := strings.ReplaceAll(c.path, "HOME", home)
			env := []string{"HOME=" + home, "PATH=" + path}
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = strings.ReplaceAll(a, "HOME", home)
			}
			out := runSh(t, env, filepath.Join(payload, "install.sh"), args...)
			if _, err := os.Stat(filepath.Join(home, c.wantBin)); err != nil {
				t.Fatalf("omniroute not at ~/%s: %v\ninstall.sh said:\n%s", c.wantBin, err, out)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			last := lines[len(lines)-1]
			shell := "command -v omniroute && omniroute --version"
			if c.paste {
				if !strings.HasPrefix(last, "export PATH=") || !strings.Contains(out, "is not on your PATH") {
					t.Fatalf("no line to paste at the end:\n%s", out)
				}
				shell = last + "; " + shell
			} else if strings.Contains(out, "not on your PATH") {
				t.Errorf("install.sh says the CLI is not on PATH:\n%s", out)
			}
			got := runSh(t, env, "/bin/sh", "-c", shell)
			if !strings.HasPrefix(got, filepath.Join(home, c.wantBin)+"\n") || !strings.Contains(got, "omniroute ") {
				t.Fatalf("in the same shell: %q\ninstall.sh said:\n%s", got, out)
			}

			runSh(t, env, filepath.Join(payload, "install.sh"), append([]string{"--uninstall"}, args...)...)
			if _, err := os.Stat(filepath.Join(home, c.wantBin)); !os.IsNotExist(err) {
				t.Errorf("--uninstall left ~/%s: %v", c.wantBin, err)
			}
		})
	}
}

// stagePayload lays out what install.sh installs from, as build/package.sh
// stage does: bin/omniroute (the built gateway), share/omniroute/VERSION and
// the script itself.
func stagePayload(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	copyFile(t, binPath, filepath.Join(dir, "bin", "omniroute"), 0o755)
	copyFile(t, filepath.Join(moduleRoot, "VERSION"), filepath.Join(dir, "share", "omniroute", "VERSION"), 0o644)
	copyFile(t, filepath.Join(moduleRoot, "build", "linux", "install.sh"), filepath.Join(dir, "install.sh"), 0o755)
	return dir
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// runSh runs name with exactly env and returns its combined output, failing
// the test on a non-zero exit.
func runSh(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Dir = t.TempDir()
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", name, args, err, b)
	}
	return string(b)
}
