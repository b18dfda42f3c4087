package agents

import (
	"os"
	"time"
)

// ForCurrentUser returns a Manager for the user running the process, with the
// config-path variables (XDG_CONFIG_HOME, CODEX_HOME, …) read from the environment.
func ForCurrentUser(baseURL, apiKey string) *Manager {
	home, _ := os.UserHomeDir()
	env := map[string]string{}
	for _, k := range []string{"XDG_CONFIG_HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "CONTINUE_GLOBAL_DIR", "CLINE_DATA_DIR", "CLINE_PROVIDER_SETTINGS_PATH", "APPDATA"} {
		if v := os.Getenv(k); v != "" {
			env[k] = v
		}
	}
	return New(Options{Home: home, Env: env, BaseURL: baseURL, APIKey: apiKey, Now: time.Now})
}
