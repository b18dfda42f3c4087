package registry_test

import (
	"strings"
	"testing"

	"omniroute/backend/pricing"
	"omniroute/backend/providers"
	"omniroute/backend/providers/registry"
)

// TestModulesMatchTheirRows: every module serves a catalogue row of its id
// whose dialect is the module's, an executor says which formats it serves,
// and every secret field says where it is sealed (the API key column or a
// providerSpecificData field the store and backups reseal).
func TestModulesMatchTheirRows(t *testing.T) {
	cat := registry.Catalog(nil)
	seen := map[string]bool{}
	for _, m := range registry.Modules() {
		if seen[m.ID] {
			t.Errorf("%s is listed twice", m.ID)
		}
		seen[m.ID] = true
		p, ok := cat.Lookup(m.ID)
		if !ok || p.Module == nil || p.Module.ID != m.ID {
			t.Errorf("%s: no catalogue row points at the module", m.ID)
			continue
		}
		if p.Dialect != m.Dialect {
			t.Errorf("%s: row dialect %q, module dialect %q", m.ID, p.Dialect, m.Dialect)
		}
		if m.NewExecutor != nil && (m.Dialect == "" || len(m.Formats) == 0) {
			t.Errorf("%s: an executor without a dialect or formats", m.ID)
		}
		if m.Data == nil {
			continue
		}
		for _, f := range m.Data.Fields {
			if f.Secret && f.SealedAs != "apiKey" && !strings.HasSuffix(f.SealedAs, providers.SealedFieldSuffix) {
				t.Errorf("%s: secret field %s sealed as %q", m.ID, f.Name, f.SealedAs)
			}
		}
		if m.Data.Required && m.Data.RequiredMessage == "" {
			t.Errorf("%s: required data without a message", m.ID)
		}
	}
}

// TestImportsMatchTheirRows: every module's credential import is complete
// (a label, a file under the home folder, a parser), its source is unique
// and finds the module's own row (OAuth.ImportSource), so an imported login
// becomes a connection of the provider that reads it.
func TestImportsMatchTheirRows(t *testing.T) {
	cat := registry.Catalog(nil)
	seen := map[string]bool{}
	for _, m := range registry.Modules() {
		ci := m.Import
		if ci == nil {
			continue
		}
		if seen[ci.Source] {
			t.Errorf("import source %s is declared twice", ci.Source)
		}
		seen[ci.Source] = true
		if ci.Label == "" || ci.File == "" || ci.Parse == nil || strings.HasPrefix(ci.File, "/") || strings.HasPrefix(ci.File, "~") {
			t.Errorf("%s: incomplete import %+v", m.ID, ci)
		}
		if p, ok := cat.BySource(ci.Source); !ok || p.Module == nil || p.Module.ID != m.ID {
			t.Errorf("%s: import source %s does not find the module's row", m.ID, ci.Source)
		}
	}
	if len(seen) < 3 || len(cat.Imports()) != len(seen) {
		t.Errorf("%d import sources, catalogue lists %d", len(seen), len(cat.Imports()))
	}
}

// TestPricesNameRegisteredProviders: every shipped price entry (the
// modules' prices.json, merged by pricing.ParseShipped) names a registered
// provider id, and a module prices only its own rows' models.
func TestPricesNameRegisteredProviders(t *testing.T) {
	cat := registry.Catalog(nil)
	total := 0
	for _, m := range registry.Modules() {
		if len(m.Prices) == 0 {
			continue
		}
		entries, err := pricing.ParseShipped(m.Prices)
		if err != nil {
			t.Fatalf("%s: %v", m.ID, err)
		}
		for _, e := range entries {
			p, ok := cat.Lookup(e.Provider)
			if !ok || p.ID != e.Provider {
				t.Errorf("%s prices %s/%s: not a registered provider id", m.ID, e.Provider, e.Model)
			} else if p.Module == nil || p.Module.ID != m.ID {
				t.Errorf("%s prices %s/%s: another module's provider", m.ID, e.Provider, e.Model)
			}
		}
		total += len(entries)
	}
	if all, err := pricing.ParseShipped(cat.Prices()...); err != nil || len(all) != total || total < 25 {
		t.Fatalf("merged %d entries (%v), modules %d", len(all), err, total)
	}
}
