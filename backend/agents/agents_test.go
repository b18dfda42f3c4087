package agents

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	testBase = "http://127.0.0.1:20128"
	testKey  = "sk-omni-test123"
)

// newTestManager returns a Manager over a fresh temp home with a clock that
// advances one second per call.
func newTestManager(t *testing.T, mod func(*Options)) (*Manager, string) {
	t.Helper()
	home := t.TempDir()
	var mu sync.Mutex
	tick := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	o := Options{
		Home:    home,
		Env:     map[string]string{},
		BaseURL: testBase,
		APIKey:  testKey,
		Now: func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			tick = tick.Add(time.Second)
			return tick
		},
	}
	if mod != nil {
		mod(&o)
	}
	return New(o), home
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path string, data []byte, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func modeOf(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func checkMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	if runtime.GOOS == "windows" {
		return
	}
	if got := modeOf(t, path); got != want {
		t.Errorf("%s: mode %o, want %o", path, got, want)
	}
}

// undoFiles lists the backup and marker files next to path.
func undoFiles(t *testing.T, path string) []string {
	t.Helper()
	var out []string
	for _, e := range undoEntries(path) {
		out = append(out, e.path)
	}
	return out
}

// jsonPath decodes data and walks keys.
func jsonPath(t *testing.T, data []byte, keys ...string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("output is not valid JSON: %v\n%s", err, data)
	}
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("no object at %q in %s", k, data)
		}
		v = m[k]
	}
	return v
}

// fileCase describes one file agent for the shared tests.
type fileCase struct {
	id       string
	rel      string                          // config path relative to home
	fresh    func(t *testing.T, data []byte) // checks a newly created file
	existing string                          // file with unrelated settings
	merged   func(t *testing.T, data []byte) // checks the merge into existing
	once     func(t *testing.T, data []byte) // checks no duplicates
	invalid  string                          // content Setup must refuse ("" = none)
}

