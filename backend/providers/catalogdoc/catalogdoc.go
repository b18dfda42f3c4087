// Package catalogdoc renders docs/PROVIDERS.md from the provider catalogue
// and the built-in provider error rules, so the page cannot drift from the
// code: its test fails when the committed page differs from Render's output.
package catalogdoc

import (
	_ "embed"
	"fmt"
	"strings"

	"omniroute/backend/providers"
	"omniroute/backend/resilience/rules"
)

// Regenerate is the command that rewrites docs/PROVIDERS.md.
const Regenerate = "OMNIROUTE_WRITE_DOCS=1 go test ./backend/providers/catalogdoc/"

// Render returns docs/PROVIDERS.md for the catalogue and the built-in tables.
func Render(cat *providers.Catalog, restate []rules.Restatement, builtin []rules.Rule) string {
	var b strings.Builder
	all := cat.All()
	fmt.Fprintf(&b, `# Providers

<!-- Generated from the provider registry's catalogue and built-in error rules; do not edit.
     Regenerate with: %s -->

The gateway knows %d providers. A connection names one (`+"`POST /api/providers {\"provider\": id}`"+`,
an alias works too); `+"`GET /api/providers/catalog`"+` lists the same entries. The base URL is the
default and a connection's `+"`baseUrl`"+` replaces it; user-defined providers require one.

- **Wire**: the upstream API the gateway speaks; every client format is translated to
  it ([translation.md](translation.md)). OpenAI Chat Completions providers also get
  `+"`/v1/embeddings`"+` and `+"`/v1/completions`"+` at their own endpoints;
  Gemini API providers serve `+"`/v1/embeddings`"+` with `+"`batchEmbedContents`"+`.
- **Features**: what the wire carries beyond text for at least some of the provider's
  models: tools (function calls), vision (image input), reasoning (a reasoning channel
  or effort), prefill (continues a trailing assistant message, used to finish a broken
  stream).
- **Discovery**: how a connection learns its models ([MODELS.md](MODELS.md)); when the
  upstream cannot answer, the catalogue's defaults stand in.
- **Error rules**: the built-in restatements and provider error rules
  ([RULES.md](RULES.md)); *full text* means rules read the whole error text, *scope
  acts* that a rule's scope is honoured. The rule `+"`tool-count-limit`"+` applies to
  every provider.

| Provider | Name | Base URL | Auth | Wire | Features | Discovery | Error rules |
|---|---|---|---|---|---|---|---|
`, Regenerate, len(all))
	for _, p := range all {
		id := "`" + p.ID + "`"
		if len(p.Aliases) > 0 {
			id += " (" + code(p.Aliases) + ")"
		}
		base := "`" + p.BaseURL + "`"
		if p.UserDefined {
			base = "required per connection"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n",
			id, p.Name, base, p.Auth(), wire(p), features(p), discovery(p), errorRules(p, restate, builtin))
	}
	b.WriteString(addingAProvider)
	return b.String()
}

func code(list []string) string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = "`" + s + "`"
	}
	return strings.Join(out, ", ")
}

func wire(p providers.Provider) string {
	switch {
	case p.Doc.Wire != "":
		return p.Doc.Wire
	case p.Format == providers.FormatOpenAI:
		return "OpenAI Chat Completions"
	case p.Format == providers.FormatAnthropic:
		return "Anthropic Messages"
	case p.Format == providers.FormatGemini:
		return "Gemini generateContent, batchEmbedContents"
	case p.Format == providers.FormatResponses:
		return "OpenAI Responses (Codex backend)"
	}
	return string(p.Format)
}

// prefill names the prefill feature, narrowed to the models that have it.
func prefill(p providers.Provider) string {
	if len(p.PrefillOnlyModels) == 0 {
		return "prefill"
	}
	return "prefill (" + code(p.PrefillOnlyModels) + " models)"
}

func features(p providers.Provider) string {
	var f []string
	for _, c := range []struct {
		on   bool
		name string
	}{{p.Tools, "tools"}, {p.Vision, "vision"}, {p.Reasoning, "reasoning"}, {p.AssistantPrefill, prefill(p)}} {
		if c.on {
			f = append(f, c.name)
		}
	}
	if len(f) == 0 {
		return "text"
	}
	return strings.Join(f, ", ")
}

func discovery(p providers.Provider) string {
	var d string
	switch {
	case p.NoModelList:
		return fmt.Sprintf("none: the catalogue's %d models", len(p.DefaultModels))
	case p.Doc.Discovery != "":
		d = p.Doc.Discovery
	case p.Format == providers.FormatAnthropic || p.Format == providers.FormatGemini:
		d = "`GET /models` (paged)"
	default:
		d = "`GET /models`"
	}
	if n := len(p.DefaultModels); n > 0 {
		d += fmt.Sprintf(", else %d catalogue models", n)
	}
	return d
}

func errorRules(p providers.Provider, restate []rules.Restatement, builtin []rules.Rule) string {
	var ids []string
	for _, r := range restate {
		if r.Provider == p.ID {
			ids = append(ids, "`"+r.ID+"` (restates "+statuses(r.FromStatuses)+" as "+fmt.Sprint(r.ToStatus)+")")
		}
	}
	for _, r := range builtin {
		if r.Provider == p.ID {
			ids = append(ids, "`"+r.ID+"`")
		}
	}
	var flags []string
	if p.RuleFullText {
		flags = append(flags, "full text")
	}
	if p.HonorsRuleScope {
		flags = append(flags, "scope acts")
	}
	if p.EgressBucketed {
		flags = append(flags, "per egress IP")
	}
	out := strings.Join(ids, ", ")
	if len(flags) > 0 {
		if out != "" {
			out += "; "
		}
		out += strings.Join(flags, ", ")
	}
	if out == "" {
		return "classifier only"
	}
	return out
}

func statuses(list []int) string {
	s := make([]string, len(list))
	for i, v := range list {
		s[i] = fmt.Sprint(v)
	}
	return strings.Join(s, "/")
}

// addingAProvider is the page's guide to the provider folders (prose, kept
// as Markdown next to the generator).
//
//go:embed adding.md
var addingAProvider string
