// Package catalogdoc renders docs/PROVIDERS.md from the provider catalogue
// and the built-in provider error rules, so the page cannot drift from the
// code: its test fails when the committed page differs from Render's output.
package catalogdoc

import (
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

<!-- Generated from backend/providers/catalog.go and backend/resilience/rules/builtin.go; do not edit.
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
	case p.Dialect == providers.DialectAzure:
		return "OpenAI Chat Completions on Azure deployments"
	case p.Dialect == providers.DialectOllama:
		return "Ollama `/api/chat` (NDJSON stream), `/api/embed`"
	case p.Dialect == providers.DialectCopilot:
		return "OpenAI Chat Completions at the Copilot token's endpoint"
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
	case p.Dialect == providers.DialectAzure:
		d = "`GET /openai/deployments`, else the connection's deployments map"
	case p.Dialect == providers.DialectOllama:
		d = "`GET /api/tags`"
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

// addingAProvider is the page's guide to the provider folders.
const addingAProvider = `
## Adding a provider is creating one folder

What the gateway knows of a provider lives in ` + "`backend/providers/<name>/`" + `: its
executor and wire, and a ` + "`func Module() providers.Module`" + ` that hands the rest of the
gateway everything else. The only other file that names it is the list
` + "`backend/providers/registry/registry.go`" + ` (one import, one line); the wiring place
builds its catalogue from that list (` + "`registry.Catalog`" + `), and the management API,
routing, discovery, backups, store re-sealing and this page ask the module
instead of naming the provider. ` + "`tests/arch`" + ` (` + "`TestProviderNamedOnlyInItsFolder`" + `)
fails when a Go file outside the folder names a moved provider.

| Module field | What it gives | Who asks |
|---|---|---|
| ID, Rows | the catalogue id it serves; rows it adds to the catalogue | ` + "`Catalog.WithModules`" + ` |
| Dialect, Formats, NewExecutor | its executor, built once from the shared client, clock and environment, for each wire format it speaks | the wiring place (` + "`Catalog.Executors`" + `) |
| Data | the ` + "`providerSpecificData`" + ` schema: fields, types, which are secret and where they are sealed (` + "`apiKey`" + `, or a field ending in ` + "`Sealed`" + ` that the store and backups reseal and the API never returns), ` + "`Required`" + `, and ` + "`Apply`" + `, whose refusals are ` + "`*providers.FieldError`" + ` (field path + stable code, a 400 with ` + "`error.param`" + `) | ` + "`POST`/`PATCH /api/providers`" + ` |
| MaxKey, Check | the longest ` + "`apiKey`" + ` it takes; a check of the key against the object on every save that changes either | the management API |
| Connect | a stored connection's target parts: credentials, project, region, default endpoint | routing |
| Models | its own model list requests and parser | discovery |
| CheckedByCompletion; an executor that is a QuotaReader | an OAuth login checked by a one-token completion; its quota buckets read into the usage windows | the connection check |

Worked example: ` + "`bedrock`" + `. ` + "`backend/providers/bedrock/module.go`" + ` declares

` + "```go" + `
func Module() providers.Module {
	return providers.Module{
		ID: "bedrock", Dialect: Dialect, Formats: []providers.Format{providers.FormatOpenAI},
		NewExecutor: func(d providers.ExecDeps) providers.Executor { return New(d.Client, d.UserAgent, d.Now) },
		Data: &providers.DataSchema{
			Fields: []providers.Field{
				{Name: "region", Type: "string", Required: true},
				{Name: "accessKeyId", Type: "string", Required: true},
				{Name: "secretAccessKey", Type: "string", Secret: true, SealedAs: "apiKey"},
				{Name: "sessionToken", Type: "string", Secret: true, SealedAs: "sessionTokenSealed"},
				{Name: "profile", Type: "string"},
			},
			Required: true, RequiredMessage: "a bedrock connection needs providerSpecificData {region, accessKeyId, secretAccessKey}",
			Apply:    applyData, // field-precise checks; seals the secret key and session token
		},
		Connect: connect, // region → runtime endpoint; the sealed token opened
		Models:  &providers.ModelList{ /* signed GET /foundation-models, /inference-profiles */ },
	}
}
` + "```" + `

and ` + "`registry.go`" + ` lists ` + "`bedrock.Module()`" + `. A new provider does the same: a folder
with its executor (or none, when an existing wire serves it), a ` + "`Module()`" + ` whose ` + "`Rows`" + `
hold its catalogue row (` + "`Doc`" + ` gives its wording on this page), a test next to it, and
one line in the list; its name goes into ` + "`folderProviders`" + ` in ` + "`tests/arch/providers_test.go`" + `.
(This page's table is still rendered from the built-in catalogue: until its test
reads ` + "`registry.Catalog`" + `, a module's own rows are served but not listed here.)

Moved so far: ` + "`bedrock`, `vertex`, `gemini-cli` (codeassist)" + `. Their catalogue rows and
built-in error rules still sit in ` + "`backend/providers/catalog.go`" + ` and
` + "`backend/resilience/rules/builtin.go`" + ` (existing tests read them from
` + "`providers.NewCatalog()`" + ` and ` + "`rules.New(nil)`" + `, which cannot import the folders);
` + "`tests/arch`" + ` lists them as pending, and the list only shrinks.
`