func fileCases() []fileCase {
	return []fileCase{
		{
			id:  "gemini-cli",
			rel: ".gemini/.env",
			fresh: func(t *testing.T, data []byte) {
				if want := "GOOGLE_GEMINI_BASE_URL=" + testBase + "\nGEMINI_API_KEY=" + testKey + "\n"; string(data) != want {
					t.Errorf(".env:\n%s\nwant:\n%s", data, want)
				}
			},
			existing: "# mine\nexport GOOGLE_GEMINI_BASE_URL=https://old.example\nDEBUG=1\nGOOGLE_GEMINI_BASE_URL='x'\nNOTE=\"a b\"",
			merged: func(t *testing.T, data []byte) {
				want := "# mine\nGOOGLE_GEMINI_BASE_URL=" + testBase + "\nDEBUG=1\nNOTE=\"a b\"\nGEMINI_API_KEY=" + testKey + "\n"
				if string(data) != want {
					t.Errorf("merged .env:\n%s\nwant:\n%s", data, want)
				}
			},
			once: func(t *testing.T, data []byte) {
				if n := strings.Count(string(data), "GEMINI_API_KEY="); n != 1 {
					t.Errorf("GEMINI_API_KEY appears %d times", n)
				}
			},
			invalid: "CERT=\"-----BEGIN\nabc\n-----END\"\n",
		},
		{
			id:  "claude-code",
			rel: ".claude/settings.json",
			fresh: func(t *testing.T, data []byte) {
				if got := jsonPath(t, data, "env", "ANTHROPIC_BASE_URL"); got != testBase {
					t.Errorf("ANTHROPIC_BASE_URL = %v", got)
				}
				if got := jsonPath(t, data, "env", "ANTHROPIC_AUTH_TOKEN"); got != testKey {
					t.Errorf("ANTHROPIC_AUTH_TOKEN = %v", got)
				}
			},
			existing: "{\n    \"permissions\": {\"allow\": [\"Bash(ls:*)\"], \"deny\": []},\n    \"model\": \"opus\",\n" +
				"    \"env\": {\"FOO\": \"bar\", \"ANTHROPIC_BASE_URL\": \"https://old.example\"},\n" +
				"    \"big\": 12345678901234567890,\n    \"html\": \"<b>&amp;</b> \\u00e9\"\n}\n",
			merged: func(t *testing.T, data []byte) {
				want := "{\n" +
					"    \"permissions\": {\n        \"allow\": [\n            \"Bash(ls:*)\"\n        ],\n        \"deny\": []\n    },\n" +
					"    \"model\": \"opus\",\n" +
					"    \"env\": {\n        \"FOO\": \"bar\",\n        \"ANTHROPIC_BASE_URL\": \"" + testBase + "\",\n" +
					"        \"ANTHROPIC_AUTH_TOKEN\": \"" + testKey + "\"\n    },\n" +
					"    \"big\": 12345678901234567890,\n" +
					"    \"html\": \"<b>&amp;</b> \\u00e9\"\n}\n"
				if string(data) != want {
					t.Errorf("merged settings.json:\n%s\nwant:\n%s", data, want)
				}
			},
			once: func(t *testing.T, data []byte) {
				if n := strings.Count(string(data), "ANTHROPIC_AUTH_TOKEN"); n != 1 {
					t.Errorf("ANTHROPIC_AUTH_TOKEN appears %d times", n)
				}
			},
			invalid: "{\n  \"env\": {\"A\": 1},\n  // comment\n}\n",
		},
		{
			id:  "codex",
			rel: ".codex/config.toml",
			fresh: func(t *testing.T, data []byte) {
				want := "model_provider = \"omniroute\"\n\n[model_providers.omniroute]\nname = \"OmniRoute\"\n" +
					"base_url = \"" + testBase + "/v1\"\nwire_api = \"responses\"\nexperimental_bearer_token = \"" + testKey + "\"\n"
				if string(data) != want {
					t.Errorf("config.toml:\n%s\nwant:\n%s", data, want)
				}
				// Codex reads the key from the file: no variable to export, and no env_key
				// (Codex refuses to start when an env_key variable is unset).
				if strings.Contains(string(data), "env_key") {
					t.Error("config.toml must not name an env_key")
				}
			},
			existing: "# my codex config\nmodel = \"o3\"\napproval_policy = \"on-request\"\n\n" +
				"[mcp_servers.docs]\ncommand = \"npx\"\nargs = [\n  \"-y\",\n  \"docs-mcp\", # pinned\n]\n\n" +
				"[profiles.fast]\nmodel_provider = \"openai\"\n",
			merged: func(t *testing.T, data []byte) {
				want := "# my codex config\nmodel = \"o3\"\napproval_policy = \"on-request\"\nmodel_provider = \"omniroute\"\n\n" +
					"[mcp_servers.docs]\ncommand = \"npx\"\nargs = [\n  \"-y\",\n  \"docs-mcp\", # pinned\n]\n\n" +
					"[profiles.fast]\nmodel_provider = \"openai\"\n\n" +
					"[model_providers.omniroute]\nname = \"OmniRoute\"\nbase_url = \"" + testBase + "/v1\"\n" +
					"wire_api = \"responses\"\nexperimental_bearer_token = \"" + testKey + "\"\n"
				if string(data) != want {
					t.Errorf("config.toml:\n%s\nwant:\n%s", data, want)
				}
			},
			once: func(t *testing.T, data []byte) {
				if n := strings.Count(string(data), "[model_providers.omniroute]"); n != 1 {
					t.Errorf("provider table appears %d times", n)
				}
				if n := strings.Count(string(data), "model_provider = \"omniroute\""); n != 1 {
					t.Errorf("model_provider line appears %d times", n)
				}
			},
			invalid: "model = \"unterminated\n[x]\n",
		},
		{
			id:  "opencode",
			rel: ".config/opencode/opencode.json",
			fresh: func(t *testing.T, data []byte) {
				if got := jsonPath(t, data, "$schema"); got != "https://opencode.ai/config.json" {
					t.Errorf("$schema = %v", got)
				}
				checks := []struct {
					keys []string
					want any
				}{
					{[]string{"npm"}, "@ai-sdk/openai-compatible"},
					{[]string{"name"}, "OmniRoute"},
					{[]string{"options", "baseURL"}, testBase + "/v1"},
					{[]string{"options", "apiKey"}, testKey},
					{[]string{"models", PlaceholderModel, "name"}, PlaceholderModel},
				}
				for _, c := range checks {
					keys := append([]string{"provider", "omniroute"}, c.keys...)
					if got := jsonPath(t, data, keys...); got != c.want {
						t.Errorf("%v = %v, want %v", keys, got, c.want)
					}
				}
			},
			existing: "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"theme\": \"tokyonight\",\n" +
				"  \"provider\": {\n    \"anthropic\": {\n      \"options\": {\n        \"timeout\": 600000\n      }\n    }\n  }\n}\n",
			merged: func(t *testing.T, data []byte) {
				top, err := parseJSONObject(data)
				if err != nil {
					t.Fatal(err)
				}
				var keys []string
				for _, m := range top.members {
					keys = append(keys, m.key)
				}
				if strings.Join(keys, ",") != "$schema,theme,provider" {
					t.Errorf("top-level keys %v", keys)
				}
				if got := jsonPath(t, data, "provider", "anthropic", "options", "timeout"); got != float64(600000) {
					t.Errorf("anthropic timeout = %v", got)
				}
				if got := jsonPath(t, data, "provider", "omniroute", "options", "baseURL"); got != testBase+"/v1" {
					t.Errorf("baseURL = %v", got)
				}
			},
			once: func(t *testing.T, data []byte) {
				if n := strings.Count(string(data), "\"omniroute\""); n != 1 {
					t.Errorf("omniroute provider appears %d times", n)
				}
			},
			invalid: "{\"provider\": {},}",
		},
		{
			id:  "continue",
			rel: ".continue/config.yaml",
			fresh: func(t *testing.T, data []byte) {
				want := "name: OmniRoute\nversion: 1.0.0\nschema: v1\nmodels:\n" + continueItemText("  ", "gpt-4o-mini")
				if string(data) != want {
					t.Errorf("config.yaml:\n%s\nwant:\n%s", data, want)
				}
			},
			existing: "name: Local Assistant\nversion: 1.0.0\nschema: v1\nmodels:\n  - name: Llama 3\n    provider: ollama\n" +
				"    model: llama3.1:8b\n    roles:\n      - chat\n      - edit\n\n# context providers\ncontext:\n  - provider: code\n",
			merged: func(t *testing.T, data []byte) {
				want := "name: Local Assistant\nversion: 1.0.0\nschema: v1\nmodels:\n  - name: Llama 3\n    provider: ollama\n" +
					"    model: llama3.1:8b\n    roles:\n      - chat\n      - edit\n" +
					continueItemText("  ", "gpt-4o-mini") +
					"\n# context providers\ncontext:\n  - provider: code\n"
				if string(data) != want {
					t.Errorf("config.yaml:\n%s\nwant:\n%s", data, want)
				}
			},
			once: func(t *testing.T, data []byte) {
				if n := strings.Count(string(data), "- name: OmniRoute\n"); n != 1 {
					t.Errorf("OmniRoute entry appears %d times", n)
				}
			},
			invalid: "models: [{name: a, provider: openai}]\n",
		},
		{
			id:  "aider",
			rel: ".aider.conf.yml",
			fresh: func(t *testing.T, data []byte) {
				want := "openai-api-base: " + testBase + "/v1\nopenai-api-key: " + testKey + "\n"
				if string(data) != want {
					t.Errorf(".aider.conf.yml:\n%s\nwant:\n%s", data, want)
				}
			},
			existing: "# aider settings\ndark-mode: true\n#openai-api-key: xxx\nopenai-api-base: https://old.example/v1 # old\n" +
				"read:\n- CONVENTIONS.md\n- NOTES.md\nauto-commits: false",
			merged: func(t *testing.T, data []byte) {
				want := "# aider settings\ndark-mode: true\n#openai-api-key: xxx\nopenai-api-base: " + testBase + "/v1\n" +
					"read:\n- CONVENTIONS.md\n- NOTES.md\nauto-commits: false\nopenai-api-key: " + testKey + "\n"
				if string(data) != want {
					t.Errorf(".aider.conf.yml:\n%s\nwant:\n%s", data, want)
				}
			},
			once: func(t *testing.T, data []byte) {
				if n := strings.Count(string(data), "\nopenai-api-key:"); n != 1 {
					t.Errorf("openai-api-key appears %d times", n)
				}
			},
			invalid: "{openai-api-base: x}\n",
		},
	}
}

