// Package arch enforces the dependency direction of DESIGN.md: the resilience
// layers know nothing of HTTP handlers, storage, configuration or each other.
package arch

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "omniroute/"

func imports(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			out[p] = true
		}
	}
	return out
}

// layer is one package's place in the dependency graph.
type layer struct {
	pkg     string
	allowed []string // module packages it may import
	banned  []string // third-party imports it must not use
}

// unlayered are the packages that may import any other: the wiring place and
// the HTTP edge on top of everything.
var unlayered = map[string]bool{"backend/server": true, "backend/api": true}

// TestEveryPackageHasALayer: a new backend package gets its rule here, so the
// graph the design describes cannot grow past the test unseen.
func TestEveryPackageHasALayer(t *testing.T) {
	known := map[string]bool{}
	for _, r := range layers() {
		known[r.pkg] = true
	}
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(filepath.Join(root, "backend"), func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || d.Name() == "testdata" {
			return err
		}
		files, _ := filepath.Glob(filepath.Join(path, "*.go"))
		hasCode := false
		for _, f := range files {
			hasCode = hasCode || !strings.HasSuffix(f, "_test.go")
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if hasCode && !known[rel] && !unlayered[rel] {
			t.Errorf("%s has no layering rule in tests/arch", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestLayering(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, r := range layers() {
		t.Run(r.pkg, func(t *testing.T) { checkLayer(t, root, r) })
	}
}

// rowModules are the provider folders holding a catalogue row, its rules
// and prices and no executor (the wire's executor serves them): they know
// the catalogue and the rule types alone.
func rowModules() []string {
	var out []string
	for _, name := range []string{"agentrouter", "anthropicapi", "anthropiccompatible", "cerebras", "dashscope", "deepseek", "fireworks", "geminiapi", "glm", "groq", "lmstudio", "minimax", "mistral", "moonshot", "nebius", "nvidia", "ollamalocal", "openaiapi", "openaicompatible", "opencode", "perplexity", "sambanova", "together", "xai"} {
		out = append(out, "backend/providers/"+name)
	}
	return out
}

// layers is every backend package's rule.
func layers() []layer {
	var rows []layer
	for _, pkg := range rowModules() {
		rows = append(rows, layer{pkg, []string{"backend/providers", "backend/resilience/rules"}, []string{"gorm.io", "github.com/gorilla", "net/http"}})
	}
	return append(rows, []layer{
		{"backend/resilience/verdict", []string{"backend/redact"}, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/resilience/breaker", []string{"backend/clock"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/resilience/cooldown", []string{"backend/clock", "backend/resilience/verdict"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/providers", []string{"backend/resilience/rules"}, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/providers/bedrock", []string{"backend/providers", "backend/resilience/rules", "backend/translate", "backend/translate/anthropic", "backend/translate/sse"}, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/providers/catalogdoc", []string{"backend/providers", "backend/resilience/rules"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/resilience/wall", nil, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/providers/claude", []string{"backend/clock", "backend/providers", "backend/providers/anthropic", "backend/resilience/wall", "backend/providers/anthropicapi"}, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/providers/codex", []string{"backend/providers", "backend/translate/sse", "backend/providers/openaiapi"}, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/providers/gemini", []string{"backend/providers"}, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/providers/ollama", []string{"backend/providers", "backend/translate/ollama"}, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/providers/codeassist", []string{"backend/providers", "backend/resilience/rules", "backend/translate/sse", "backend/providers/geminiapi"}, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/providers/vertex", []string{"backend/providers"}, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/providers/copilot", []string{"backend/errs", "backend/providers", "backend/providers/openai", "backend/resilience/rules"}, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/providers/openrouter", []string{"backend/providers", "backend/providers/openai"}, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/oauth", []string{"backend/clock", "backend/errs", "backend/providers", "backend/routing", "backend/secrets", "backend/store"}, []string{"github.com/gorilla"}},
		{"backend/routing", []string{"backend/clock", "backend/errs", "backend/providers", "backend/resilience/breaker",
			"backend/resilience/cooldown", "backend/resilience/lockout", "backend/resilience/queue", "backend/resilience/verdict", "backend/routing/strategy", "backend/store"}, []string{"github.com/gorilla", "net/http"}},
		{"backend/routing/strategy", nil, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/resilience/affinity", []string{"backend/clock"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/resilience/lockout", []string{"backend/clock"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/capture", []string{"backend/clock", "backend/errs", "backend/redact", "backend/store"}, []string{"github.com/gorilla", "net/http"}},
		{"backend/redact", nil, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/prefillcap", []string{"backend/clock", "backend/store"}, []string{"github.com/gorilla", "net/http"}},
		{"backend/gateway", []string{"backend/capture", "backend/clock", "backend/config", "backend/errs", "backend/httpx", "backend/jsonv", "backend/jsonwalk", "backend/prefillcap", "backend/pricing", "backend/providers", "backend/redact",
			"backend/resilience/affinity", "backend/resilience/gate", "backend/resilience/queue", "backend/resilience/rules", "backend/resilience/verdict", "backend/resilience/watchdog", "backend/routing", "backend/secrets", "backend/store",
			"backend/translate", "backend/translate/anthropic", "backend/translate/completions", "backend/translate/gemini", "backend/translate/ollama", "backend/translate/responses", "backend/translate/frames",
			"backend/translate/sse"}, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/resilience/gate", nil, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/resilience/queue", nil, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/resilience/rules", []string{"backend/resilience/verdict"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/resilience/watchdog", nil, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/translate/sse", nil, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/translate/anthropic", []string{"backend/jsonv", "backend/translate", "backend/translate/sse"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/translate/responses", []string{"backend/jsonv", "backend/translate", "backend/translate/sse"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/translate/completions", []string{"backend/jsonv", "backend/translate", "backend/translate/sse"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/translate/gemini", []string{"backend/jsonv", "backend/translate", "backend/translate/sse"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/translate/ollama", []string{"backend/jsonv", "backend/translate", "backend/translate/sse"}, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/translate/frames", []string{"backend/jsonv", "backend/jsonwalk", "backend/translate", "backend/translate/sse", "backend/resilience/watchdog"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/datadir", nil, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/jsonv", nil, []string{"gorm.io", "github.com/gorilla", "net/http", "github.com/tidwall"}},
		{"backend/jsonwalk", nil, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/store", []string{"migrations"}, []string{"net/http", "github.com/gorilla"}},
		{"backend/instances", []string{"backend/clock"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/agents", nil, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/agentmodels", []string{"backend/agents", "backend/errs", "backend/health", "backend/routing"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/events", nil, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/health", []string{"backend/resilience/breaker", "backend/resilience/cooldown", "backend/resilience/lockout"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/leases", []string{"backend/clock", "backend/errs", "backend/secrets", "backend/store"}, []string{"github.com/gorilla"}},
		{"backend/metrics", nil, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/providers/discovery", []string{"backend/providers", "backend/providers/anthropic", "backend/providers/gemini", "backend/providers/openai"}, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/providers/azure", []string{"backend/providers", "backend/providers/discovery"}, []string{"gorm.io", "github.com/gorilla"}},
		// The one list of provider modules: the catalogue and every provider folder.
		{"backend/providers/registry", append([]string{"backend/providers", "backend/providers/azure", "backend/providers/bedrock", "backend/providers/claude", "backend/providers/codeassist", "backend/providers/codex", "backend/providers/copilot", "backend/providers/ollama", "backend/providers/openrouter", "backend/providers/vertex"}, rowModules()...), []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/providers/providerstest", nil, []string{"gorm.io", "github.com/gorilla"}},
		// A connection's fields as a create or an edit sends them, checked onto its row (the API decodes and maps errors to HTTP).
		{"backend/providers/connfields", []string{"backend/errs", "backend/health", "backend/providers", "backend/providers/discovery", "backend/redact",
			"backend/resilience/cooldown", "backend/routing", "backend/store"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		// The connection check (discovery, the one-token completion, the prefill probe): under the API, over the gateway's executors.
		{"backend/connprobe", []string{"backend/clock", "backend/gateway", "backend/health", "backend/prefillcap", "backend/providers", "backend/providers/discovery",
			"backend/redact", "backend/resilience/breaker", "backend/resilience/cooldown", "backend/routing", "backend/store"}, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/providers/openai", []string{"backend/providers"}, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/update", []string{"backend/clock"}, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/words", nil, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/sso", nil, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/pricing", []string{"backend/errs"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/teamlimits", []string{"backend/clock", "backend/store"}, []string{"github.com/gorilla", "net/http"}},
		{"backend/budget", []string{"backend/clock", "backend/errs", "backend/store"}, []string{"github.com/gorilla", "net/http"}},
		{"backend/backup", []string{"backend/errs", "backend/secrets", "backend/store"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/reqlog", []string{"backend/store"}, []string{"github.com/gorilla", "net/http"}},
		{"backend/auththrottle", nil, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/peoplecache", []string{"backend/store"}, []string{"github.com/gorilla", "net/http"}},
		{"backend/usagestats", []string{"backend/errs", "backend/store"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/keyring", []string{"backend/errs", "backend/routing", "backend/secrets", "backend/store"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/clock", nil, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/errs", nil, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/secrets", nil, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/forwarded", nil, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/config", []string{"backend/forwarded", "backend/resilience/breaker", "backend/resilience/cooldown", "backend/resilience/rules"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/httpx", []string{"backend/errs", "backend/jsonv"}, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/providers/anthropic", []string{"backend/providers"}, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/translate", []string{"backend/jsonv", "backend/translate/sse"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
	}...)
}

// checkLayer fails for each import of r.pkg its layer does not allow.
func checkLayer(t *testing.T, root string, r layer) {
	for imp := range imports(t, filepath.Join(root, r.pkg)) {
		if strings.HasPrefix(imp, module) {
			rel := strings.TrimPrefix(imp, module)
			ok := false
			for _, a := range r.allowed {
				ok = ok || a == rel
			}
			if !ok {
				t.Errorf("%s imports %s, which its layer must not know", r.pkg, rel)
			}
			continue
		}
		for _, b := range r.banned {
			if imp == b || strings.HasPrefix(imp, b+"/") || strings.HasPrefix(imp, b) && strings.Contains(b, ".") {
				t.Errorf("%s imports %s", r.pkg, imp)
			}
		}
	}
}
