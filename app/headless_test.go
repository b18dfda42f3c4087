package app

import (
	"strings"
	"testing"
)

func TestPathHint(t *testing.T) {
	cases := []struct {
		exe, path string
		hint      bool
	}{
		{"/home/u/.local/bin/omniroute", "/usr/bin:/home/u/.local/bin", false},
		{"/home/u/.local/bin/omniroute", "/usr/bin:/home/u/.local/bin/", false}, // trailing slash
		{"/home/u/.local/bin/omniroute", "/usr/bin:/bin", true},
		{"/home/u/.local/bin/omniroute", "", true},
		{"/usr/bin/omniroute", "/usr/local/bin:/usr/bin", false},
	}
	for _, c := range cases {
		got := pathHint(c.exe, c.path, "linux")
		if (got != "") != c.hint {
			t.Errorf("pathHint(%q, %q) = %q", c.exe, c.path, got)
		}
		if got != "" && !strings.Contains(got, `export PATH="/home/u/.local/bin:$PATH"`) {
			t.Errorf("hint without the line to add: %q", got)
		}
	}
}

// TestPathHintOnWindows: the hint is a PowerShell line for the user's Path.
func TestPathHintOnWindows(t *testing.T) {
	got := pathHint("/x/Programs/OmniRoute/omniroute.exe", "/usr/bin", "windows")
	if !strings.Contains(got, "[Environment]::SetEnvironmentVariable('Path', [Environment]::GetEnvironmentVariable('Path', 'User') + ';/x/Programs/OmniRoute', 'User')") || strings.Contains(got, "export") {
		t.Errorf("windows hint %q", got)
	}
	if got := pathHint("/x/bin/omniroute.exe", "/X/BIN", "windows"); got != "" {
		t.Errorf("a directory on Path in other case: %q", got)
	}
}
