package agents

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOpencodeFamilySetupWritesTheContextWindow: opencode and Kilo get the
// model's known window as limit.context (with limit.output, a quarter of it
// up to 32000), keeping the user's other members of the model entry; an
// unknown window writes no limit. The inline config of `omniroute run`
// carries the same limit.
func TestOpencodeFamilySetupWritesTheContextWindow(t *testing.T) {
	for _, c := range []struct{ id, file, inline string }{
		{"opencode", ".config/opencode/opencode.json", "OPENCODE_CONFIG_CONTENT"},
		{"kilo", ".config/kilo/kilo.json", "KILO_CONFIG_CONTENT"},
	} {
		t.Run(c.id, func(t *testing.T) {
			for _, tt := range []struct {
				model          string
				window         int
				context, outpt any // nil: no limit written
			}{
				{"glm-4.6", 200000, float64(200000), float64(32000)},
				{"small-model", 32768, float64(32768), float64(8192)},
				{"mystery-model", 0, nil, nil},
			} {
				m, home := newTestManager(t, nil)
				path := filepath.Join(home, c.file)
				writeFile(t, path, []byte(`{"provider": {"omniroute": {"models": {"`+tt.model+`": {"name": "mine", "tool_call": true}}}}}`), 0o600)
				mm := m.WithModels(tt.model, "", "", "").WithContextWindow(tt.window)
				if _, err := mm.Setup(c.id); err != nil {
					t.Fatal(err)
				}
				data := readFile(t, path)
				entry := []string{"provider", "omniroute", "models", tt.model}
				if tt.context == nil {
					if got := jsonPath(t, data, append(entry, "limit")...); got != nil {
						t.Errorf("%s: limit %v written for an unknown window", tt.model, got)
					}
				} else if jsonPath(t, data, append(entry, "limit", "context")...) != tt.context ||
					jsonPath(t, data, append(entry, "limit", "output")...) != tt.outpt {
					t.Errorf("%s (window %d):\n%s", tt.model, tt.window, data)
				}
				if jsonPath(t, data, append(entry, "name")...) != "mine" || jsonPath(t, data, append(entry, "tool_call")...) != true {
					t.Errorf("the user's members of the model entry were lost:\n%s", data)
				}
				_, env, err := mm.RunEnv(c.id)
				if err != nil {
					t.Fatal(err)
				}
				i := slices.IndexFunc(env, func(kv string) bool { return strings.HasPrefix(kv, c.inline+"=") })
				if i < 0 {
					t.Fatalf("no %s in %q", c.inline, env)
				}
				inline := []byte(strings.TrimPrefix(env[i], c.inline+"="))
				if tt.context == nil {
					if got := jsonPath(t, inline, append(entry, "limit")...); got != nil {
						t.Errorf("%s: run's limit %v for an unknown window", c.inline, got)
					}
				} else if got := jsonPath(t, inline, append(entry, "limit", "context")...); got != tt.context {
					t.Errorf("%s: run's limit.context %v, want %v", c.inline, got, tt.context)
				}
			}
		})
	}
}

// TestCodexSetupWritesTheContextWindow: Codex gets the known window as the
// root key model_context_window (and `omniroute run codex` as a -c
// override); a later setup with an unknown window removes it, keeping the
// user's other keys.
func TestCodexSetupWritesTheContextWindow(t *testing.T) {
	m, home := newTestManager(t, nil)
	path := filepath.Join(home, ".codex", "config.toml")
	writeFile(t, path, []byte("approval_policy = \"never\"\n"), 0o600)
	for _, tt := range []struct {
		model  string
		window int
		want   string // the line, "" for absent
	}{
		{"glm-4.6", 200000, "model_context_window = 200000"},
		{"kimi-k2", 262144, "model_context_window = 262144"},
		{"mystery-model", 0, ""},
	} {
		mm := m.WithModels(tt.model, "", "", "").WithContextWindow(tt.window)
		if _, err := mm.Setup("codex"); err != nil {
			t.Fatal(err)
		}
		data := string(readFile(t, path))
		if n := strings.Count(data, "model_context_window"); (tt.want == "" && n != 0) || (tt.want != "" && (n != 1 || !strings.Contains(data, "\n"+tt.want+"\n"))) ||
			!strings.Contains(data, "approval_policy = \"never\"\n") || !strings.Contains(data, `model = "`+tt.model+`"`) {
			t.Errorf("%s (window %d): config.toml:\n%s", tt.model, tt.window, data)
		}
		_, argv, _, err := mm.RunCommand("codex", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Contains(argv, strings.ReplaceAll(tt.want, " ", "")); got != (tt.want != "") || (tt.want == "" && strings.Contains(strings.Join(argv, " "), "model_context_window")) {
			t.Errorf("%s: run arguments %q", tt.model, argv)
		}
	}
}

// TestQwenSetupWritesTheContextWindow: Qwen Code's provider entry gets the
// known window as generationConfig.contextWindowSize, none when unknown.
func TestQwenSetupWritesTheContextWindow(t *testing.T) {
	for _, tt := range []struct {
		window int
		want   any
	}{{200000, float64(200000)}, {0, nil}} {
		m, home := newTestManager(t, nil)
		if _, err := m.WithModels("glm-4.6", "", "", "").WithContextWindow(tt.window).Setup("qwen-code"); err != nil {
			t.Fatal(err)
		}
		var got struct {
			ModelProviders struct {
				OpenAI []map[string]json.RawMessage `json:"openai"`
			} `json:"modelProviders"`
		}
		data := readFile(t, filepath.Join(home, ".qwen", "settings.json"))
		if err := json.Unmarshal(data, &got); err != nil || len(got.ModelProviders.OpenAI) != 1 {
			t.Fatalf("settings.json (%v):\n%s", err, data)
		}
		var gen map[string]any
		if raw, ok := got.ModelProviders.OpenAI[0]["generationConfig"]; ok {
			_ = json.Unmarshal(raw, &gen)
		}
		if gen["contextWindowSize"] != tt.want {
			t.Errorf("window %d: settings.json:\n%s", tt.window, data)
		}
	}
}

// TestGeminiSetupWritesTheCompressionThreshold: the Gemini CLI assumes a 1M
// window for every name it does not know and has no window setting; setup
// writes model.compressionThreshold as its default half of the real window
// (200000 → 0.0954), and removes it for a model whose window is unknown.
func TestGeminiSetupWritesTheCompressionThreshold(t *testing.T) {
	m, home := newTestManager(t, nil)
	path := filepath.Join(home, ".gemini", "settings.json")
	for _, tt := range []struct {
		model  string
		window int
		want   any
	}{
		{"glm-4.6", 200000, 0.0954},
		{"gemini-2.5-pro", 1048576, 0.5},
		{"mystery-model", 0, nil},
	} {
		if _, err := m.WithModels(tt.model, "", "", "").WithContextWindow(tt.window).Setup("gemini-cli"); err != nil {
			t.Fatal(err)
		}
		data := readFile(t, path)
		if got := jsonPath(t, data, "model", "compressionThreshold"); got != tt.want || jsonPath(t, data, "model", "name") != tt.model {
			t.Errorf("%s (window %d): settings.json:\n%s", tt.model, tt.window, data)
		}
	}
}
