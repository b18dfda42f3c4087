package agents

import (
	"encoding/json"
	"fmt"
	"strings"
)

// crushProvider is the provider id Setup writes into Crush's config.
const crushProvider = "omniroute"

// Crush (charmbracelet/crush, npm @charmland/crush) reads
// $XDG_CONFIG_HOME/crush/crush.json (~/.config/crush/crush.json): a custom
// provider under providers.<id> with type "openai-compat", base_url (the
// gateway's /v1), api_key and the models it serves (id, name and, when
// known, context_window), and models.large / models.small naming the
// provider and model a session uses. Crush drops a custom provider without
// models, so the entry always lists the chosen one; the user's other
// providers, models and options are kept.
var crushSpec = spec{
	id:   "crush",
	name: "Crush",
	kind: KindFile,
	path: func(o *Options) string {
		return joinIf(o.dirFromEnv("XDG_CONFIG_HOME", ".config"), "crush", "crush.json")
	},
	apply: func(o *Options, old []byte, exists bool) ([]byte, error) {
		top, err := parseJSONObject(old)
		if err != nil {
			return nil, err
		}
		if !exists || len(top.members) == 0 {
			top.setString("$schema", "https://charm.land/crush.json")
		}
		providers, err := top.object("providers")
		if err != nil {
			return nil, err
		}
		prov, err := providers.object(crushProvider)
		if err != nil {
			return nil, fmt.Errorf("providers.%v", err)
		}
		prov.setString("name", "OmniRoute")
		prov.setString("type", "openai-compat")
		prov.setString("base_url", o.v1())
		prov.setString("api_key", o.APIKey)
		models, err := crushModels(o, prov)
		if err != nil {
			return nil, err
		}
		prov.set("models", models)
		providers.set(crushProvider, prov.compact())
		top.set("providers", providers.compact())
		if o.Model != "" {
			sel, err := top.object("models")
			if err != nil {
				return nil, err
			}
			for _, size := range []string{"large", "small"} {
				pick := &jsonObject{}
				pick.setString("provider", crushProvider)
				pick.setString("model", o.Model)
				sel.set(size, pick.compact())
			}
			top.set("models", sel.compact())
		}
		return top.pretty(detectIndent(old)), nil
	},
	configured: func(o *Options, data []byte) bool {
		u, ok := stringAt(data, "providers", crushProvider, "base_url")
		return ok && strings.TrimRight(u, "/") == o.v1()
	},
	instructions: func(o *Options, path string) Instructions {
		prov := &jsonObject{}
		prov.setString("name", "OmniRoute")
		prov.setString("type", "openai-compat")
		prov.setString("base_url", o.v1())
		prov.setString("api_key", o.APIKey)
		models, _ := crushModels(o, prov) // cannot fail on an empty object
		prov.set("models", models)
		snippet := &jsonObject{}
		snippet.set(crushProvider, prov.compact())
		return Instructions{
			Env: map[string]string{},
			Steps: []string{
				fmt.Sprintf("Add this under \"providers\" in %s:\n%s", path, strings.TrimSpace(string(snippet.pretty("  ")))),
				fmt.Sprintf("Pick %s (OmniRoute) with Crush's model switcher (ctrl+l), or set \"models\": {\"large\": {\"provider\": %q, \"model\": %q}}.", o.model(), crushProvider, o.model()),
			},
		}
	},
}

// crushModels returns prov's models list with the chosen model first (its
// context window set when known) and the user's other entries after it.
func crushModels(o *Options, prov *jsonObject) (json.RawMessage, error) {
	var list []json.RawMessage
	if raw, ok := prov.get("models"); ok {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("%w: providers.%s.models is not a list", ErrUnsupportedConfig, crushProvider)
		}
	}
	entry := &jsonObject{}
	entry.setString("id", o.model())
	entry.setString("name", o.model()+" (OmniRoute)")
	if o.ContextWindow > 0 {
		entry.set("context_window", json.RawMessage(fmt.Sprint(o.ContextWindow)))
	}
	out := []json.RawMessage{entry.compact()}
	for _, e := range list {
		var m struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(e, &m) == nil && m.ID == o.model() {
			continue
		}
		out = append(out, e)
	}
	return json.Marshal(out)
}
