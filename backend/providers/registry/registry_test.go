package registry_test

import (
	"strings"
	"testing"

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
