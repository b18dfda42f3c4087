package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func testOptions(model string) *Options {
	return &Options{BaseURL: testBase, APIKey: testKey, Model: model}
}

const codexBlock = "[model_providers.omniroute]\nname = \"OmniRoute\"\nbase_url = \"" + testBase + "/v1\"\n" +
	"wire_api = \"responses\"\nexperimental_bearer_token = \"" + testKey + "\"\n"

func TestApplyCodex(t *testing.T) {
	tests := []struct {
		name, model, in, want string
	}{
		{
			name: "replace root model_provider",
			in:   "model_provider = \"openai\"  # old\nmodel = \"o3\"\n",
			want: "model_provider = \"omniroute\"\nmodel = \"o3\"\n\n" + codexBlock,
		},
		{
			name: "replace existing table, keep what follows",
			in: "model_provider = \"omniroute\"\n\n[model_providers.omniroute]\nname = \"Old\"\nbase_url = \"http://old/v1\"\n" +
				"# inside\nquery_params = { a = \"b\" }\n\n# next table\n[tools]\nweb_search = true\n",
			want: "model_provider = \"omniroute\"\n\n" + codexBlock + "\n# next table\n[tools]\nweb_search = true\n",
		},
		{
			name: "tables only",
			in:   "[tools]\nweb_search = true\n",
			want: "model_provider = \"omniroute\"\n\n[tools]\nweb_search = true\n\n" + codexBlock,
		},
		{
			name: "fake headers inside multi-line strings",
			in:   "instructions = \"\"\"\n[model_providers.omniroute]\nmodel_provider = \"x\"\n\"\"\"\nlit = '''\n[fake]\n'''\n",
			want: "instructions = \"\"\"\n[model_providers.omniroute]\nmodel_provider = \"x\"\n\"\"\"\nlit = '''\n[fake]\n'''\n" +
				"model_provider = \"omniroute\"\n\n" + codexBlock,
		},
		{
			name: "subtable of the provider is kept",
			in:   "[model_providers.omniroute.http_headers]\nX-Foo = \"bar\"\n",
			want: "model_provider = \"omniroute\"\n\n[model_providers.omniroute.http_headers]\nX-Foo = \"bar\"\n\n" + codexBlock,
		},
		{
			name: "CRLF line endings",
			in:   "model = \"o3\"\r\n",
			want: "model = \"o3\"\r\nmodel_provider = \"omniroute\"\r\n\r\n" + strings.ReplaceAll(codexBlock, "\n", "\r\n"),
		},
		{
			name: "no final newline",
			in:   "model = \"o3\"",
			want: "model = \"o3\"\nmodel_provider = \"omniroute\"\n\n" + codexBlock,
		},
		{
			name:  "model replaced when given",
			model: "openai/gpt-4o-mini",
			in:    "model = \"o3\"\napproval_policy = \"never\"\n",
			want:  "model = \"openai/gpt-4o-mini\"\napproval_policy = \"never\"\nmodel_provider = \"omniroute\"\n\n" + codexBlock,
		},
		{
			name: "duplicate root keys collapse",
			in:   "model_provider = \"a\"\nmodel_provider = \"b\"\n",
			want: "model_provider = \"omniroute\"\n\n" + codexBlock,
		},
		{
			name: "dates, arrays of tables and nested arrays",
			in:   "d = 1979-05-27 07:32:00Z\nm = [[1, 2], [\n  3]]\n[[mcp]]\nx = 1\n",
			want: "d = 1979-05-27 07:32:00Z\nm = [[1, 2], [\n  3]]\nmodel_provider = \"omniroute\"\n[[mcp]]\nx = 1\n\n" + codexBlock,
		},
		{
			name: "model_provider inside a table is not the root one",
			in:   "[profiles.x]\nmodel_provider = \"openai\"\n",
			want: "model_provider = \"omniroute\"\n\n[profiles.x]\nmodel_provider = \"openai\"\n\n" + codexBlock,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := applyCodex(testOptions(tt.model), []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got:\n%q\nwant:\n%q", got, tt.want)
			}
			again, err := applyCodex(testOptions(tt.model), got)
			if err != nil || string(again) != string(got) {
				t.Errorf("not idempotent (err %v):\n%q", err, again)
			}
		})
	}
}

func TestApplyCodexRefuses(t *testing.T) {
	tests := []struct{ name, in string }{
		{"inline table at root", "model_providers = { omniroute = { name = \"x\" } }\n"},
		{"inline table in [model_providers]", "[model_providers]\nomniroute = { name = \"x\" }\n"},
		{"dotted keys", "model_providers.omniroute.name = \"x\"\n"},
		{"array of tables", "[[model_providers.omniroute]]\nname = \"x\"\n"},
		{"duplicate table", "[model_providers.omniroute]\n[model_providers.omniroute]\n"},
		{"unterminated multi-line string", "a = \"\"\"\nfoo\n"},
		{"unterminated string", "a = \"foo\nb = 1\n"},
		{"not TOML", "this is not toml\n"},
		{"junk after value", "a = \"x\" y\n"},
		{"unterminated array", "a = [1, 2\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := applyCodex(testOptions(""), []byte(tt.in)); err == nil {
				t.Errorf("accepted:\n%s", got)
			}
		})
	}
}

