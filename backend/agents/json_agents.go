package agents

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Claude Code reads "env" from ~/.claude/settings.json (the directory moves
// with CLAUDE_CONFIG_DIR); ANTHROPIC_AUTH_TOKEN is sent as a Bearer token.
var claudeSpec = spec{
	id:   "claude-code",
	name: "Claude Code",
	kind: KindFile,
	cmd:  "claude",
	path: func(o *Options) string {
		return joinIf(o.dirFromEnv("CLAUDE_CONFIG_DIR", ".claude"), "settings.json")
	},
	apply: func(o *Options, old []byte, _ bool) ([]byte, error) {
		top, err := parseJSONObject(old)
		if err != nil {
			return nil, err
		}
		env, err := top.object("env")
		if err != nil {
			return nil, err
		}
		// A window written for an earlier model must not outlive it.
		env.remove(claudeWindowVar)
		for _, kv := range claudeVars(o) {
			env.setString(kv[0], kv[1])
		}
		top.set("env", env.compact())
		return top.pretty(detectIndent(old)), nil
	},
	configured: func(o *Options, data []byte) bool {
		u, ok := stringAt(data, "env", "ANTHROPIC_BASE_URL")
		return ok && strings.TrimRight(u, "/") == o.BaseURL
	},
	instructions: func(o *Options, path string) Instructions {
		var lines []string
		for _, kv := range claudeVars(o) {
			lines = append(lines, string(jsonString(kv[0]))+": "+string(jsonString(kv[1])))
		}
		return Instructions{
			Env: claudeEnv(o),
			Steps: []string{
				fmt.Sprintf("Add to the \"env\" object of %s:\n%s", path, strings.Join(lines, ",\n")),
				"Or export these variables before starting `claude` (values in settings.json win over the shell).",
				"Unset ANTHROPIC_API_KEY if it is set, so only the OmniRoute key is sent.",
				"Restart Claude Code and run /status to check the base URL.",
			},
		}
	},
	runEnv: claudeEnv,
}

// claudeWindowVar is the variable Claude Code takes a gateway model's
// context window from.
const claudeWindowVar = "CLAUDE_CODE_MAX_CONTEXT_TOKENS"

// claudeVars are the Claude Code variables for the gateway, in writing order:
// the base URL and key, then (with a model) every model variable Claude Code
// reads, so its default, its /model families and its background requests all
// ask for names the gateway routes.
func claudeVars(o *Options) [][2]string {
	kvs := [][2]string{{"ANTHROPIC_BASE_URL", o.BaseURL}, {"ANTHROPIC_AUTH_TOKEN", o.APIKey}}
	if o.Model == "" {
		return kvs
	}
	haiku := o.family(o.Haiku)
	kvs = append(kvs,
		[2]string{"ANTHROPIC_MODEL", o.Model},
		[2]string{"ANTHROPIC_DEFAULT_OPUS_MODEL", o.family(o.Opus)},
		[2]string{"ANTHROPIC_DEFAULT_SONNET_MODEL", o.family(o.Sonnet)},
		[2]string{"ANTHROPIC_DEFAULT_HAIKU_MODEL", haiku},
		[2]string{"ANTHROPIC_SMALL_FAST_MODEL", haiku},
	)
	if o.ContextWindow > 0 && !strings.HasPrefix(strings.ToLower(o.Model), "claude") {
		// Claude Code assumes 1M tokens for a model it does not know and
		// would hit context-length errors instead of compacting.
		kvs = append(kvs, [2]string{claudeWindowVar, strconv.Itoa(o.ContextWindow)})
	}
	return kvs
}

// claudeEnv is the Claude Code environment for the gateway.
func claudeEnv(o *Options) map[string]string {
	env := map[string]string{}
	for _, kv := range claudeVars(o) {
		env[kv[0]] = kv[1]
	}
	return env
}

// opencode reads ~/.config/opencode/opencode.json (XDG_CONFIG_HOME on every
// OS); custom providers use the @ai-sdk/openai-compatible package.
var opencodeSpec = opencodeFamily("opencode", "opencode", "opencode", "opencode", "opencode.json",
	"https://opencode.ai/config.json", "OPENCODE_CONFIG_CONTENT")

// The Kilo Code CLI (`kilo`, an opencode fork) reads the same provider shape
// from ~/.config/kilo/kilo.json (XDG_CONFIG_HOME on every OS).
var kiloSpec = opencodeFamily("kilo", "Kilo Code CLI", "kilo", "kilo", "kilo.json",
	"https://app.kilo.ai/config.json", "KILO_CONFIG_CONTENT")

// opencodeFamily is the spec of an agent of opencode's config shape: the
// file dir/file under the XDG config directory, its JSON schema URL, and the
// variable holding inline config for `omniroute run`.
func opencodeFamily(id, name, cmd, dir, file, schema, inlineVar string) spec {
	return spec{
		id:   id,
		name: name,
		kind: KindFile,
		cmd:  cmd,
		path: func(o *Options) string {
			return joinIf(o.dirFromEnv("XDG_CONFIG_HOME", ".config"), dir, file)
		},
		apply: func(o *Options, old []byte, exists bool) ([]byte, error) {
			top, err := parseJSONObject(old)
			if err != nil {
				return nil, err
			}
			if !exists || len(top.members) == 0 {
				top.setString("$schema", schema)
			}
			providers, err := top.object("provider")
			if err != nil {
				return nil, err
			}
			prov, err := providers.object("omniroute")
			if err != nil {
				return nil, fmt.Errorf("provider.%v", err)
			}
			if err := mergeOpencodeProvider(o, prov); err != nil {
				return nil, err
			}
			providers.set("omniroute", prov.compact())
			top.set("provider", providers.compact())
			if o.Model != "" {
				top.setString("model", "omniroute/"+o.Model)
			}
			return top.pretty(detectIndent(old)), nil
		},
		configured: func(o *Options, data []byte) bool {
			u, ok := stringAt(data, "provider", "omniroute", "options", "baseURL")
			return ok && strings.TrimRight(u, "/") == o.v1()
		},
		instructions: func(o *Options, path string) Instructions {
			prov := &jsonObject{}
			_ = mergeOpencodeProvider(o, prov) // cannot fail on an empty object
			snippet := &jsonObject{}
			snippet.set("omniroute", prov.compact())
			steps := []string{
				fmt.Sprintf("Add this under \"provider\" in %s:\n%s", path, strings.TrimSpace(string(snippet.pretty("  ")))),
				fmt.Sprintf("Select the model with /models, or set \"model\": \"omniroute/%s\".", o.model()),
				fmt.Sprintf("For a single run, export %s (below) or use `omniroute run %s`.", inlineVar, id),
			}
			return Instructions{Env: opencodeEnv(o, inlineVar), Steps: steps}
		},
		runEnv: func(o *Options) map[string]string { return opencodeEnv(o, inlineVar) },
	}
}

// mergeOpencodeProvider writes the OmniRoute fields into prov, keeping any
// other options and models the user added.
func mergeOpencodeProvider(o *Options, prov *jsonObject) error {
	prov.setString("npm", "@ai-sdk/openai-compatible")
	prov.setString("name", "OmniRoute")
	opts, err := prov.object("options")
	if err != nil {
		return fmt.Errorf("provider.omniroute.%v", err)
	}
	opts.setString("baseURL", o.v1())
	opts.setString("apiKey", o.APIKey)
	prov.set("options", opts.compact())
	models, err := prov.object("models")
	if err != nil {
		return fmt.Errorf("provider.omniroute.%v", err)
	}
	if _, ok := models.get(o.model()); !ok && (o.Model != "" || len(models.members) == 0) {
		m := &jsonObject{}
		m.setString("name", o.model())
		models.set(o.model(), m.compact())
	}
	if o.Model != "" && o.ContextWindow > 0 {
		// Without a limit opencode knows no window for the model and turns
		// auto-compaction off: a long session ends in context-length errors.
		m, err := models.object(o.Model)
		if err != nil {
			return fmt.Errorf("provider.omniroute.models.%v", err)
		}
		limit, err := m.object("limit")
		if err != nil {
			return fmt.Errorf("provider.omniroute.models.%s.%v", o.Model, err)
		}
		limit.set("context", json.RawMessage(strconv.Itoa(o.ContextWindow)))
		limit.set("output", json.RawMessage(strconv.Itoa(o.outputTokens())))
		m.set("limit", limit.compact())
		models.set(o.Model, m.compact())
	}
	prov.set("models", models.compact())
	return nil
}

// opencodeEnv passes the provider as inline config in inlineVar
// (OPENCODE_CONFIG_CONTENT, KILO_CONFIG_CONTENT: merged over the user's files).
func opencodeEnv(o *Options, inlineVar string) map[string]string {
	prov := &jsonObject{}
	_ = mergeOpencodeProvider(o, prov)
	providers := &jsonObject{}
	providers.set("omniroute", prov.compact())
	cfg := &jsonObject{}
	cfg.set("provider", providers.compact())
	if o.Model != "" {
		cfg.setString("model", "omniroute/"+o.Model)
	}
	return map[string]string{inlineVar: string(cfg.compact())}
}

// clineCLIProvider is the provider id the Cline CLI uses for an
// OpenAI-compatible endpoint (what `cline auth -p openai` stores).
const clineCLIProvider = "openai-compatible"

// The Cline CLI (`cline`, npm package cline) reads its providers from
// ~/.cline/data/settings/providers.json (CLINE_DATA_DIR moves the data
// directory, CLINE_PROVIDER_SETTINGS_PATH the file): the settings of
// providers["openai-compatible"] and lastUsedProvider, the one a run uses.
var clineCLISpec = spec{
	id:   "cline-cli",
	name: "Cline CLI",
	kind: KindFile,
	path: func(o *Options) string {
		if v := o.Env["CLINE_PROVIDER_SETTINGS_PATH"]; v != "" && filepath.IsAbs(v) {
			return v
		}
		return joinIf(o.dirFromEnv("CLINE_DATA_DIR", ".cline", "data"), "settings", "providers.json")
	},
	apply: func(o *Options, old []byte, _ bool) ([]byte, error) {
		top, err := parseJSONObject(old)
		if err != nil {
			return nil, err
		}
		if _, ok := top.get("version"); !ok {
			top.set("version", json.RawMessage("1"))
		}
		top.setString("lastUsedProvider", clineCLIProvider)
		providers, err := top.object("providers")
		if err != nil {
			return nil, err
		}
		prov, err := providers.object(clineCLIProvider)
		if err != nil {
			return nil, fmt.Errorf("providers.%v", err)
		}
		settings, err := prov.object("settings")
		if err != nil {
			return nil, fmt.Errorf("providers.%s.%v", clineCLIProvider, err)
		}
		settings.setString("provider", clineCLIProvider)
		settings.setString("apiKey", o.APIKey)
		settings.setString("model", o.model())
		settings.setString("baseUrl", o.v1())
		prov.set("settings", settings.compact())
		// The CLI drops an entry without updatedAt (and falls back to its own
		// provider), so it is written as `cline auth` writes it.
		prov.setString("updatedAt", o.Now().UTC().Format("2006-01-02T15:04:05.000Z"))
		prov.setString("tokenSource", "manual")
		providers.set(clineCLIProvider, prov.compact())
		top.set("providers", providers.compact())
		return top.pretty(detectIndent(old)), nil
	},
	configured: func(o *Options, data []byte) bool {
		u, ok := stringAt(data, "providers", clineCLIProvider, "settings", "baseUrl")
		return ok && strings.TrimRight(u, "/") == o.v1()
	},
	instructions: func(o *Options, path string) Instructions {
		return Instructions{
			Env: map[string]string{},
			Steps: []string{
				fmt.Sprintf("Run: cline auth -p openai -b %s -k %s -m %s (it writes %s)", o.v1(), o.APIKey, o.model(), path),
				"Then run `cline \"your task\"`; `cline -m <model>` picks another model the gateway routes.",
			},
		}
	},
}

// qwenKeyVar is the variable Qwen Code reads the gateway key from: the
// provider entry names it (envKey) and the settings' "env" member sets it.
const qwenKeyVar = "OMNIROUTE_API_KEY"

// Qwen Code reads ~/.qwen/settings.json: OpenAI-compatible auth
// (security.auth.selectedType "openai"), model.name, a modelProviders.openai
// entry for the model (baseUrl, and envKey naming the variable with the key)
// and that variable in "env".
var qwenSpec = spec{
	id:   "qwen-code",
	name: "Qwen Code",
	kind: KindFile,
	cmd:  "qwen",
	path: func(o *Options) string { return joinIf(o.Home, ".qwen", "settings.json") },
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
			return nil, fmt.Errorf("security.%v", err)
		}
		auth.setString("selectedType", "openai")
		security.set("auth", auth.compact())
		top.set("security", security.compact())
		model, err := top.object("model")
		if err != nil {
			return nil, err
		}
		model.setString("name", o.model())
		top.set("model", model.compact())
		providers, err := top.object("modelProviders")
		if err != nil {
			return nil, err
		}
		list, err := qwenProviders(o, providers)
		if err != nil {
			return nil, err
		}
		providers.set("openai", list)
		top.set("modelProviders", providers.compact())
		env, err := top.object("env")
		if err != nil {
			return nil, err
		}
		env.setString(qwenKeyVar, o.APIKey)
		top.set("env", env.compact())
		return top.pretty(detectIndent(old)), nil
	},
	configured: func(o *Options, data []byte) bool {
		top, err := parseJSONObject(data)
		if err != nil {
			return false
		}
		providers, err := top.object("modelProviders")
		if err != nil {
			return false
		}
		raw, _ := providers.get("openai")
		var list []struct {
			BaseURL string `json:"baseUrl"`
			EnvKey  string `json:"envKey"`
		}
		if json.Unmarshal(raw, &list) != nil {
			return false
		}
		for _, p := range list {
			if p.EnvKey == qwenKeyVar && strings.TrimRight(p.BaseURL, "/") == o.v1() {
				return true
			}
		}
		return false
	},
	instructions: func(o *Options, path string) Instructions {
		return Instructions{
			Env: qwenEnv(o),
			Steps: []string{
				fmt.Sprintf("In %s set security.auth.selectedType to \"openai\", model.name to %q, and add {\"id\": %q, \"baseUrl\": %q, \"envKey\": %q} to modelProviders.openai.",
					path, o.model(), o.model(), o.v1(), qwenKeyVar),
				"Or export the variables below before starting `qwen` (Qwen Code needs Node.js 22 or newer).",
			},
		}
	},
	runEnv: qwenEnv,
}

