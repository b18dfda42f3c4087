package arch

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"omniroute/backend/providers/registry"
)

// registryList is the one file outside the provider folders allowed to name
// every provider: the list of modules the wiring place builds its catalogue from.
const registryList = "backend/providers/registry/registry.go"

// folderProvider is a provider whose folder holds what the gateway knows
// of it (docs/PROVIDERS.md, "Adding a provider").
type folderProvider struct {
	// name is the word no other Go file may contain (case-insensitive).
	name string
	// folder is backend/providers/<folder>/.
	folder string
	// fixtures are test files that may name it (they test it through the gateway).
	fixtures []string
	// pending are files that still name it, each with why; the list only shrinks.
	pending map[string]string
}

// folderProviders are the providers moved into their folders; the goal is all of them.
func folderProviders() []folderProvider {
	return []folderProvider{
		{name: "bedrock", folder: "bedrock",
			fixtures: []string{"backend/server/bedrock_test.go", "backend/gateway/relayed_test.go", "backend/backup/backup_test.go", "backend/resilience/rules/rules_test.go"}},
		{name: "azure", folder: "azure",
			fixtures: []string{"backend/server/family_test.go", "backend/server/azure_test.go",
				"backend/redact/url_test.go", "backend/resilience/verdict/classify_test.go", "backend/resilience/rules/rules_test.go"}},
		{name: "vertex", folder: "vertex",
			fixtures: []string{"backend/gateway/embedcodec_test.go", "backend/providers/connfields/placeholder_test.go", "backend/resilience/verdict/classify_test.go"}},
		{name: "codeassist", folder: "codeassist",
			fixtures: []string{"backend/gateway/embedcodec_test.go", "backend/resilience/rules/engine_test.go"}},
		{name: "copilot", folder: "copilot",
			fixtures: []string{"backend/oauth/copilot_test.go", "backend/server/copilot_test.go", "backend/resilience/rules/rules_test.go"}},
	}
}