// continueEntry is one model entry Setup writes in Continue's config.yaml.
func continueEntry(indent, name, model, roles string) string {
	return indent + "- name: " + name + "\n" + indent + "  provider: openai\n" + indent + "  model: " + model + "\n" +
		indent + "  apiBase: " + testBase + "/v1\n" + indent + "  apiKey: " + testKey + "\n" + indent + "  roles: [" + roles + "]\n"
}

// continueItemText is what Setup writes with no embed model: the chat entry
// and the autocomplete entry, both on model.
func continueItemText(indent string, model string) string {
	return continueEntry(indent, "OmniRoute", model, "chat, edit, apply") + continueEntry(indent, "OmniRoute Autocomplete", model, "autocomplete")
}

func TestApplyContinue(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{
			name: "items at column 0",
			in:   "models:\n- name: A\n  provider: ollama\nrules: []\n",
			want: "models:\n- name: A\n  provider: ollama\n" + continueItemText("", "gpt-4o-mini") + "rules: []\n",
		},
		{
			name: "existing entry replaced in place",
			in: "models:\n  - name: A\n    provider: x\n  - name: \"OmniRoute\"\n    provider: openai\n    model: old\n" +
				"    apiBase: http://old/v1\n    apiKey: old\n    roles: [chat]\n  - name: B\n    provider: y\n",
			want: "models:\n  - name: A\n    provider: x\n" + continueItemText("  ", "gpt-4o-mini") + "  - name: B\n    provider: y\n",
		},
		{
			name: "duplicate entries collapse",
			in:   "models:\n  - name: OmniRoute\n    model: a\n  - name: 'OmniRoute'\n    model: b\n",
			want: "models:\n" + continueItemText("  ", "gpt-4o-mini"),
		},
		{
			name: "name on its own line after the dash",
			in:   "models:\n    -\n      provider: openai\n      name: OmniRoute\n",
			want: "models:\n" + continueItemText("    ", "gpt-4o-mini"),
		},
		{
			name: "empty flow list",
			in:   "name: x\nmodels: [] # none yet\nschema: v1\n",
			want: "name: x\nmodels:\n" + continueItemText("  ", "gpt-4o-mini") + "schema: v1\n",
		},
		{
			name: "no models key",
			in:   "name: x\nversion: 0.0.1",
			want: "name: x\nversion: 0.0.1\nmodels:\n" + continueItemText("  ", "gpt-4o-mini"),
		},
		{
			name: "empty models key",
			in:   "---\nmodels:\n# later\ncontext: []\n",
			want: "---\nmodels:\n" + continueItemText("  ", "gpt-4o-mini") + "# later\ncontext: []\n",
		},
		{
			name: "block scalars inside items are kept",
			in:   "models:\n  - name: A\n    chatOptions:\n      baseSystemMessage: |\n        - not an item\n\n        models: no\n",
			want: "models:\n  - name: A\n    chatOptions:\n      baseSystemMessage: |\n        - not an item\n\n        models: no\n" +
				continueItemText("  ", "gpt-4o-mini"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := applyContinue(testOptions(""), []byte(tt.in), true)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
			again, err := applyContinue(testOptions(""), got, true)
			if err != nil || string(again) != string(got) {
				t.Errorf("not idempotent (err %v):\n%s", err, again)
			}
		})
	}
}

// TestApplyContinueRoles: with autocomplete and embed models the three
// entries are written, and a second setup replaces every entry OmniRoute
// owns (an old embed entry goes when no embed model is served any more)
// where the first of them was, leaving the user's own entries alone.
func TestApplyContinueRoles(t *testing.T) {
	roles := testOptions("glm-4.6")
	roles.Autocomplete, roles.Embed = "qwen2.5-coder", "nomic-embed-text"
	windowed := testOptions("glm-4.6")
	windowed.ContextWindow = 200000
	three := continueEntry("  ", "OmniRoute", "glm-4.6", "chat, edit, apply") +
		continueEntry("  ", "OmniRoute Autocomplete", "qwen2.5-coder", "autocomplete") +
		continueEntry("  ", "OmniRoute Embed", "nomic-embed-text", "embed")
	tests := []struct {
		name     string
		o        *Options
		in, want string
	}{
		{"all three roles", roles, "models:\n  - name: A\n    provider: x\n", "models:\n  - name: A\n    provider: x\n" + three},
		{"the chat model's context window", windowed, "models: []\n", "models:\n" +
			continueEntry("  ", "OmniRoute", "glm-4.6", "chat, edit, apply") + "    defaultCompletionOptions:\n      contextLength: 200000\n" +
			continueEntry("  ", "OmniRoute Autocomplete", "glm-4.6", "autocomplete")},
		{"owned entries replaced where the first was", testOptions("glm-4.6"),
			"models:\n" + three + "  - name: B\n    provider: y\n",
			"models:\n" + continueItemText("  ", "glm-4.6") + "  - name: B\n    provider: y\n"},
		{"an entry named like the embed one but the user's order kept", roles,
			"models:\n  - name: OmniRoute Embed\n    model: old\n  - name: C\n    provider: z\n",
			"models:\n" + three + "  - name: C\n    provider: z\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := applyContinue(tt.o, []byte(tt.in), true)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
			again, err := applyContinue(tt.o, got, true)
			if err != nil || string(again) != string(got) {
				t.Errorf("not idempotent (err %v):\n%s", err, again)
			}
		})
	}
}

