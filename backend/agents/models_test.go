package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestClaudeSetupWritesEveryModelVariable: Claude Code started in a fresh
// shell asks only for names the gateway routes, for its main model, each
// /model family and its background (small-fast) requests.
func TestClaudeSetupWritesEveryModelVariable(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*Options)
		want map[string]string
	}{
		{"one model for all", func(o *Options) { o.Model = "glm-4.6" }, map[string]string{
			"ANTHROPIC_MODEL": "glm-4.6", "ANTHROPIC_DEFAULT_OPUS_MODEL": "glm-4.6", "ANTHROPIC_DEFAULT_SONNET_MODEL": "glm-4.6",
			"ANTHROPIC_DEFAULT_HAIKU_MODEL": "glm-4.6", "ANTHROPIC_SMALL_FAST_MODEL": "glm-4.6"}},
		{"cheap background model", func(o *Options) { o.Model, o.Opus, o.Haiku = "big", "bigger", "cheap" }, map[string]string{
			"ANTHROPIC_MODEL": "big", "ANTHROPIC_DEFAULT_OPUS_MODEL": "bigger", "ANTHROPIC_DEFAULT_SONNET_MODEL": "big",
			"ANTHROPIC_DEFAULT_HAIKU_MODEL": "cheap", "ANTHROPIC_SMALL_FAST_MODEL": "cheap"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, home := newTestManager(t, tc.mod)
			res, err := m.Setup("claude-code")
			if err != nil {
				t.Fatal(err)
			}
			if res.Path != filepath.Join(home, ".claude", "settings.json") || !res.Created {
				t.Fatalf("result %+v", res)
			}
			data, err := os.ReadFile(res.Path)
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Env map[string]string `json:"env"`
			}
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatalf("%v: %s", err, data)
			}
			want := map[string]string{"ANTHROPIC_BASE_URL": testBase, "ANTHROPIC_AUTH_TOKEN": testKey}
			for k, v := range tc.want {
				want[k] = v
			}
			if len(doc.Env) != len(want) {
				t.Fatalf("env %v, want %v", doc.Env, want)
			}
			for k, v := range want {
				if doc.Env[k] != v {
					t.Errorf("%s = %q, want %q", k, doc.Env[k], v)
				}
			}
			if fi, _ := os.Stat(res.Path); fi.Mode().Perm() != 0o600 {
				t.Errorf("settings.json mode %v, want 0600 (it holds the key)", fi.Mode().Perm())
			}
			// `omniroute run claude-code` hands over the same variables.
			_, env, err := m.RunEnv("claude-code")
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range want {
				if !slices.Contains(env, k+"="+v) {
					t.Errorf("run env %v lacks %s=%s", env, k, v)
				}
			}
		})
	}
}

// TestCodexSetupWritesModelAndCredential: Codex needs its model, the provider
// and a key it reads from the file.
func TestCodexSetupWritesModelAndCredential(t *testing.T) {
	m, home := newTestManager(t, func(o *Options) { o.Model = "fast-combo" })
	res, err := m.Setup("codex")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(home, ".codex", "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	want := "model_provider = \"omniroute\"\nmodel = \"fast-combo\"\n\n[model_providers.omniroute]\nname = \"OmniRoute\"\n" +
		"base_url = \"" + testBase + "/v1\"\nwire_api = \"responses\"\nexperimental_bearer_token = \"" + testKey + "\"\n"
	if string(data) != want {
		t.Fatalf("config.toml:\n%s\nwant:\n%s", data, want)
	}
	if len(res.Instructions.Env) != 0 {
		t.Fatalf("setup asks to export %v; Codex must work without", res.Instructions.Env)
	}
	if fi, _ := os.Stat(res.Path); fi.Mode().Perm() != 0o600 {
		t.Errorf("config.toml mode %v, want 0600", fi.Mode().Perm())
	}
}

// TestRunCommandPassesEveryArgument: everything after the agent name reaches
// the agent unchanged and after OmniRoute's own settings.
func TestRunCommandPassesEveryArgument(t *testing.T) {
	m, home := newTestManager(t, func(o *Options) { o.Model = "m-1" })
	user := []string{"exec", "--help", "-m", "x", "--", "--undo"}
	cmd, argv, env, err := m.RunCommand("codex", user)
	if err != nil {
		t.Fatal(err)
	}
	if cmd != "codex" || !slices.Equal(argv[len(argv)-len(user):], user) {
		t.Fatalf("codex %q", argv)
	}
	own := strings.Join(argv[:len(argv)-len(user)], " ")
	for _, want := range []string{`model_provider="omniroute"`, `model_providers.omniroute.base_url="` + testBase + `/v1"`,
		`model_providers.omniroute.wire_api="responses"`, `model_providers.omniroute.env_key="OMNIROUTE_API_KEY"`, `model="m-1"`} {
		if !strings.Contains(own, want) {
			t.Errorf("codex arguments %q lack %s", own, want)
		}
	}
	if strings.Contains(own, testKey) {
		t.Error("the key is on the command line")
	}
	if !slices.Contains(env, "OMNIROUTE_API_KEY="+testKey) {
		t.Errorf("env %v", env)
	}
	cmd, argv, _, err = m.RunCommand("claude-code", []string{"-p", "hi"})
	if err != nil || cmd != "claude" || !slices.Equal(argv, []string{"-p", "hi"}) {
		t.Fatalf("claude %q %q %v", cmd, argv, err)
	}
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Errorf("run wrote files: %v", entries)
	}
}