// TestProviderNamedOnlyInItsFolder: a Go file outside backend/providers/<name>/
// that names a moved provider fails, unless it is the registry list, a listed
// fixture or a listed pending file; a listed file that no longer names the
// provider fails too, so the lists only shrink.
func TestProviderNamedOnlyInItsFolder(t *testing.T) {
	root := filepath.Join("..", "..")
	var files []string
	for _, top := range []string{"backend", "app"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".go") {
				rel, _ := filepath.Rel(root, path)
				files = append(files, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	text := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		text[f] = strings.ToLower(string(b))
	}
	if _, ok := text[registryList]; !ok {
		t.Fatalf("%s is missing", registryList)
	}
	for _, p := range folderProviders() {
		t.Run(p.name, func(t *testing.T) {
			for _, msg := range p.violations(text) {
				t.Error(msg)
			}
		})
	}
}

// violations are the files of text (path → lower-case content) that name p
// outside its folder and its exceptions, the exceptions that no longer name
// it, and a registry list that does not list its folder.
func (p folderProvider) violations(text map[string]string) []string {
	var out []string
	allowed := map[string]bool{registryList: true}
	for _, f := range p.fixtures {
		allowed[f] = true
	}
	for f := range p.pending {
		allowed[f] = true
	}
	if !strings.Contains(text[registryList], `"omniroute/backend/providers/`+p.folder+`"`) {
		out = append(out, registryList+" does not list backend/providers/"+p.folder)
	}
	prefix := "backend/providers/" + p.folder + "/"
	for f, body := range text {
		switch {
		case strings.HasPrefix(f, prefix):
		case allowed[f]:
			if f != registryList && !strings.Contains(body, p.name) {
				out = append(out, f+" no longer names "+p.name+": drop it from the exceptions in tests/arch")
			}
		case strings.Contains(body, p.name):
			out = append(out, f+" names "+p.name+" outside "+prefix+": ask the provider's module (providers.Module) instead")
		}
	}
	for f := range allowed {
		if _, ok := text[f]; !ok {
			out = append(out, f+" is listed as an exception but does not exist")
		}
	}
	sort.Strings(out)
	return out
}

// TestProviderNameCheckCatchesAStray: the check fails on a file naming a
// moved provider outside its folder, on a stale exception and on a folder
// the registry does not list; it passes the folder and the list themselves.
func TestProviderNameCheckCatchesAStray(t *testing.T) {
	p := folderProvider{name: "acme", folder: "acme", fixtures: []string{"backend/server/acme_test.go"}}
	for _, c := range []struct {
		name string
		text map[string]string
		want int
	}{
		{"clean", map[string]string{registryList: `"omniroute/backend/providers/acme"`, "backend/providers/acme/module.go": "acme", "backend/server/acme_test.go": "acme", "backend/api/x.go": "generic"}, 0},
		{"stray", map[string]string{registryList: `"omniroute/backend/providers/acme"`, "backend/providers/acme/module.go": "acme", "backend/server/acme_test.go": "acme", "backend/api/x.go": "if id == \"acme\""}, 1},
		{"stale fixture", map[string]string{registryList: `"omniroute/backend/providers/acme"`, "backend/server/acme_test.go": "generic"}, 1},
		{"unlisted", map[string]string{registryList: "", "backend/server/acme_test.go": "acme"}, 1},
	} {
		if got := p.violations(c.text); len(got) != c.want {
			t.Errorf("%s: %d violations %v, want %d", c.name, len(got), got, c.want)
		}
	}
}

// literalProvider is a registered provider under the literal rule: no Go
// file outside its folder may spell its id or an alias as a string literal
// (go/ast; test files are fixtures that send them as data). Many ids are
// common words (an agent, a CLI, a wire format or a model family shares
// them), so the rule is on whole literals, not on words.
type literalProvider struct {
	folder string
	// names are the catalogue id and aliases.
	names []string
	// others are files whose literal names the agent, CLI, wire format or
	// model family that shares the word, not the provider, each with why; only shrinks.
	others map[string]string
	// pending are files that still decide by the provider's id, each with
	// why; the list only shrinks.
	pending map[string]string
}

// literalException is what literalExceptions says of one provider id.
type literalException struct {
	others, pending map[string]string
}

// wireFormat is the reason a file spells a wire format's name
// (providers.Format*, translate's client formats), which the provider of
// the same name shares.
const wireFormat = "a wire format's name (providers.Format*, translate.Format), not the provider"

// literalExceptions are, by provider id, the files outside its folder whose
// literal of its id or an alias is something else (others) or still
// decides by the provider (pending).
func literalExceptions() map[string]literalException {
	return map[string]literalException{
		"claude": {others: map[string]string{
			"backend/agents/json_agents.go": "Claude Code's command is `claude`; its context-window rule reads model names starting claude",
			"backend/routing/agentmap.go":   "Claude model names start with claude (the agent model families)",
		}},
		"codex": {others: map[string]string{
			"backend/agents/codex.go":     "the Codex CLI agent's id and command",
			"backend/config/settings.go":  "the agent model map's codex family key",
			"backend/routing/agentmap.go": "the codex model family (Codex CLI's models)",
		}},
		"openai": {others: map[string]string{
			"backend/providers/catalog.go":   wireFormat,
			"backend/translate/translate.go": wireFormat,
			"backend/agents/json_agents.go":  "Qwen Code's auth type and modelProviders key (`openai`), the CLI's own config words",
		}},
		"anthropic": {others: map[string]string{
			"backend/providers/catalog.go":   wireFormat,
			"backend/translate/translate.go": wireFormat,
		}},
		"gemini": {others: map[string]string{
			"backend/providers/catalog.go":   wireFormat,
			"backend/translate/translate.go": wireFormat,
			"backend/agents/gemini_agent.go": "the Gemini CLI's command is `gemini`",
		}},
		"deepseek": {others: map[string]string{
			"backend/routing/registry.go": "an assistantPrefill mode (DeepSeek's chat prefix completion, which other servers speak too), not the provider",
		}},
		"openai-compatible": {others: map[string]string{
			"backend/agents/json_agents.go": "the Cline CLI's own provider key in its settings file",
		}},
		"opencode": {others: map[string]string{
			"backend/agents/json_agents.go": "the OpenCode agent's id, command and config folder",
		}},
		"gemini-cli": {others: map[string]string{
			"backend/agents/gemini_agent.go": "the Gemini CLI agent's id (the CLI the subscription's login comes from)",
		}},
		"dashscope": {others: map[string]string{
			"backend/agents/json_agents.go": "the Qwen Code CLI's command is `qwen`",
		}},
	}
}

// literalProviders are every registered provider (backend/providers/registry):
// its folder is the one whose Go files declare `const ID = "<id>"`, its
// names the id and aliases of the module's rows.
func literalProviders(t *testing.T) []literalProvider {
	t.Helper()
	folders, err := providerFolders(filepath.Join("..", "..", "backend", "providers"))
	if err != nil {
		t.Fatal(err)
	}
	exceptions := literalExceptions()
	var out []literalProvider
	for _, m := range registry.Modules() {
		folder, ok := folders[m.ID]
		if !ok {
			t.Errorf("module %s: no folder under backend/providers declares const ID = %q", m.ID, m.ID)
			continue
		}
		p := literalProvider{folder: folder, others: exceptions[m.ID].others, pending: exceptions[m.ID].pending}
		delete(exceptions, m.ID)
		for _, r := range m.Rows {
			p.names = append(p.names, r.ID)
			p.names = append(p.names, r.Aliases...)
		}
		if len(p.names) == 0 {
			t.Errorf("module %s has no row", m.ID)
		}
		out = append(out, p)
	}
	for id := range exceptions {
		t.Errorf("literalExceptions names %s, which is not a registered module", id)
	}
	return out
}

// providerFolders maps each catalogue id to the folder under dir whose
// non-test Go files declare it as `const ID = "<id>"`.
func providerFolders(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(dir, e.Name(), "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			file, err := parser.ParseFile(token.NewFileSet(), f, src, parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			for _, d := range file.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.CONST {
					continue
				}
				for _, spec := range g.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if n.Name != "ID" || i >= len(vs.Values) {
							continue
						}
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							if id, err := strconv.Unquote(lit.Value); err == nil {
								out[id] = e.Name()
							}
						}
					}
				}
			}
		}
	}
	return out, nil
}

