package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"omniroute/backend/providers/registry"
)

// TestBashCompletionAsksTheBinary: the installed bash completion offers,
// after login and import, exactly the sign-in commands and import sources
// of the built binary's catalogue (it asks `omniroute __complete`), so a
// provider module that adds either is offered without editing the script.
func TestBashCompletionAsksTheBinary(t *testing.T) {
	t.Parallel()
	cat := registry.Catalog(nil)
	var logins []string
	for _, p := range cat.LoginProviders() {
		logins = append(logins, p.LoginFlow().Command)
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "build", "linux", "completions", "omniroute.bash"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		word string
		want []string
	}{
		{"login", logins},
		{"import", cat.ImportSources()},
	} {
		cmd := exec.Command("bash", "--norc", "--noprofile", "-c",
			`source "$1"; COMP_WORDS=("$2" "$3" ""); COMP_CWORD=2; _omniroute; printf '%s\n' "${COMPREPLY[@]}"`,
			"bash", script, binPath, c.word)
		cmd.Env = baseEnv()
		out, err := cmd.CombinedOutput()
		if got := strings.Fields(string(out)); err != nil || len(c.want) == 0 || strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("omniroute %s <TAB>: %q (%v), want %q", c.word, got, err, c.want)
		}
	}
}
