package catalogdoc_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"omniroute/backend/providers/catalogdoc"
	"omniroute/backend/providers/registry"
	"omniroute/backend/resilience/rules"
)

var page = filepath.Join("..", "..", "..", "docs", "PROVIDERS.md")

// TestProvidersPageIsCurrent: docs/PROVIDERS.md is exactly what the catalogue
// and the built-in rule tables render; OMNIROUTE_WRITE_DOCS=1 rewrites it.
func TestProvidersPageIsCurrent(t *testing.T) {
	cat := registry.Catalog(nil)
	want := catalogdoc.Render(cat, cat.Restatements(), rules.Builtin(cat.Rules()...))
	if os.Getenv("OMNIROUTE_WRITE_DOCS") == "1" {
		if err := os.WriteFile(page, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(page)
	if err != nil {
		t.Fatalf("%v: regenerate with %s", err, catalogdoc.Regenerate)
	}
	if string(got) != want {
		t.Fatalf("docs/PROVIDERS.md is out of date with the catalogue: regenerate with %s", catalogdoc.Regenerate)
	}
}

// TestReadmeCount: README's "Known providers" paragraph gives the
// catalogue's size, so a new row updates it too.
func TestReadmeCount(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("Known providers: %d,", len(registry.Catalog(nil).All()))
	if !strings.Contains(string(readme), want) {
		t.Fatalf("README.md does not say %q", want)
	}
}

// TestRenderNamesEveryProviderAndRule: each catalogue id has its row and
// each provider-specific built-in rule appears in its provider's row.
func TestRenderNamesEveryProviderAndRule(t *testing.T) {
	cat := registry.Catalog(nil)
	out := catalogdoc.Render(cat, cat.Restatements(), rules.Builtin(cat.Rules()...))
	rows := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "| `") {
			id := strings.SplitN(strings.TrimPrefix(line, "| `"), "`", 2)[0]
			rows[id] = line
		}
	}
	for _, p := range cat.All() {
		if rows[p.ID] == "" {
			t.Errorf("no row for %s", p.ID)
		}
	}
	if len(rows) != len(cat.All()) {
		t.Errorf("%d rows for %d providers", len(rows), len(cat.All()))
	}
	for _, r := range rules.Builtin(cat.Rules()...) {
		if r.Provider == rules.AnyProvider {
			continue
		}
		if _, known := cat.Lookup(r.Provider); !known {
			t.Errorf("rule %s names unknown provider %q", r.ID, r.Provider)
			continue
		}
		if !strings.Contains(rows[r.Provider], "`"+r.ID+"`") {
			t.Errorf("rule %s missing from the %s row", r.ID, r.Provider)
		}
	}
}