// TestEveryProviderIsUnderTheLiteralRule: the literal rule's list is the
// registry's, so every registered id and alias is checked: the catalogue
// has as many names as the list and the known providers are all there.
func TestEveryProviderIsUnderTheLiteralRule(t *testing.T) {
	names := map[string]bool{}
	for _, p := range literalProviders(t) {
		for _, n := range p.names {
			if names[n] {
				t.Errorf("%s is listed twice", n)
			}
			names[n] = true
		}
	}
	cat := registry.Catalog(nil)
	want := 0
	for _, p := range cat.All() {
		want += 1 + len(p.Aliases)
	}
	if len(names) != want {
		t.Errorf("the rule checks %d names, the catalogue has %d", len(names), want)
	}
	for _, n := range []string{"openai", "oai", "anthropic", "claude-api", "gemini", "google", "glm", "zai", "xai", "grok", "lm-studio", "lmstudio",
		"ollama-local", "openai-compatible", "anthropic-compatible", "claude", "codex", "ollama", "bedrock", "azure-openai", "vertex", "github-copilot", "gemini-cli"} {
		if !names[n] {
			t.Errorf("%s is not under the literal rule", n)
		}
	}
}

// TestProviderLiteralOnlyInItsFolder: a Go file (not a test) outside
// backend/providers/<folder>/ that spells a literal provider's id or alias
// as a string literal fails, unless listed (an agent's or a model family's
// word, or pending); a listed file that no longer spells it fails too.
func TestProviderLiteralOnlyInItsFolder(t *testing.T) {
	root := filepath.Join("..", "..")
	lits := map[string]map[string]bool{} // file → its string literals
	var registry string
	for _, top := range []string{"backend", "app", "."} {
		dir := filepath.Join(root, top)
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && top == "." && path != dir {
				return filepath.SkipDir // the top level's own files only
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if rel == registryList {
				registry = string(b)
			}
			set, err := stringLiterals(rel, b)
			if err != nil {
				return err
			}
			lits[rel] = set
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range literalProviders(t) {
		t.Run(p.folder, func(t *testing.T) {
			for _, msg := range p.violations(lits, registry) {
				t.Error(msg)
			}
		})
	}
}

// stringLiterals are the values of a Go file's string literals (import
// paths included: a provider's package path is not its id).
func stringLiterals(name string, src []byte) (map[string]bool, error) {
	f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if v, err := strconv.Unquote(lit.Value); err == nil {
				out[v] = true
			}
		}
		return true
	})
	return out, nil
}