func TestApplyContinueRefuses(t *testing.T) {
	tests := []struct{ name, in string }{
		{"flow list", "models: [a]\n"},
		{"multi-line flow list", "models: [\n  {name: a}\n]\n"},
		{"anchor", "models: &m\n  - name: a\n"},
		{"scalar", "models: none\n"},
		{"mapping", "models:\n  a: 1\n"},
		{"twice", "models:\n  - name: a\nmodels:\n  - name: b\n"},
		{"tab indentation", "models:\n\t- name: a\n"},
		{"second document", "name: a\n---\nname: b\n"},
		{"flow mapping document", "{models: []}\n"},
		{"inconsistent indentation", "models:\n    - name: a\n  - name: b\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := applyContinue(testOptions(""), []byte(tt.in), true); err == nil {
				t.Errorf("accepted:\n%s", got)
			}
		})
	}
}

func TestSetTopLevelKeys(t *testing.T) {
	kvs := aiderKeys(testOptions(""))
	tail := "openai-api-base: " + testBase + "/v1\nopenai-api-key: " + testKey + "\n"
	tests := []struct {
		name, in, want string
		fails          bool
	}{
		{name: "empty", in: "", want: tail},
		{name: "duplicates collapse", in: "openai-api-key: a\nx: 1\nopenai-api-key: b\n",
			want: "openai-api-key: " + testKey + "\nx: 1\nopenai-api-base: " + testBase + "/v1\n"},
		{name: "multi-line value replaced", in: "openai-api-base:\n  http://x/v1\nx: 1\n",
			want: "openai-api-base: " + testBase + "/v1\nx: 1\nopenai-api-key: " + testKey + "\n"},
		{name: "quoted key", in: "\"openai-api-key\": 'old'\n", want: "openai-api-key: " + testKey + "\nopenai-api-base: " + testBase + "/v1\n"},
		{name: "anchor refused", in: "openai-api-key: &k abc\n", fails: true},
		{name: "flow document refused", in: "{a: 1}\n", fails: true},
		{name: "indented first line refused", in: "  a: 1\n", fails: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := setTopLevelKeys([]byte(tt.in), kvs)
			if tt.fails {
				if err == nil {
					t.Errorf("accepted:\n%s", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestYAMLScalarText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://127.0.0.1:20128/v1", "http://127.0.0.1:20128/v1"},
		{"sk-omni-abc_DEF", "sk-omni-abc_DEF"},
		{"openai/gpt-4o-mini", "openai/gpt-4o-mini"},
		{"yes", `"yes"`},
		{"Off", `"Off"`},
		{"1.5", `"1.5"`},
		{"a b", `"a b"`},
		{"foo:", `"foo:"`},
		{"#x", `"#x"`},
		{"-x", `"-x"`},
		{`q"<&>`, `"q\"<&>"`},
		{"", `""`},
	}
	for _, tt := range tests {
		if got := yamlScalarText(tt.in); got != tt.want {
			t.Errorf("yamlScalarText(%q) = %s, want %s", tt.in, got, tt.want)
		}
		if got := yamlScalarValue(yamlScalarText(tt.in) + " # c"); got != tt.in {
			t.Errorf("round trip %q -> %q", tt.in, got)
		}
	}
}

func TestUndoKeys(t *testing.T) {
	base := time.Date(2026, 5, 6, 7, 8, 9, 123, time.UTC)
	stamp := base.Format(stampLayout)
	parse := []struct {
		in string
		ok bool
		n  int
	}{
		{stamp, true, 0},
		{stamp + "-3", true, 3},
		{stamp + "-0", false, 0},
		{stamp + "-03", false, 0},
		{stamp + ".bak", false, 0},
		{"2026", false, 0},
		{strings.Replace(stamp, "T", "X", 1), false, 0},
	}
	for _, p := range parse {
		k, ok := parseUndoKey(p.in)
		if ok != p.ok || (ok && (k.n != p.n || k.String() != p.in)) {
			t.Errorf("parseUndoKey(%q) = %+v, %v", p.in, k, ok)
		}
	}

	// The clock going backwards still yields a newer key.
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	for i, now := range []time.Time{base, base, base.Add(-time.Hour)} {
		k := nextUndoKey(path, now)
		if err := os.WriteFile(path+backupInfix+k.String(), []byte{byte('a' + i)}, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	es := undoEntries(path)
	if len(es) != 3 {
		t.Fatalf("entries %v", es)
	}
	for i, e := range es {
		if b, _ := os.ReadFile(e.path); string(b) != string(rune('a'+i)) {
			t.Errorf("entry %d is %s (%s)", i, b, e.path)
		}
	}
}
