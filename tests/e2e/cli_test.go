package e2e

import (
	"strings"
	"testing"
)

// TestCLI: the command line behaves as a user expects: help and version work,
// mistakes exit non-zero with a message that says what is wrong.
func TestCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := gatewayEnv(dir, 0) // port 0 is never used by these commands
	cases := []struct {
		name      string
		env       []string
		args      []string
		wantZero  bool
		stdoutHas []string
		stderrHas []string
	}{
		{"--help", env, []string{"--help"}, true, []string{"--headless", "token", "OMNIROUTE_PORT", "OMNIROUTE_DATA_DIR"}, nil},
		{"-h", env, []string{"-h"}, true, []string{"--headless", "token"}, nil},
		{"help", env, []string{"help"}, true, []string{"--headless", "token"}, nil},
		{"--version", env, []string{"--version"}, true, []string{"omniroute"}, nil},
		{"unknown command", env, []string{"frobnicate"}, false, nil, []string{"unknown command", "frobnicate"}},
		{"unknown command with --headless", env, []string{"--headless", "frobnicate"}, false, nil, []string{"unknown command"}},
		{"OMNIROUTE_PORT=abc", append(baseEnv(), "OMNIROUTE_DATA_DIR="+dir, "OMNIROUTE_PORT=abc"), []string{"--headless"}, false, nil, []string{"OMNIROUTE_PORT", "abc"}},
		{"OMNIROUTE_PORT=70000", append(baseEnv(), "OMNIROUTE_DATA_DIR="+dir, "OMNIROUTE_PORT=70000"), []string{"--headless"}, false, nil, []string{"OMNIROUTE_PORT", "70000"}},
		{"OMNIROUTE_PORT=abc token", append(baseEnv(), "OMNIROUTE_DATA_DIR="+dir, "OMNIROUTE_PORT=abc"), []string{"token"}, false, nil, []string{"OMNIROUTE_PORT"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, c.env, c.args...)
			if c.wantZero != (code == 0) {
				t.Errorf("omniroute %s: exit code %d (want zero: %v)\nstdout:\n%s\nstderr:\n%s", strings.Join(c.args, " "), code, c.wantZero, out, errOut)
			}
			for _, s := range c.stdoutHas {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			for _, s := range c.stderrHas {
				if !strings.Contains(errOut, s) {
					t.Errorf("stderr lacks %q:\n%s", s, errOut)
				}
			}
			if !c.wantZero && strings.Contains(out+errOut, "running") {
				t.Errorf("a rejected invocation started the gateway:\n%s%s", out, errOut)
			}
		})
	}

	// `omniroute token` on a fresh data dir creates the token once and then
	// keeps printing the same one.
	fresh := t.TempDir()
	first, errOut, code := runCLI(t, gatewayEnv(fresh, 0), "token")
	first = strings.TrimSpace(first)
	if code != 0 || !strings.HasPrefix(first, "omt_") {
		t.Fatalf("omniroute token on a fresh dir: code %d, %q (stderr %q)", code, first, errOut)
	}
	if again, _, _ := runCLI(t, gatewayEnv(fresh, 0), "token"); strings.TrimSpace(again) != first {
		t.Errorf("omniroute token changed between calls: %q then %q", first, strings.TrimSpace(again))
	}
	// And a gateway started on that dir uses it.
	g := startGateway(t, fresh, 0)
	if g.token != first {
		t.Errorf("gateway banner token %q, want the one `omniroute token` printed: %q", g.token, first)
	}
	g.stop()
}