// violations are the files of lits (path → string literals) spelling one of
// p's names outside its folder and its lists, the listed files that no
// longer spell one, and a registry list that does not list its folder.
func (p literalProvider) violations(lits map[string]map[string]bool, registry string) []string {
	var out []string
	if !strings.Contains(registry, `"omniroute/backend/providers/`+p.folder+`"`) {
		out = append(out, registryList+" does not list backend/providers/"+p.folder)
	}
	spells := func(set map[string]bool) bool {
		for _, n := range p.names {
			if set[n] {
				return true
			}
		}
		return false
	}
	prefix := "backend/providers/" + p.folder + "/"
	for f, set := range lits {
		_, other := p.others[f]
		_, pending := p.pending[f]
		switch {
		case strings.HasPrefix(f, prefix):
		case other || pending:
			if !spells(set) {
				out = append(out, f+" no longer spells "+strings.Join(p.names, " or ")+": drop it from the lists in tests/arch")
			}
		case spells(set):
			out = append(out, f+" spells the provider id "+strings.Join(p.names, " or ")+" outside "+prefix+": ask the provider's module (providers.Module) instead")
		}
	}
	for _, list := range []map[string]string{p.others, p.pending} {
		for f := range list {
			if _, ok := lits[f]; !ok {
				out = append(out, f+" is listed as an exception but does not exist")
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestProviderLiteralCheckCatchesAStray: the literal check fails on a file
// spelling the id or an alias as a literal outside the folder, and on a
// stale exception; it passes a comment, an identifier, a longer literal
// and a struct tag naming the word, and the folder itself.
func TestProviderLiteralCheckCatchesAStray(t *testing.T) {
	p := literalProvider{folder: "acme", names: []string{"acme", "ac"}, others: map[string]string{"backend/agents/acme.go": "the acme agent"}}
	const reg = `"omniroute/backend/providers/acme"`
	parse := func(src string) map[string]bool {
		set, err := stringLiterals("x.go", []byte("package x\n"+src))
		if err != nil {
			t.Fatal(err)
		}
		return set
	}
	clean := map[string]map[string]bool{
		"backend/providers/acme/module.go": parse(`const ID = "acme"`),
		"backend/agents/acme.go":           parse(`var id = "acme"`),
		"backend/api/x.go":                 parse("// acme\nvar acme = \"acme-local\"\ntype T struct{ A string `json:\"acme\"` }"),
	}
	for _, c := range []struct {
		name  string
		extra map[string]map[string]bool
		reg   string
		want  int
	}{
		{"clean", nil, reg, 0},
		{"stray id", map[string]map[string]bool{"backend/api/y.go": parse(`func f(id string) bool { return id == "acme" }`)}, reg, 1},
		{"stray alias", map[string]map[string]bool{"backend/api/y.go": parse(`var m = map[string]int{"ac": 1}`)}, reg, 1},
		{"stale", map[string]map[string]bool{"backend/agents/acme.go": parse(`var id = "other"`)}, reg, 1},
		{"unlisted", nil, "", 1},
	} {
		lits := map[string]map[string]bool{}
		for f, s := range clean {
			lits[f] = s
		}
		for f, s := range c.extra {
			lits[f] = s
		}
		if got := p.violations(lits, c.reg); len(got) != c.want {
			t.Errorf("%s: %d violations %v, want %d", c.name, len(got), got, c.want)
		}
	}
}