func TestSetupCreatesMissingFile(t *testing.T) {
	for _, tc := range fileCases() {
		t.Run(tc.id, func(t *testing.T) {
			m, home := newTestManager(t, nil)
			path := filepath.Join(home, filepath.FromSlash(tc.rel))
			res, err := m.Setup(tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if res.Path != path || !res.Created || !res.Changed || res.BackupPath != "" || res.Agent != tc.id {
				t.Errorf("result %+v", res)
			}
			if len(res.Instructions.Steps) == 0 {
				t.Error("no instructions in result")
			}
			tc.fresh(t, readFile(t, path))
			checkMode(t, path, 0o600)
			if dir := filepath.Dir(path); dir != home {
				checkMode(t, dir, 0o700)
			}
			if _, err := os.Stat(path + createdSuffix); err != nil {
				t.Errorf("created-marker missing: %v", err)
			}
		})
	}
}

func TestSetupMergesIntoExistingFile(t *testing.T) {
	for _, tc := range fileCases() {
		t.Run(tc.id, func(t *testing.T) {
			m, home := newTestManager(t, nil)
			path := filepath.Join(home, filepath.FromSlash(tc.rel))
			writeFile(t, path, []byte(tc.existing), 0o644)
			res, err := m.Setup(tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if res.Created || !res.Changed || res.BackupPath == "" {
				t.Errorf("result %+v", res)
			}
			if !strings.HasPrefix(res.BackupPath, path+backupInfix) {
				t.Errorf("backup path %q", res.BackupPath)
			}
			if got := readFile(t, res.BackupPath); string(got) != tc.existing {
				t.Errorf("backup content differs:\n%s", got)
			}
			checkMode(t, res.BackupPath, 0o644)
			checkMode(t, path, 0o600)
			tc.merged(t, readFile(t, path))
		})
	}
}

func TestSetupIsIdempotent(t *testing.T) {
	for _, tc := range fileCases() {
		for _, start := range []string{"missing", "existing"} {
			t.Run(tc.id+"/"+start, func(t *testing.T) {
				m, home := newTestManager(t, nil)
				path := filepath.Join(home, filepath.FromSlash(tc.rel))
				if start == "existing" {
					writeFile(t, path, []byte(tc.existing), 0o644)
				}
				if _, err := m.Setup(tc.id); err != nil {
					t.Fatal(err)
				}
				first := readFile(t, path)
				before := undoFiles(t, path)
				res, err := m.Setup(tc.id)
				if err != nil {
					t.Fatal(err)
				}
				if res.Changed || res.BackupPath != "" || res.Created {
					t.Errorf("second setup result %+v", res)
				}
				if got := readFile(t, path); string(got) != string(first) {
					t.Errorf("second setup changed the file:\n%s\nwas:\n%s", got, first)
				}
				if after := undoFiles(t, path); len(after) != len(before) {
					t.Errorf("undo entries %v -> %v", before, after)
				}
				tc.once(t, first)
			})
		}
	}
}

func TestUndo(t *testing.T) {
	for _, tc := range fileCases() {
		t.Run(tc.id+"/restores-original", func(t *testing.T) {
			m, home := newTestManager(t, nil)
			path := filepath.Join(home, filepath.FromSlash(tc.rel))
			writeFile(t, path, []byte(tc.existing), 0o644)
			set, err := m.Setup(tc.id)
			if err != nil {
				t.Fatal(err)
			}
			res, err := m.Undo(tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if res.BackupPath != set.BackupPath || res.Created || !res.Changed {
				t.Errorf("undo result %+v", res)
			}
			if got := readFile(t, path); string(got) != tc.existing {
				t.Errorf("undo content:\n%s\nwant:\n%s", got, tc.existing)
			}
			checkMode(t, path, 0o644)
			if _, err := os.Stat(set.BackupPath); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("backup not deleted: %v", err)
			}
			if _, err := m.Undo(tc.id); !errors.Is(err, ErrNothingToUndo) {
				t.Errorf("second undo: %v, want ErrNothingToUndo", err)
			}
		})
		t.Run(tc.id+"/removes-created", func(t *testing.T) {
			m, home := newTestManager(t, nil)
			path := filepath.Join(home, filepath.FromSlash(tc.rel))
			if _, err := m.Undo(tc.id); !errors.Is(err, ErrNothingToUndo) {
				t.Fatalf("undo before setup: %v, want ErrNothingToUndo", err)
			}
			if _, err := m.Setup(tc.id); err != nil {
				t.Fatal(err)
			}
			res, err := m.Undo(tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Created || res.BackupPath != "" {
				t.Errorf("undo result %+v", res)
			}
			for _, p := range []string{path, path + createdSuffix} {
				if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s still exists: %v", p, err)
				}
			}
			if _, err := m.Undo(tc.id); !errors.Is(err, ErrNothingToUndo) {
				t.Errorf("second undo: %v, want ErrNothingToUndo", err)
			}
		})
		t.Run(tc.id+"/stack", func(t *testing.T) {
			m1, home := newTestManager(t, nil)
			path := filepath.Join(home, filepath.FromSlash(tc.rel))
			writeFile(t, path, []byte(tc.existing), 0o644)
			if _, err := m1.Setup(tc.id); err != nil {
				t.Fatal(err)
			}
			afterFirst := readFile(t, path)
			// A second key: a real change, so a second backup (0600: it
			// holds the first key, except for codex, whose file has none).
			m2 := New(Options{Home: home, BaseURL: testBase, APIKey: "sk-omni-second", Model: "m2", Now: m1.o.Now})
			res, err := m2.Setup(tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if res.BackupPath == "" {
				t.Fatal("second setup made no backup")
			}
			if tc.id != "codex" {
				checkMode(t, res.BackupPath, 0o600)
			}
			if _, err := m2.Undo(tc.id); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, path); string(got) != string(afterFirst) {
				t.Errorf("first undo:\n%s\nwant:\n%s", got, afterFirst)
			}
			if _, err := m2.Undo(tc.id); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, path); string(got) != tc.existing {
				t.Errorf("second undo:\n%s\nwant original", got)
			}
			if left := undoFiles(t, path); len(left) != 0 {
				t.Errorf("leftover undo files %v", left)
			}
		})
	}
}

func TestSetupRefusesUnsupportedContent(t *testing.T) {
	for _, tc := range fileCases() {
		t.Run(tc.id, func(t *testing.T) {
			m, home := newTestManager(t, nil)
			path := filepath.Join(home, filepath.FromSlash(tc.rel))
			writeFile(t, path, []byte(tc.invalid), 0o644)
			_, err := m.Setup(tc.id)
			if !errors.Is(err, ErrUnsupportedConfig) {
				t.Fatalf("err = %v, want ErrUnsupportedConfig", err)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error leaks the key: %v", err)
			}
			if got := readFile(t, path); string(got) != tc.invalid {
				t.Errorf("file changed:\n%s", got)
			}
			checkMode(t, path, 0o644)
			if left := undoFiles(t, path); len(left) != 0 {
				t.Errorf("undo files created: %v", left)
			}
		})
	}
}

func TestJSONNonObjectValuesRefused(t *testing.T) {
	tests := []struct {
		id, rel, content string
	}{
		{"claude-code", ".claude/settings.json", `{"env": ["x"]}`},
		{"claude-code", ".claude/settings.json", `[1, 2]`},
		{"claude-code", ".claude/settings.json", `{"a": 1} {"b": 2}`},
		{"opencode", ".config/opencode/opencode.json", `{"provider": "none"}`},
		{"opencode", ".config/opencode/opencode.json", `{"provider": {"omniroute": {"options": 5}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.id+"/"+tt.content, func(t *testing.T) {
			m, home := newTestManager(t, nil)
			path := filepath.Join(home, filepath.FromSlash(tt.rel))
			writeFile(t, path, []byte(tt.content), 0o600)
			if _, err := m.Setup(tt.id); !errors.Is(err, ErrUnsupportedConfig) {
				t.Fatalf("err = %v, want ErrUnsupportedConfig", err)
			}
			if got := readFile(t, path); string(got) != tt.content {
				t.Errorf("file changed: %s", got)
			}
		})
	}
}

func TestSetupWithModel(t *testing.T) {
	const model = "openai/gpt-4o-mini"
	tests := []struct {
		id, rel string
		check   func(t *testing.T, data []byte)
	}{
		{"codex", ".codex/config.toml", func(t *testing.T, data []byte) {
			if !strings.HasPrefix(string(data), "model_provider = \"omniroute\"\nmodel = \""+model+"\"\n\n[model_providers.omniroute]\n") {
				t.Errorf("config.toml:\n%s", data)
			}
		}},
		{"opencode", ".config/opencode/opencode.json", func(t *testing.T, data []byte) {
			if got := jsonPath(t, data, "model"); got != "omniroute/"+model {
				t.Errorf("model = %v", got)
			}
			if got := jsonPath(t, data, "provider", "omniroute", "models", model, "name"); got != model {
				t.Errorf("models entry = %v", got)
			}
		}},
		{"continue", ".continue/config.yaml", func(t *testing.T, data []byte) {
			if !strings.Contains(string(data), "\n    model: "+model+"\n") {
				t.Errorf("config.yaml:\n%s", data)
			}
		}},
		{"aider", ".aider.conf.yml", func(t *testing.T, data []byte) {
			if !strings.HasSuffix(string(data), "\nmodel: openai/"+model+"\n") {
				t.Errorf(".aider.conf.yml:\n%s", data)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			m, home := newTestManager(t, func(o *Options) { o.Model = model })
			if _, err := m.Setup(tt.id); err != nil {
				t.Fatal(err)
			}
			tt.check(t, readFile(t, filepath.Join(home, filepath.FromSlash(tt.rel))))
		})
	}
}

func TestManualAgents(t *testing.T) {
	for _, id := range []string{"cline", "cursor"} {
		t.Run(id, func(t *testing.T) {
			m, home := newTestManager(t, nil)
			res, err := m.Setup(id)
			if err != nil {
				t.Fatal(err)
			}
			if res.Path != "" || res.Changed || res.Created {
				t.Errorf("result %+v", res)
			}
			steps := strings.Join(res.Instructions.Steps, "\n")
			for _, want := range []string{testBase + "/v1", testKey, PlaceholderModel} {
				if !strings.Contains(steps, want) {
					t.Errorf("steps lack %q:\n%s", want, steps)
				}
			}
			if id == "cline" && !strings.Contains(steps, "OpenAI Compatible") {
				t.Errorf("cline steps lack the provider name:\n%s", steps)
			}
			if res.Instructions.Env == nil {
				t.Error("nil Env map")
			}
			if _, err := m.Undo(id); !errors.Is(err, ErrNothingToUndo) {
				t.Errorf("undo: %v", err)
			}
			if _, _, err := m.RunEnv(id); !errors.Is(err, ErrNotRunnable) {
				t.Errorf("RunEnv: %v", err)
			}
			entries, err := os.ReadDir(home)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 0 {
				t.Errorf("manual setup wrote files: %v", entries)
			}
		})
	}
}

func TestUnknownAgent(t *testing.T) {
	m, _ := newTestManager(t, nil)
	calls := map[string]func() error{
		"Setup":        func() error { _, err := m.Setup("vim"); return err },
		"Undo":         func() error { _, err := m.Undo("vim"); return err },
		"Instructions": func() error { _, err := m.Instructions("vim"); return err },
		"RunEnv":       func() error { _, _, err := m.RunEnv("vim"); return err },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			if err := call(); !errors.Is(err, ErrUnknownAgent) {
				t.Errorf("err = %v, want ErrUnknownAgent", err)
			}
		})
	}
}

func TestRunEnv(t *testing.T) {
	tests := []struct {
		id, model string
		cmd       string
		env       []string
		err       error
	}{
		{id: "claude-code", cmd: "claude", env: []string{"ANTHROPIC_AUTH_TOKEN=" + testKey, "ANTHROPIC_BASE_URL=" + testBase}},
		{id: "codex", cmd: "codex", env: []string{"OMNIROUTE_API_KEY=" + testKey}},
		{id: "gemini-cli", cmd: "gemini", env: []string{"GEMINI_API_KEY=" + testKey, "GOOGLE_GEMINI_BASE_URL=" + testBase}},
		{id: "gemini-cli", model: "glm-4.6", cmd: "gemini", env: []string{"GEMINI_API_KEY=" + testKey, "GEMINI_MODEL=glm-4.6", "GOOGLE_GEMINI_BASE_URL=" + testBase}},
		{id: "aider", cmd: "aider", env: []string{"OPENAI_API_BASE=" + testBase + "/v1", "OPENAI_API_KEY=" + testKey}},
		{id: "aider", model: "x/y", cmd: "aider", env: []string{"AIDER_MODEL=openai/x/y", "OPENAI_API_BASE=" + testBase + "/v1", "OPENAI_API_KEY=" + testKey}},
		{id: "opencode", cmd: "opencode", env: []string{"OPENCODE_CONFIG_CONTENT=" +
			`{"provider":{"omniroute":{"npm":"@ai-sdk/openai-compatible","name":"OmniRoute","options":{"baseURL":"` + testBase +
			`/v1","apiKey":"` + testKey + `"},"models":{"gpt-4o-mini":{"name":"gpt-4o-mini"}}}}}`}},
		{id: "continue", err: ErrNotRunnable},
		{id: "cline", err: ErrNotRunnable},
		{id: "cursor", err: ErrNotRunnable},
	}
	for _, tt := range tests {
		t.Run(tt.id+"/"+tt.model, func(t *testing.T) {
			m, home := newTestManager(t, func(o *Options) { o.Model = tt.model })
			cmd, env, err := m.RunEnv(tt.id)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cmd != tt.cmd || strings.Join(env, "\n") != strings.Join(tt.env, "\n") {
				t.Errorf("RunEnv = %q %q, want %q %q", cmd, env, tt.cmd, tt.env)
			}
			if entries, _ := os.ReadDir(home); len(entries) != 0 {
				t.Errorf("RunEnv wrote files: %v", entries)
			}
		})
	}
}

func TestInstructions(t *testing.T) {
	tests := []struct {
		id      string
		env     map[string]string
		inSteps []string
	}{
		{"claude-code", map[string]string{"ANTHROPIC_BASE_URL": testBase, "ANTHROPIC_AUTH_TOKEN": testKey}, []string{"settings.json", testKey}},
		{"codex", map[string]string{}, []string{"[model_providers.omniroute]", `wire_api = "responses"`, `experimental_bearer_token = "` + testKey + `"`, "omniroute run codex"}},
		{"opencode", nil, []string{"@ai-sdk/openai-compatible", testBase + "/v1"}},
		{"continue", map[string]string{}, []string{"provider: openai", "apiBase: " + testBase + "/v1"}},
		{"aider", map[string]string{"OPENAI_API_BASE": testBase + "/v1", "OPENAI_API_KEY": testKey}, []string{"openai-api-key: " + testKey}},
		{"cline", map[string]string{}, []string{"OpenAI Compatible", "Base URL: " + testBase + "/v1"}},
		{"cursor", map[string]string{}, []string{"Override OpenAI Base URL", testBase + "/v1"}},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			m, _ := newTestManager(t, nil)
			in, err := m.Instructions(tt.id)
			if err != nil {
				t.Fatal(err)
			}
			if tt.env != nil {
				if len(in.Env) != len(tt.env) {
					t.Errorf("env %v, want %v", in.Env, tt.env)
				}
				for k, v := range tt.env {
					if in.Env[k] != v {
						t.Errorf("env[%s] = %q, want %q", k, in.Env[k], v)
					}
				}
			}
			steps := strings.Join(in.Steps, "\n")
			for _, want := range tt.inSteps {
				if !strings.Contains(steps, want) {
					t.Errorf("steps lack %q:\n%s", want, steps)
				}
			}
		})
	}
	t.Run("no-key-placeholder", func(t *testing.T) {
		m, _ := newTestManager(t, func(o *Options) { o.APIKey = "" })
		in, err := m.Instructions("cline")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(in.Steps, "\n"), "<your OmniRoute API key>") {
			t.Errorf("steps: %v", in.Steps)
		}
	})
}

func TestList(t *testing.T) {
	m, home := newTestManager(t, nil)
	status := func() map[string]Agent {
		out := map[string]Agent{}
		for _, a := range m.List() {
			out[a.ID] = a
		}
		return out
	}
	got := status()
	ids := []string{"claude-code", "codex", "gemini-cli", "opencode", "kilo", "qwen-code", "continue", "aider", "cline-cli", "crush", "cline", "cursor"}
	if len(got) != len(ids) {
		t.Fatalf("List returned %d agents", len(got))
	}
	for _, id := range ids {
		a, ok := got[id]
		if !ok {
			t.Fatalf("List lacks %s", id)
		}
		if a.Configured || a.HasBackup || a.Name == "" {
			t.Errorf("%s initially %+v", id, a)
		}
		wantKind := KindFile
		if id == "cline" || id == "cursor" {
			wantKind = KindManual
		}
		if a.Kind != wantKind || (wantKind == KindFile) != (a.ConfigPath != "") {
			t.Errorf("%s kind/path %+v", id, a)
		}
	}

	// A file pointing elsewhere is neither configured nor undoable.
	writeFile(t, filepath.Join(home, ".aider.conf.yml"), []byte("openai-api-base: https://other/v1\n"), 0o600)
	for _, id := range ids[:10] {
		if _, err := m.Setup(id); err != nil {
			t.Fatal(err)
		}
	}
	for id, a := range status() {
		file := a.Kind == KindFile
		if a.Configured != file || a.HasBackup != file {
			t.Errorf("after setup %s: %+v", id, a)
		}
	}
	for _, id := range ids[:10] {
		if _, err := m.Undo(id); err != nil {
			t.Fatal(err)
		}
	}
	for id, a := range status() {
		if a.Configured || a.HasBackup {
			t.Errorf("after undo %s: %+v", id, a)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".aider.conf.yml")); err != nil {
		t.Errorf("aider file should be restored, not removed: %v", err)
	}
}

func TestConfigPathsFromEnv(t *testing.T) {
	tests := []struct {
		id, envKey string
		rel        string // path under the env dir
	}{
		{"claude-code", "CLAUDE_CONFIG_DIR", "settings.json"},
		{"codex", "CODEX_HOME", "config.toml"},
		{"opencode", "XDG_CONFIG_HOME", "opencode/opencode.json"},
		{"continue", "CONTINUE_GLOBAL_DIR", "config.yaml"},
		{"kilo", "XDG_CONFIG_HOME", "kilo/kilo.json"},
		{"cline-cli", "CLINE_DATA_DIR", "settings/providers.json"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "custom")
			m, home := newTestManager(t, func(o *Options) { o.Env = map[string]string{tt.envKey: dir} })
			res, err := m.Setup(tt.id)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(dir, filepath.FromSlash(tt.rel)); res.Path != want {
				t.Errorf("path %q, want %q", res.Path, want)
			}
			if entries, _ := os.ReadDir(home); len(entries) != 0 {
				t.Errorf("wrote into home: %v", entries)
			}
			// Relative overrides are ignored.
			m2, home2 := newTestManager(t, func(o *Options) { o.Env = map[string]string{tt.envKey: "relative/dir"} })
			res2, err := m2.Setup(tt.id)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(res2.Path, home2) {
				t.Errorf("relative override used: %q", res2.Path)
			}
		})
	}
}

