package agents

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Names of the model entries Setup owns in Continue's config: the chat model
// (roles chat, edit, apply), the autocomplete model and the embed model.
const (
	continueModelName        = "OmniRoute"
	continueAutocompleteName = "OmniRoute Autocomplete"
	continueEmbedName        = "OmniRoute Embed"
)

// continueOwned reports whether a model entry's name is one Setup owns.
func continueOwned(name string) bool {
	return name == continueModelName || name == continueAutocompleteName || name == continueEmbedName
}

// Continue reads ~/.continue/config.yaml (CONTINUE_GLOBAL_DIR moves the
// directory); OpenAI-compatible endpoints use provider "openai" with apiBase.
var continueSpec = spec{
	id:   "continue",
	name: "Continue",
	kind: KindFile,
	path: func(o *Options) string {
		return joinIf(o.dirFromEnv("CONTINUE_GLOBAL_DIR", ".continue"), "config.yaml")
	},
	apply: applyContinue,
	configured: func(o *Options, data []byte) bool {
		doc, err := parseContinue(data)
		if err != nil || doc.models == nil {
			return false
		}
		for _, it := range doc.items {
			if doc.field(it, "name") == continueModelName {
				return strings.TrimRight(doc.field(it, "apiBase"), "/") == o.v1()
			}
		}
		return false
	},
	instructions: func(o *Options, path string) Instructions {
		return Instructions{
			Env: map[string]string{},
			Steps: []string{
				fmt.Sprintf("Add these entries under models: in %s:\n%s", path, continueItem(o, 2, "\n")),
				"Reload Continue and pick \"" + continueModelName + "\" in the model selector.",
			},
		}
	},
	notes: func(_ *Options, path string) []string {
		legacy := filepath.Join(filepath.Dir(path), "config.json")
		if _, err := os.Stat(legacy); err != nil {
			return nil
		}
		return []string{"Continue uses config.yaml when it exists; models defined only in the deprecated " + legacy + " must be moved into config.yaml."}
	},
}

// continueItem renders the OmniRoute model entries at the given
// indentation: the chat model, the autocomplete model (Continue's "openai"
// provider sends its fill-in-the-middle prompt to the legacy /v1/completions)
// and, when one is served, the embed model (/v1/embeddings). The chat
// entry carries the model's context window when the gateway knows it.
func continueItem(o *Options, indent int, nl string) string {
	pad := strings.Repeat(" ", indent)
	entry := func(name, model, roles string) string {
		return pad + "- name: " + name + nl +
			pad + "  provider: openai" + nl +
			pad + "  model: " + yamlScalarText(model) + nl +
			pad + "  apiBase: " + yamlScalarText(o.v1()) + nl +
			pad + "  apiKey: " + yamlScalarText(o.APIKey) + nl +
			pad + "  roles: [" + roles + "]" + nl
	}
	auto := o.Autocomplete
	if auto == "" {
		auto = o.model()
	}
	chat := entry(continueModelName, o.model(), "chat, edit, apply")
	if o.ContextWindow > 0 {
		// Continue trims the conversation to the model's window (else 32k).
		chat += pad + "  defaultCompletionOptions:" + nl + pad + "    contextLength: " + strconv.Itoa(o.ContextWindow) + nl
	}
	out := chat + entry(continueAutocompleteName, auto, "autocomplete")
	if o.Embed != "" {
		out += entry(continueEmbedName, o.Embed, "embed")
	}
	return out
}

// continueDoc is the parsed shape of config.yaml around its models list.
type continueDoc struct {
	lines     []yline
	models    *yentry // nil when there is no models key
	flowEmpty bool    // models: []
	seqIndent int
	items     [][2]int // first and last line of each list item
}

// parseContinue locates the models block list; it fails on shapes it does
// not edit safely.
func parseContinue(src []byte) (*continueDoc, error) {
	lines, err := splitYAMLLines(src)
	if err != nil {
		return nil, err
	}
	entries, err := yamlTopLevel(lines)
	if err != nil {
		return nil, err
	}
	doc := &continueDoc{lines: lines, seqIndent: -1}
	for i := range entries {
		if entries[i].key != "models" {
			continue
		}
		if doc.models != nil {
			return nil, errors.New("models: appears twice")
		}
		doc.models = &entries[i]
	}
	e := doc.models
	if e == nil {
		return doc, nil
	}
	switch yamlScalarKind(e.rest) {
	case yamlEmpty:
	case yamlComplex:
		v := strings.TrimSpace(e.rest)
		if i := strings.Index(v, "#"); i >= 0 {
			v = strings.TrimSpace(v[:i])
		}
		if v != "[]" || e.last != e.first {
			return nil, errors.New("models: is not a block list (flow style, anchor or tag)")
		}
		doc.flowEmpty = true
		return doc, nil
	default:
		return nil, errors.New("models: is not a list")
	}
	for j := e.first + 1; j <= e.last; j++ {
		l := lines[j]
		if l.blank {
			continue
		}
		if doc.seqIndent < 0 {
			doc.seqIndent = l.indent
		}
		switch {
		case l.indent < doc.seqIndent:
			return nil, fmt.Errorf("YAML line %d: inconsistent indentation under models:", j+1)
		case l.indent == doc.seqIndent:
			if !isSeqItem(l.text) {
				return nil, fmt.Errorf("YAML line %d: models: is not a block list", j+1)
			}
			doc.items = append(doc.items, [2]int{j, j})
		default:
			doc.items[len(doc.items)-1][1] = j
		}
	}
	return doc, nil
}

