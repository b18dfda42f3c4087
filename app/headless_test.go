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
		got := pathHint(c.exe, c.path)
		if (got != "") != c.hint {
			t.Errorf("pathHint(%q, %q) = %q", c.exe, c.path, got)
		}
		if got != "" && !strings.Contains(got, `export PATH="/home/u/.local/bin:$PATH"`) {
			t.Errorf("hint without the line to add: %q", got)
		}
	}
}
