package server_test

import (
	"testing"

	"omniroute/backend/providers/registry"
)

// TestCatalogCarriesProviderSchemas: GET /api/providers/catalog shows each
// provider module's providerSpecificData fields (name, type, required,
// secret), so a connection form can be rendered from them; providers
// without a schema show [].
func TestCatalogCarriesProviderSchemas(t *testing.T) {
	e := newEnv(t)
	code, cat := e.mgmt("GET", "/api/providers/catalog", nil)
	if code != 200 {
		t.Fatalf("catalog: %d", code)
	}
	byID := map[string]map[string]any{}
	for _, p := range cat["providers"].([]any) {
		p := p.(map[string]any)
		if _, ok := p["dataFields"].([]any); !ok {
			t.Fatalf("%v has no dataFields list", p["id"])
		}
		byID[p["id"].(string)] = p
	}
	schemas, secrets := 0, 0
	for _, m := range registry.Modules() {
		if m.Data == nil {
			continue
		}
		schemas++
		got := byID[m.ID]["dataFields"].([]any)
		if len(got) != len(m.Data.Fields) {
			t.Fatalf("%s: %d fields shown, %d declared", m.ID, len(got), len(m.Data.Fields))
		}
		for i, f := range m.Data.Fields {
			g := got[i].(map[string]any)
			if g["name"] != f.Name || g["type"] != f.Type || g["required"] != f.Required || g["secret"] != f.Secret {
				t.Errorf("%s field %d: %v, declared %+v", m.ID, i, g, f)
			}
			if f.Secret {
				secrets++
			}
		}
	}
	if schemas == 0 || secrets == 0 {
		t.Fatalf("%d schemas, %d secret fields: the registry declares none", schemas, secrets)
	}
}
