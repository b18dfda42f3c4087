package agents

import (
	"bytes"
	"fmt"
	"strings"
)

// The Gemini CLI takes its endpoint only from the environment:
// GOOGLE_GEMINI_BASE_URL (the gateway root: it calls
// /v1beta/models/{model}:streamGenerateContent there), GEMINI_API_KEY (sent as
// x-goog-api-key) and GEMINI_MODEL (its default model). Besides the shell it
// reads them from a .env file: the first .env (or .gemini/.env) found from the
// working directory up, else ~/.gemini/.env, else ~/.env; variables already
// in the environment win. Setup writes ~/.gemini/.env (0600), which a project's
// own .env shadows: `omniroute run gemini-cli` sets the variables itself.
// Setup also sets the auth type in ~/.gemini/settings.json (geminiSettingsSpec),
// which `run` cannot do without writing a file: the CLI 0.61 refuses
// GOOGLE_GEMINI_BASE_URL without it, so run works once setup (or the CLI's
// own "Use Gemini API key" choice) has set it.
var geminiSpec = spec{
	id:   "gemini-cli",
	name: "Gemini CLI",
	kind: KindFile,
	cmd:  "gemini",
	path: func(o *Options) string {
		return joinIf(o.dirFromEnv("", ".gemini"), ".env")
	},
	apply: func(o *Options, old []byte, _ bool) ([]byte, error) {
		if n := multilineDotenv(old); n > 0 {
			return nil, fmt.Errorf("%w: line %d of the .env file opens a quoted value that goes on over several lines", ErrUnsupportedConfig, n)
		}
		return mergeDotenv(old, geminiVars(o)), nil
	},
	configured: func(o *Options, data []byte) bool {
		u, ok := dotenvValue(data, "GOOGLE_GEMINI_BASE_URL")
		return ok && strings.TrimRight(u, "/") == o.BaseURL
	},
	instructions: func(o *Options, path string) Instructions {
		var lines []string
		for _, kv := range geminiVars(o) {
			lines = append(lines, kv[0]+"="+dotenvQuote(kv[1]))
		}
		return Instructions{
			Env: geminiEnv(o),
			Steps: []string{
				fmt.Sprintf("Add to %s:\n%s", path, strings.Join(lines, "\n")),
				"Or export these variables before starting `gemini` (the shell's values win over the file).",
				"Set \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}} in ~/.gemini/settings.json (or choose \"Use Gemini API key\" when the CLI asks how to authenticate).",
			},
		}
	},
	runEnv: geminiEnv,
	notes: func(_ *Options, path string) []string {
		return []string{"The Gemini CLI reads " + path + " only when the project has no .env file of its own (and, for a .gemini/.env, in a trusted folder); `omniroute run gemini-cli` sets the variables itself."}
	},
	companion: &geminiSettingsSpec,
}

// geminiSettingsSpec is ~/.gemini/settings.json, Setup's second file: with
// GOOGLE_GEMINI_BASE_URL set the CLI 0.61 guesses the auth type "gateway",
// which its non-interactive check refuses ("Invalid auth method selected"),
// so security.auth.selectedType is set to "gemini-api-key" (the key from
// GEMINI_API_KEY, sent to the base URL); model.name is the chosen model.
var geminiSettingsSpec = spec{
	id: "gemini-cli",
	path: func(o *Options) string {
		return joinIf(o.dirFromEnv("", ".gemini"), "settings.json")
	},
	apply: func(o *Options, old []byte, _ bool) ([]byte, error) {
		top, err := parseJSONObject(old)
		if err != nil {
			return nil, err
		}
		security, err := top.object("security")
		if err != nil {
			return nil, err
		}
		auth, err := security.object("auth")
		if err != nil {
			return nil, err
		}
		auth.setString("selectedType", "gemini-api-key")
		security.set("auth", auth.compact())
		top.set("security", security.compact())
		if o.Model != "" {
			model, err := top.object("model")
			if err != nil {
				return nil, err
			}
			model.setString("name", o.Model)
			top.set("model", model.compact())
		}
		return top.pretty(detectIndent(old)), nil
	},
	configured: func(_ *Options, data []byte) bool {
		t, _ := stringAt(data, "security", "auth", "selectedType")
		return t == "gemini-api-key"
	},
}

// geminiVars are the Gemini CLI's variables for the gateway, in writing order.
func geminiVars(o *Options) [][2]string {
	kvs := [][2]string{{"GOOGLE_GEMINI_BASE_URL", o.BaseURL}, {"GEMINI_API_KEY", o.APIKey}}
	if o.Model != "" {
		kvs = append(kvs, [2]string{"GEMINI_MODEL", o.Model})
	}
	return kvs
}

func geminiEnv(o *Options) map[string]string {
	env := map[string]string{}
	for _, kv := range geminiVars(o) {
		env[kv[0]] = kv[1]
	}
	return env
}

// dotenvKey returns the variable a .env line assigns ("" for a comment, a
// blank line or anything else), accepting an "export " prefix.
func dotenvKey(line string) string {
	s := strings.TrimSpace(line)
	s = strings.TrimPrefix(s, "export ")
	k, _, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" || strings.HasPrefix(k, "#") || strings.ContainsAny(k, " \t\"'") {
		return ""
	}
	return k
}

// multilineDotenv returns the (1-based) line of the first assignment whose
// quoted value does not close on its line (0 for none): a multi-line value,
// which a line-by-line edit could cut, so Setup leaves such a file alone.
func multilineDotenv(data []byte) int {
	for i, line := range strings.Split(string(data), "\n") {
		if dotenvKey(line) == "" {
			continue
		}
		_, v, _ := strings.Cut(line, "=")
		v = strings.TrimSpace(v)
		if v == "" || (v[0] != '"' && v[0] != '\'' && v[0] != '`') {
			continue
		}
		if j := strings.IndexByte(v[1:], v[0]); j < 0 {
			return i + 1
		}
	}
	return 0
}

// dotenvValue reads key's value from a .env file (its first assignment).
func dotenvValue(data []byte, key string) (string, bool) {
	for _, line := range strings.Split(string(data), "\n") {
		if dotenvKey(line) != key {
			continue
		}
		_, v, _ := strings.Cut(line, "=")
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		return v, true
	}
	return "", false
}

// dotenvQuote writes a value bare when it holds nothing a .env reader
// treats specially, else double-quoted.
func dotenvQuote(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t#\"'\\$`=") {
		return v
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}

// mergeDotenv sets each variable of kvs in a .env file: its first assignment
// is replaced in place, later ones removed, a missing one appended; every
// other line (comments, other variables) is kept as it is.
func mergeDotenv(old []byte, kvs [][2]string) []byte {
	want := map[string]string{}
	for _, kv := range kvs {
		want[kv[0]] = kv[0] + "=" + dotenvQuote(kv[1])
	}
	done := map[string]bool{}
	var out bytes.Buffer
	text := string(old)
	if text != "" {
		text = strings.TrimSuffix(text, "\n")
		for _, line := range strings.Split(text, "\n") {
			k := dotenvKey(line)
			if repl, ok := want[k]; ok {
				if !done[k] {
					out.WriteString(repl + "\n")
					done[k] = true
				}
				continue
			}
			out.WriteString(line + "\n")
		}
	}
	for _, kv := range kvs {
		if !done[kv[0]] {
			out.WriteString(want[kv[0]] + "\n")
		}
	}
	return out.Bytes()
}