// field returns the scalar value of key in the mapping of list item it, or
// "".
func (d *continueDoc) field(it [2]int, key string) string {
	first := d.lines[it[0]]
	rest := strings.TrimLeft(first.text[1:], " \t")
	contentIndent := first.indent + len(first.text) - len(rest)
	if rest != "" {
		if k, v, ok := yamlKey(rest); ok && k == key {
			return yamlScalarValue(v)
		}
	} else {
		contentIndent = -1
	}
	for j := it[0] + 1; j <= it[1]; j++ {
		l := d.lines[j]
		if l.blank {
			continue
		}
		if contentIndent < 0 {
			contentIndent = l.indent
		}
		if l.indent != contentIndent {
			continue
		}
		if k, v, ok := yamlKey(l.text); ok && k == key {
			return yamlScalarValue(v)
		}
	}
	return ""
}

// applyContinue adds or replaces the OmniRoute entries under models: (every
// entry it owns is replaced by the new set, where the first one was).
func applyContinue(o *Options, src []byte, exists bool) ([]byte, error) {
	nl := newlineOf(src)
	if !exists || len(bytes.TrimSpace(src)) == 0 {
		return []byte("name: OmniRoute" + nl + "version: 1.0.0" + nl + "schema: v1" + nl +
			"models:" + nl + continueItem(o, 2, nl)), nil
	}
	doc, err := parseContinue(src)
	if err != nil {
		return nil, err
	}
	if doc.models == nil {
		return appendText(src, "models:"+nl+continueItem(o, 2, nl), nl), nil
	}
	e := doc.models
	if doc.flowEmpty {
		start, end := lineRange(doc.lines, e.first, e.last)
		return applyEdits(src, []tomlEdit{{start: start, end: end, text: "models:" + nl + continueItem(o, 2, nl)}}), nil
	}
	if len(doc.items) == 0 {
		return applyEdits(src, []tomlEdit{insertAfterLine(src, doc.lines, e.first, continueItem(o, 2, nl), nl)}), nil
	}
	var edits []tomlEdit
	found := false
	for _, it := range doc.items {
		if !continueOwned(doc.field(it, "name")) {
			continue
		}
		start, end := lineRange(doc.lines, it[0], it[1])
		text := ""
		if !found {
			text, found = continueItem(o, doc.seqIndent, nl), true
		}
		edits = append(edits, tomlEdit{start: start, end: end, text: text})
	}
	if !found {
		last := doc.items[len(doc.items)-1][1]
		edits = append(edits, insertAfterLine(src, doc.lines, last, continueItem(o, doc.seqIndent, nl), nl))
	}
	return applyEdits(src, edits), nil
}

// aider reads ~/.aider.conf.yml, a flat YAML mapping of its command-line
// options; "openai/<model>" routes a model through openai-api-base.
var aiderSpec = spec{
	id:   "aider",
	name: "aider",
	kind: KindFile,
	cmd:  "aider",
	path: func(o *Options) string {
		return joinIf(o.Home, ".aider.conf.yml")
	},
	apply: func(o *Options, old []byte, _ bool) ([]byte, error) {
		return setTopLevelKeys(old, aiderKeys(o))
	},
	configured: func(o *Options, data []byte) bool {
		lines, err := splitYAMLLines(data)
		if err != nil {
			return false
		}
		entries, err := yamlTopLevel(lines)
		if err != nil {
			return false
		}
		for _, e := range entries {
			if e.key == "openai-api-base" {
				return strings.TrimRight(yamlScalarValue(e.rest), "/") == o.v1()
			}
		}
		return false
	},
	instructions: func(o *Options, path string) Instructions {
		var b strings.Builder
		for _, kv := range aiderKeys(o) {
			b.WriteString(kv[0] + ": " + kv[1] + "\n")
		}
		return Instructions{
			Env: aiderEnv(o),
			Steps: []string{
				fmt.Sprintf("Add to %s:\n%s", path, b.String()),
				fmt.Sprintf("Or export the variables below; start aider with --model openai/%s (the openai/ prefix sends the model through the OpenAI-compatible base URL).", o.model()),
			},
		}
	},
	runEnv: aiderEnv,
}

// aiderKeys are the .aider.conf.yml keys Setup sets, with rendered values.
func aiderKeys(o *Options) [][2]string {
	kvs := [][2]string{
		{"openai-api-base", yamlScalarText(o.v1())},
		{"openai-api-key", yamlScalarText(o.APIKey)},
	}
	if o.Model != "" {
		kvs = append(kvs, [2]string{"model", yamlScalarText("openai/" + o.Model)})
	}
	return kvs
}

// aiderEnv is aider's environment for the gateway (AIDER_MODEL mirrors
// --model).
func aiderEnv(o *Options) map[string]string {
	env := map[string]string{
		"OPENAI_API_BASE": o.v1(),
		"OPENAI_API_KEY":  o.APIKey,
	}
	if o.Model != "" {
		env["AIDER_MODEL"] = "openai/" + o.Model
	}
	return env
}