func TestOptionsValidation(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Options)
		want error // nil: any error
	}{
		{"no key", func(o *Options) { o.APIKey = "" }, ErrNoAPIKey},
		{"bad base", func(o *Options) { o.BaseURL = "127.0.0.1:20128" }, nil},
		{"key with newline", func(o *Options) { o.APIKey = "sk-omni\nx" }, nil},
		{"model with newline", func(o *Options) { o.Model = "a\nb" }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, home := newTestManager(t, tt.mod)
			_, err := m.Setup("aider")
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if entries, _ := os.ReadDir(home); len(entries) != 0 {
				t.Errorf("wrote files: %v", entries)
			}
		})
	}
	t.Run("base normalized", func(t *testing.T) {
		m, _ := newTestManager(t, func(o *Options) { o.BaseURL = testBase + "/v1/" })
		_, env, err := m.RunEnv("claude-code")
		if err != nil || env[1] != "ANTHROPIC_BASE_URL="+testBase {
			t.Errorf("env %v err %v", env, err)
		}
	})
}

func TestConcurrentSetup(t *testing.T) {
	m, _ := newTestManager(t, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := 0; i < 4; i++ {
		for _, id := range []string{"claude-code", "codex", "gemini-cli", "opencode", "kilo", "qwen-code", "continue", "aider", "cline-cli", "crush"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := m.Setup(id); err != nil {
					errs <- err
				}
				_ = m.List()
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, a := range m.List() {
		if a.Kind == KindFile && !a.Configured {
			t.Errorf("%s not configured", a.ID)
		}
	}
}

func TestContinueLegacyConfigNote(t *testing.T) {
	tests := []struct {
		name   string
		legacy bool
	}{
		{"with config.json", true},
		{"without config.json", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, home := newTestManager(t, nil)
			if tt.legacy {
				writeFile(t, filepath.Join(home, ".continue", "config.json"), []byte(`{"models": []}`), 0o644)
			}
			res, err := m.Setup("continue")
			if err != nil {
				t.Fatal(err)
			}
			noted := strings.Contains(strings.Join(res.Instructions.Steps, "\n"), "deprecated")
			if noted != tt.legacy {
				t.Errorf("legacy note present = %v, want %v", noted, tt.legacy)
			}
		})
	}
}

// TestClineCLISetupMerges: setup for the Cline CLI makes the
// openai-compatible provider the one a run uses, with the gateway's base URL,
// key and model, and keeps the user's other providers and modes.
func TestClineCLISetupMerges(t *testing.T) {
	m, home := newTestManager(t, func(o *Options) { o.Model = "glm-4.6" })
	path := filepath.Join(home, ".cline", "data", "settings", "providers.json")
	writeFile(t, path, []byte(`{"version": 1, "lastUsedProvider": "anthropic", "modes": {"plan": "x"},
  "providers": {"anthropic": {"settings": {"provider": "anthropic", "apiKey": "sk-ant"}},
    "openai-compatible": {"settings": {"provider": "openai-compatible", "baseUrl": "https://old/v1", "headers": {"A": "b"}}}}}`), 0o600)
	if _, err := m.Setup("cline-cli"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Version          int            `json:"version"`
		LastUsedProvider string         `json:"lastUsedProvider"`
		Modes            map[string]any `json:"modes"`
		Providers        map[string]struct {
			Settings map[string]any `json:"settings"`
		} `json:"providers"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	oa := got.Providers["openai-compatible"].Settings
	if got.Version != 1 || got.LastUsedProvider != "openai-compatible" || got.Modes["plan"] != "x" ||
		got.Providers["anthropic"].Settings["apiKey"] != "sk-ant" || oa["baseUrl"] != testBase+"/v1" ||
		oa["apiKey"] != testKey || oa["model"] != "glm-4.6" || oa["headers"] == nil {
		t.Errorf("providers.json:\n%s", data)
	}
}

// TestQwenSetupMerges: setup for Qwen Code selects OpenAI-compatible auth and
// the model, puts the gateway's provider entry first (replacing an older one
// of its own, keeping the user's) and sets the key variable it names.
func TestQwenSetupMerges(t *testing.T) {
	m, home := newTestManager(t, func(o *Options) { o.Model = "glm-4.6" })
	path := filepath.Join(home, ".qwen", "settings.json")
	writeFile(t, path, []byte(`{"ui": {"theme": "dark"}, "modelProviders": {"openai": [
  {"id": "old", "baseUrl": "http://old/v1", "envKey": "OMNIROUTE_API_KEY"},
  {"id": "mine", "baseUrl": "https://example/v1", "envKey": "MY_KEY"}]}, "env": {"MY_KEY": "k"}}`), 0o600)
	if _, err := m.Setup("qwen-code"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		UI       map[string]any `json:"ui"`
		Security struct {
			Auth struct {
				SelectedType string `json:"selectedType"`
			} `json:"auth"`
		} `json:"security"`
		Model struct {
			Name string `json:"name"`
		} `json:"model"`
		ModelProviders struct {
			OpenAI []struct{ ID, BaseURL, EnvKey string } `json:"openai"`
		} `json:"modelProviders"`
		Env map[string]string `json:"env"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	list := got.ModelProviders.OpenAI
	if got.UI["theme"] != "dark" || got.Security.Auth.SelectedType != "openai" || got.Model.Name != "glm-4.6" ||
		len(list) != 2 || list[0].ID != "glm-4.6" || list[0].BaseURL != testBase+"/v1" || list[0].EnvKey != "OMNIROUTE_API_KEY" ||
		list[1].ID != "mine" || got.Env["OMNIROUTE_API_KEY"] != testKey || got.Env["MY_KEY"] != "k" {
		t.Errorf("settings.json:\n%s", data)
	}
	if a := m.List(); !slices.ContainsFunc(a, func(a Agent) bool { return a.ID == "qwen-code" && a.Configured }) {
		t.Errorf("qwen-code not listed as configured: %+v", a)
	}
}

// TestClaudeSetupWritesTheContextWindow: a known window of a non-Claude
// model is written as CLAUDE_CODE_MAX_CONTEXT_TOKENS; a later setup for a
// Claude model (whose window Claude Code knows) or an unknown window removes
// it, keeping the user's other variables.
func TestClaudeSetupWritesTheContextWindow(t *testing.T) {
	m, home := newTestManager(t, nil)
	path := filepath.Join(home, ".claude", "settings.json")
	writeFile(t, path, []byte(`{"env": {"MY_VAR": "1"}}`), 0o600)
	tests := []struct {
		model  string
		window int
		want   string // the variable's value, "" for absent
	}{
		{"glm-4.6", 200000, "200000"},
		{"claude-sonnet-5-0", 200000, ""},
		{"glm-4.6", 131072, "131072"},
		{"mystery-model", 0, ""},
	}
	for _, tt := range tests {
		if _, err := m.WithModels(tt.model, "", "", "").WithContextWindow(tt.window).Setup("claude-code"); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var got struct{ Env map[string]string }
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		if got.Env["CLAUDE_CODE_MAX_CONTEXT_TOKENS"] != tt.want || got.Env["MY_VAR"] != "1" || got.Env["ANTHROPIC_MODEL"] != tt.model {
			t.Errorf("%s (window %d): settings.json:\n%s", tt.model, tt.window, data)
		}
	}
}

// TestListSaysWhichAgentCannotReachTheGateway: Cursor calls a custom base
// URL from its vendor's servers, so List says it cannot reach a gateway on
// a local or private address, and says nothing for a public one; every
// other agent runs on this computer and is never flagged.
func TestListSaysWhichAgentCannotReachTheGateway(t *testing.T) {
	for _, c := range []struct {
		base        string
		unreachable bool
	}{
		{"http://127.0.0.1:20128", true},
		{"http://localhost:20128", true},
		{"http://[::1]:20128", true},
		{"http://192.168.1.20:20128", true},
		{"http://10.0.0.5:20128", true},
		{"http://169.254.0.9:20128", true},
		{"http://gateway:20128", true},
		{"http://box.local:20128", true},
		{"https://gw.example.com", false},
		{"https://203.0.113.7:8443", false},
	} {
		t.Run(c.base, func(t *testing.T) {
			m, _ := newTestManager(t, func(o *Options) { o.BaseURL = c.base })
			for _, a := range m.List() {
				want := c.unreachable && a.ID == "cursor"
				if (a.Unreachable != "") != want {
					t.Errorf("%s: unreachable %q, want set: %v", a.ID, a.Unreachable, want)
				}
				if want && !strings.Contains(a.Unreachable, c.base) {
					t.Errorf("%s: %q does not name the address", a.ID, a.Unreachable)
				}
			}
		})
	}
}
