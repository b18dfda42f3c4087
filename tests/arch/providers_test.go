package arch

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
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
			fixtures: []string{"backend/gateway/embedcodec_test.go", "backend/api/placeholder_test.go", "backend/resilience/verdict/classify_test.go"}},
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
