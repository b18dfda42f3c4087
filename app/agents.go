package app

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"omniroute/backend/config"
)

// agentSetup is how one IDE agent is pointed at the gateway.
type agentSetup struct {
	Name  string
	Steps func(base, key string) string
}

func agents() map[string]agentSetup {
	return map[string]agentSetup{
		"claude-code": {"Claude Code", func(base, key string) string {
			return fmt.Sprintf("export ANTHROPIC_BASE_URL=%s\nexport ANTHROPIC_AUTH_TOKEN=%s\nclaude\n", base, key)
		}},
		"codex": {"Codex CLI", func(base, key string) string {
			return fmt.Sprintf("export OPENAI_BASE_URL=%s/v1\nexport OPENAI_API_KEY=%s\ncodex\n", base, key)
		}},
		"cursor": {"Cursor", func(base, key string) string {
			return fmt.Sprintf("Settings → Models → OpenAI API Key: %s\nOverride OpenAI Base URL: %s/v1\n", key, base)
		}},
		"aider": {"aider", func(base, key string) string {
			return fmt.Sprintf("aider --openai-api-base %s/v1 --openai-api-key %s --model openai/<provider>/<model>\n", base, key)
		}},
		"opencode": {"opencode", func(base, key string) string {
			return fmt.Sprintf("In opencode.json add a provider with \"options\": {\"baseURL\": \"%s/v1\", \"apiKey\": \"%s\"}\n", base, key)
		}},
		"openai": {"any OpenAI client", func(base, key string) string {
			return fmt.Sprintf("base URL: %s/v1\nAPI key:  %s\nmodel:    <provider>/<model>, e.g. openai/gpt-4o-mini\n", base, key)
		}},
	}
}

// PrintAgentSetup prints how to configure an agent against the gateway.
func PrintAgentSetup(args []string, proc config.Process, stdout, stderr io.Writer) int {
	all := agents()
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(args) == 0 {
		fmt.Fprintf(stderr, "usage: omniroute setup <agent>; agents: %s\n", strings.Join(names, ", "))
		return 2
	}
	a, ok := all[strings.ToLower(args[0])]
	if !ok {
		fmt.Fprintf(stderr, "unknown agent %q; agents: %s\n", args[0], strings.Join(names, ", "))
		return 2
	}
	fmt.Fprintf(stdout, "# %s → OmniRoute (use the API key printed at start or shown in the dashboard)\n", a.Name)
	fmt.Fprint(stdout, a.Steps(proc.BaseURL(), "<your OmniRoute API key>"))
	return 0
}
