package agents

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// codexKeyEnv is the variable `omniroute run codex` hands Codex the key in
// (env_key), so the key is never on a command line.
const codexKeyEnv = "OMNIROUTE_API_KEY"

// Codex CLI reads $CODEX_HOME/config.toml (default ~/.codex); a custom
// provider is a [model_providers.<id>] table selected by the root key
// model_provider, and wire_api = "responses" makes it call /v1/responses.
// Setup writes the key as the table's experimental_bearer_token (Codex sends
// it as "Authorization: Bearer"), so codex works in a fresh shell with no
// exported variable; the file is written 0600. An env_key is not written:
// Codex refuses to start when an env_key variable is unset.
var codexSpec = spec{
	id:   CodexID,
	name: "Codex CLI",
	kind: KindFile,
	cmd:  "codex",
	path: func(o *Options) string {
		return joinIf(o.dirFromEnv("CODEX_HOME", ".codex"), "config.toml")
	},
	apply: func(o *Options, old []byte, _ bool) ([]byte, error) {
		return applyCodex(o, old)
	},
	configured: func(o *Options, data []byte) bool {
		stmts, err := scanTOML(data)
		if err != nil {
			return false
		}
		var table []string
		var provider, baseURL string
		for _, st := range stmts {
			switch {
			case st.kind != tomlKeyVal:
				table = st.key
			case len(table) == 0 && keyIs(st.key, "model_provider"):
				provider, _ = tomlUnquote(st.value)
			case keyIs(table, "model_providers", "omniroute") && keyIs(st.key, "base_url"):
				baseURL, _ = tomlUnquote(st.value)
			}
		}
		return provider == "omniroute" && strings.TrimRight(baseURL, "/") == o.v1()
	},
	instructions: func(o *Options, path string) Instructions {
		var root strings.Builder
		for _, kv := range codexRootKeys(o) {
			root.WriteString(kv[0] + " = " + kv[1] + "\n")
		}
		return Instructions{
			Env: map[string]string{},
			Steps: []string{
				fmt.Sprintf("Add to %s (root keys above the first [table]):\n%s\n%s", path, root.String(), codexTable(o, "\n")),
				"Or start Codex with `omniroute run codex [codex arguments…]`, which passes the same settings without writing them.",
			},
		}
	},
	runEnv: func(o *Options) map[string]string {
		return map[string]string{codexKeyEnv: o.APIKey}
	},
	runArgs: codexRunArgs,
}

// codexRunArgs are the -c overrides `omniroute run codex` puts before the
// user's arguments: the provider table (key read from codexKeyEnv) and model.
func codexRunArgs(o *Options) []string {
	const p = "model_providers.omniroute."
	args := []string{
		"-c", "model_provider=" + tomlQuote("omniroute"),
		"-c", p + "name=" + tomlQuote("OmniRoute"),
		"-c", p + "base_url=" + tomlQuote(o.v1()),
		"-c", p + "wire_api=" + tomlQuote("responses"),
		"-c", p + "env_key=" + tomlQuote(codexKeyEnv),
	}
	if o.Model != "" {
		args = append(args, "-c", "model="+tomlQuote(o.Model))
	}
	if o.ContextWindow > 0 {
		args = append(args, "-c", codexWindowKey+"="+strconv.Itoa(o.ContextWindow))
	}
	return args
}

// codexWindowKey is Codex's context-window override: for a model missing
// from its own catalog (every model behind the gateway but OpenAI's) Codex
// otherwise runs on fallback metadata with a window that is not the model's,
// and compacts at 90% of the wrong number.
const codexWindowKey = "model_context_window"

// codexRootKeys are the root key/values Setup sets, as TOML text.
func codexRootKeys(o *Options) [][2]string {
	kvs := [][2]string{{"model_provider", tomlQuote("omniroute")}}
	if o.Model != "" {
		kvs = append(kvs, [2]string{"model", tomlQuote(o.Model)})
	}
	if o.ContextWindow > 0 {
		kvs = append(kvs, [2]string{codexWindowKey, strconv.Itoa(o.ContextWindow)})
	}
	return kvs
}

// codexTable is the provider table, ending with nl.
func codexTable(o *Options, nl string) string {
	return strings.Join([]string{
		"[model_providers.omniroute]",
		`name = "OmniRoute"`,
		"base_url = " + tomlQuote(o.v1()),
		`wire_api = "responses"`,
		"experimental_bearer_token = " + tomlQuote(o.APIKey),
	}, nl) + nl
}

// applyCodex sets the root keys and the [model_providers.omniroute] table,
// replacing earlier OmniRoute statements and keeping all other bytes.
func applyCodex(o *Options, src []byte) ([]byte, error) {
	stmts, err := scanTOML(src)
	if err != nil {
		return nil, err
	}
	nl := newlineOf(src)
	want := codexRootKeys(o)
	seen := make([]bool, len(want))
	var edits []tomlEdit
	var table []string
	lastRootEnd, tableIdx := -1, -1
	for i, st := range stmts {
		if st.kind != tomlKeyVal {
			table = st.key
			if keyIs(st.key, "model_providers", "omniroute") {
				if st.kind == tomlArrayTable {
					return nil, errors.New("model_providers.omniroute is an array of tables")
				}
				if tableIdx >= 0 {
					return nil, errors.New("[model_providers.omniroute] appears twice")
				}
				tableIdx = i
			}
			continue
		}
		full := append(append([]string(nil), table...), st.key...)
		if keyIs(full, "model_providers") ||
			(hasPrefixKey(full, "model_providers", "omniroute") && !hasPrefixKey(table, "model_providers", "omniroute")) {
			return nil, errors.New("model_providers.omniroute is defined with dotted keys or an inline table; edit it by hand")
		}
		if len(table) != 0 {
			continue
		}
		lastRootEnd = st.end
		if o.ContextWindow <= 0 && keyIs(st.key, codexWindowKey) {
			// A window written for an earlier model must not outlive it.
			edits = append(edits, tomlEdit{start: st.start, end: st.end})
			continue
		}
		for w, kv := range want {
			if !keyIs(st.key, kv[0]) {
				continue
			}
			text := "" // later duplicates are dropped
			if !seen[w] {
				text = kv[0] + " = " + kv[1] + nl
				seen[w] = true
			}
			edits = append(edits, tomlEdit{start: st.start, end: st.end, text: text})
		}
	}

	var missing strings.Builder
	for w, kv := range want {
		if !seen[w] {
			missing.WriteString(kv[0] + " = " + kv[1] + nl)
		}
	}
	if missing.Len() > 0 {
		pos, text := lastRootEnd, missing.String()
		if pos < 0 {
			pos = 0
			if len(stmts) > 0 {
				text += nl // blank line before the first table
			}
		}
		if pos == len(src) && !endsWithNewline(src) {
			text = nl + text
		}
		edits = append(edits, tomlEdit{start: pos, end: pos, text: text})
	}

	block := codexTable(o, nl)
	if tableIdx >= 0 {
		h := stmts[tableIdx]
		end := h.end
		for j := tableIdx + 1; j < len(stmts) && stmts[j].kind == tomlKeyVal; j++ {
			end = stmts[j].end
		}
		edits = append(edits, tomlEdit{start: h.start, end: end, text: block})
	}
	out := applyEdits(src, edits)
	if tableIdx < 0 {
		if !endsWithNewline(out) {
			out = append(out, nl...)
		}
		if len(out) > 0 {
			out = append(out, nl...)
		}
		out = append(out, block...)
	}
	return out, nil
}

// CodexID is the Codex CLI agent's id (its model family in the agent model
// map has the same name).
const CodexID = "codex"
