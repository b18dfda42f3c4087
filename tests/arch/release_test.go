package arch

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readRepo reads a file by its path from the repository root.
func readRepo(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestOneVersionEverywhere: the VERSION file is the version the binaries,
// wails.json, the README's banner, the AppStream release and the man page show.
func TestOneVersionEverywhere(t *testing.T) {
	v := strings.TrimSpace(readRepo(t, "VERSION"))
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(v) {
		t.Fatalf("VERSION %q is not MAJOR.MINOR.PATCH", v)
	}
	var wails struct {
		Info struct {
			ProductVersion string `json:"productVersion"`
		} `json:"info"`
	}
	if err := json.Unmarshal([]byte(readRepo(t, "wails.json")), &wails); err != nil || wails.Info.ProductVersion != v {
		t.Errorf("wails.json productVersion %q, VERSION %q (%v)", wails.Info.ProductVersion, v, err)
	}
	for file, want := range map[string]string{
		"README.md":                          "OmniRoute " + v + " is running",
		"build/linux/omniroute.metainfo.xml": `<release version="` + v + `"`,
		"build/linux/omniroute.1":            `"OmniRoute ` + v + `"`,
	} {
		if !strings.Contains(readRepo(t, file), want) {
			t.Errorf("%s does not say %q", file, want)
		}
	}
}

// TestCompletionsAskTheBinary: the three shell completions take the
// agents, import sources and login providers from the binary (`omniroute
// __complete agents|import|login`, which prints the catalogue's), so a
// provider module's sign-in or import is offered without editing them;
// none spells one of today's words in place of asking.
func TestCompletionsAskTheBinary(t *testing.T) {
	for file, calls := range map[string][]string{
		"build/linux/completions/omniroute.bash": {`__complete "$1"`, "_omniroute_words agents", "_omniroute_words import", "_omniroute_words login"},
		"build/linux/completions/_omniroute":     {"__complete agents", "__complete import", "__complete login", "($agents)", "($sources)", "($logins)"},
		"build/linux/completions/omniroute.fish": {"__complete $argv", "(__omniroute_words agents)", "(__omniroute_words import)", "(__omniroute_words login)"},
	} {
		text := readRepo(t, file)
		for _, call := range calls {
			if !strings.Contains(text, call) {
				t.Errorf("%s lacks %s", file, call)
			}
		}
		for _, word := range []string{"copilot", "gemini-cli", "qwen-code"} {
			if strings.Contains(text, word) {
				t.Errorf("%s spells %q: ask the binary (omniroute __complete) instead", file, word)
			}
		}
	}
}

// TestManPageAndCompletionsKnowEveryCommand: each subcommand and flag of the
// CLI's usage (main.go) is in the man page and the three shell completions.
func TestManPageAndCompletionsKnowEveryCommand(t *testing.T) {
	main := readRepo(t, "main.go")
	usage := main[strings.Index(main, "const usage"):]
	usage = usage[:strings.Index(usage, "Environment:")]
	words := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  omniroute ([a-z-]+|--[a-z]+)`).FindAllStringSubmatch(usage, -1) {
		words[m[1]] = true
	}
	if len(words) < 10 {
		t.Fatalf("read only %d commands from the usage: %v", len(words), words)
	}
	man := strings.ReplaceAll(readRepo(t, "build/linux/omniroute.1"), `\-`, "-")
	files := map[string]string{
		"man page":        man,
		"bash completion": readRepo(t, "build/linux/completions/omniroute.bash"),
		"zsh completion":  readRepo(t, "build/linux/completions/_omniroute"),
		"fish completion": readRepo(t, "build/linux/completions/omniroute.fish"),
	}
	for w := range words {
		for name, text := range files {
			bare := strings.TrimPrefix(w, "--")
			if !strings.Contains(text, w) && !(name == "fish completion" && strings.Contains(text, "-l "+bare)) {
				t.Errorf("%s lacks %q", name, w)
			}
		}
	}
}
