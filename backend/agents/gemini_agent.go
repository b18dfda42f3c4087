package agents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
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
				"Set \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}, \"folderTrust\": {\"enabled\": false}} in ~/.gemini/settings.json (or choose \"Use Gemini API key\" when the CLI asks how to authenticate, and trust each folder you run it in: it reads the .env file only in trusted folders).",
			},
		}
	},
	runEnv: geminiEnv,
	notes: func(o *Options, path string) []string {
		return []string{
			"The Gemini CLI reads " + path + " only when the project has no .env file of its own; `omniroute run gemini-cli` sets the variables itself.",
			geminiTrustNote(geminiSettingsSpec.path(o)),
		}
	},
	companion: &geminiSettingsSpec,
}

// geminiSettingsSpec is ~/.gemini/settings.json, Setup's second file: with
// GOOGLE_GEMINI_BASE_URL set the CLI 0.61 guesses the auth type "gateway",
// which its non-interactive check refuses ("Invalid auth method selected"),
// so security.auth.selectedType is set to "gemini-api-key" (the key from
// GEMINI_API_KEY, sent to the base URL); model.name is the chosen model.
//
// Folder trust: the CLI reads ~/.gemini/.env only in a folder the user has
// trusted (elsewhere it takes just GEMINI_API_KEY from a project's .env or
// ~/.env, never GOOGLE_GEMINI_BASE_URL, which it reads from nowhere but the
// environment), and `gemini -p` refuses to run at all in an untrusted folder
// (exit 55). No settings key holds the base URL, so a CLI set up through
// files works in a new folder only with folder trust off: Setup writes
// security.folderTrust.enabled = false when the user has not set it (their
// own true or false is kept; geminiTrustNote says what it means), the
// CLI's behaviour before folder trust became its default.
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
		trust, err := security.object("folderTrust")
		if err != nil {
			return nil, err
		}
		if _, set := trust.get("enabled"); !set {
			// The user's own choice stays; only the CLI's default is changed.
			trust.set("enabled", json.RawMessage("false"))
			security.set("folderTrust", trust.compact())
		}
		top.set("security", security.compact())
		if o.Model != "" {
			model, err := top.object("model")
			if err != nil {
				return nil, err
			}
			model.setString("name", o.Model)
			// A threshold written for an earlier model must not outlive it.
			model.remove("compressionThreshold")
			if t := geminiCompression(o.ContextWindow); t != "" {
				model.set("compressionThreshold", json.RawMessage(t))
			}
			top.set("model", model.compact())
		}
		return top.pretty(detectIndent(old)), nil
	},
	configured: func(_ *Options, data []byte) bool {
		t, _ := stringAt(data, "security", "auth", "selectedType")
		return t == "gemini-api-key"
	},
}

// geminiTokenLimit is the window the Gemini CLI 0.61 assumes for a model
// name it does not know (every name behind the gateway): it compresses the
// history at model.compressionThreshold (default 0.5) times this.
const geminiTokenLimit = 1048576

// geminiCompression is model.compressionThreshold for a model of window
// tokens ("" when unknown): the CLI's own default share, 0.5, of the real
// window instead of the 1M it assumes, so it compresses in time.
func geminiCompression(window int) string {
	if window <= 0 {
		return ""
	}
	return strconv.FormatFloat(min(0.5*float64(window)/geminiTokenLimit, 1), 'f', 4, 64)
}

// geminiTrustNote says what the folder-trust setting in the settings file
// at path means for the gateway's settings: turned off by Setup (how to have
// it back), or kept on by the user (trust each folder, or use run).
func geminiTrustNote(path string) string {
	data, _ := os.ReadFile(path)
	top, err := parseJSONObject(data)
	on := false
	if err == nil {
		if sec, err := top.object("security"); err == nil {
			if ft, err := sec.object("folderTrust"); err == nil {
				v, _ := ft.get("enabled")
				on = string(v) == "true"
			}
		}
	}
	if on {
		return "Folder trust is on in " + path + " (your setting, kept): the Gemini CLI reads the gateway's settings only in folders you trust (its prompt, or /permissions), and `gemini -p` refuses an untrusted folder; `omniroute run gemini-cli` works in any folder interactively."
	}
	return "Folder trust is off in " + path + " (security.folderTrust.enabled: false): the Gemini CLI reads the gateway's settings only in trusted folders and refuses `gemini -p` in others, so every folder counts as trusted, as before the CLI made trust its default (a project's own .gemini/settings.json applies too). Set it to true to trust folders one by one instead."
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
