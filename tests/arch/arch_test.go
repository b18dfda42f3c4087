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

func TestLayering(t *testing.T) {
	root := filepath.Join("..", "..")
	rules := []struct {
		pkg     string
		allowed []string // module packages it may import
		banned  []string // third-party imports it must not use
	}{
		{"backend/resilience/verdict", nil, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/resilience/breaker", []string{"backend/clock"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/resilience/cooldown", []string{"backend/clock", "backend/resilience/verdict"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/providers", nil, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/resilience/wall", nil, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/providers/claude", []string{"backend/clock", "backend/providers", "backend/providers/anthropic", "backend/resilience/wall"}, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/providers/codex", []string{"backend/providers", "backend/translate/sse"}, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/oauth", []string{"backend/clock", "backend/errs", "backend/providers", "backend/routing", "backend/secrets", "backend/store"}, []string{"github.com/gorilla"}},
		{"backend/routing", []string{"backend/clock", "backend/errs", "backend/providers", "backend/resilience/breaker",
			"backend/resilience/cooldown", "backend/resilience/lockout", "backend/resilience/queue", "backend/resilience/verdict", "backend/routing/strategy", "backend/store"}, []string{"github.com/gorilla", "net/http"}},
		{"backend/routing/strategy", nil, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/resilience/affinity", []string{"backend/clock"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/resilience/lockout", []string{"backend/clock"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/gateway", []string{"backend/clock", "backend/config", "backend/errs", "backend/httpx", "backend/jsonv", "backend/jsonwalk", "backend/providers",
			"backend/resilience/affinity", "backend/resilience/gate", "backend/resilience/queue", "backend/resilience/rules", "backend/resilience/verdict", "backend/resilience/watchdog", "backend/routing", "backend/secrets", "backend/store",
			"backend/translate", "backend/translate/anthropic", "backend/translate/completions", "backend/translate/ollama", "backend/translate/responses", "backend/translate/frames",
			"backend/translate/sse"}, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/resilience/gate", nil, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/resilience/queue", nil, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/resilience/rules", []string{"backend/resilience/verdict"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/resilience/watchdog", nil, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/translate/sse", nil, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/translate/anthropic", []string{"backend/jsonv", "backend/translate", "backend/translate/sse"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/translate/responses", []string{"backend/jsonv", "backend/translate", "backend/translate/sse"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/translate/completions", []string{"backend/jsonv", "backend/translate", "backend/translate/sse"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/translate/ollama", []string{"backend/jsonv", "backend/translate", "backend/translate/sse"}, []string{"gorm.io", "github.com/gorilla"}},
		{"backend/translate/frames", []string{"backend/jsonv", "backend/jsonwalk", "backend/translate", "backend/translate/sse", "backend/resilience/watchdog"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/datadir", nil, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/jsonv", nil, []string{"gorm.io", "github.com/gorilla", "net/http", "github.com/tidwall"}},
		{"backend/jsonwalk", nil, []string{"gorm.io", "github.com/gorilla", "net/http"}},
		{"backend/store", []string{"migrations"}, []string{"net/http", "github.com/gorilla"}},
		{"backend/instances", []string{"backend/clock"}, []string{"gorm.io", "github.com/gorilla", "net/http"}},
	}
	for _, r := range rules {
		t.Run(r.pkg, func(t *testing.T) {
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
		})
	}
}
