package app

import (
	"fmt"
	"io"
	"sort"

	"omniroute/backend/agents"
	"omniroute/backend/providers"
)

// CompleteCommand is the hidden `omniroute __complete <what>` the shell
// completions (build/linux/completions) call, so the words they offer come
// from the binary and never drift from it: one word a line for "login" (the
// commands of the providers with a sign-in flow), "import" (the CLI logins
// an import reads) and "agents" (the agents setup and run know). Anything
// else prints nothing: a completion stays quiet.
func CompleteCommand(args []string, cat *providers.Catalog, stdout io.Writer) int {
	if len(args) != 1 {
		return 2
	}
	var words []string
	switch args[0] {
	case "login":
		for _, p := range cat.LoginProviders() {
			words = append(words, p.LoginFlow().Command)
		}
	case "import":
		words = cat.ImportSources()
	case "agents":
		for _, a := range agents.New(agents.Options{BaseURL: "http://127.0.0.1"}).List() {
			words = append(words, a.ID)
		}
	}
	sort.Strings(words)
	for _, w := range words {
		fmt.Fprintln(stdout, w)
	}
	return 0
}