// qwenProviders returns modelProviders.openai with the gateway's entry
// first and the user's entries after it (an older OmniRoute entry, the one
// naming qwenKeyVar, is replaced).
func qwenProviders(o *Options, providers *jsonObject) (json.RawMessage, error) {
	var list []json.RawMessage
	if raw, ok := providers.get("openai"); ok {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("%w: modelProviders.openai is not a list", ErrUnsupportedConfig)
		}
	}
	entry := &jsonObject{}
	entry.setString("id", o.model())
	entry.setString("name", o.model()+" (OmniRoute)")
	entry.setString("baseUrl", o.v1())
	entry.setString("envKey", qwenKeyVar)
	if o.ContextWindow > 0 {
		gen := &jsonObject{}
		gen.set("contextWindowSize", json.RawMessage(strconv.Itoa(o.ContextWindow)))
		entry.set("generationConfig", gen.compact())
	}
	out := []json.RawMessage{entry.compact()}
	for _, e := range list {
		var p struct {
			EnvKey string `json:"envKey"`
		}
		if json.Unmarshal(e, &p) == nil && p.EnvKey == qwenKeyVar {
			continue
		}
		out = append(out, e)
	}
	return json.Marshal(out)
}

// qwenEnv is Qwen Code's environment for the gateway (its OpenAI variables).
func qwenEnv(o *Options) map[string]string {
	return map[string]string{"OPENAI_BASE_URL": o.v1(), "OPENAI_API_KEY": o.APIKey, "OPENAI_MODEL": o.model()}
}
