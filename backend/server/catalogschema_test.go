package server_test

import (
	"slices"
	"testing"

	"omniroute/backend/providers"
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

// TestCatalogCarriesConnectionForms: every catalogue row says how a
// connection form asks for its apiKey (keyField) and each module field how
// it is shown (label, kind, options, default, summary, requiredUnless), so
// the dashboard renders every provider's form from the catalogue alone.
func TestCatalogCarriesConnectionForms(t *testing.T) {
	e := newEnv(t)
	code, cat := e.mgmt("GET", "/api/providers/catalog", nil)
	if code != 200 {
		t.Fatalf("catalog: %d", code)
	}
	byID := map[string]map[string]any{}
	for _, p := range cat["providers"].([]any) {
		p := p.(map[string]any)
		byID[p["id"].(string)] = p
		k, ok := p["keyField"].(map[string]any)
		if !ok {
			t.Fatalf("%v has no keyField", p["id"])
		}
		if !slices.Contains([]any{"secret", "file", "none"}, k["kind"]) || k["label"] == "" {
			t.Errorf("%v keyField %v", p["id"], k)
		}
		if want := p["category"] == string(providers.CategoryAPIKey) && k["kind"] != "none"; k["required"] != want {
			t.Errorf("%v keyField required %v, want %v (category %v)", p["id"], k["required"], want, p["category"])
		}
		for _, f := range p["dataFields"].([]any) {
			f := f.(map[string]any)
			if f["label"] == "" || f["kind"] == "" {
				t.Errorf("%v field %v: no label or kind", p["id"], f["name"])
			}
		}
	}
	kinds := map[string]bool{}
	for _, m := range registry.Modules() {
		row := byID[m.ID]
		wantKey := string(m.Key.Kind)
		if wantKey == "" {
			wantKey = "secret"
		}
		if got := row["keyField"].(map[string]any)["kind"]; got != wantKey {
			t.Errorf("%s keyField kind %v, declared %q", m.ID, got, wantKey)
		}
		if m.Data == nil {
			continue
		}
		for i, f := range m.Data.Fields {
			g := row["dataFields"].([]any)[i].(map[string]any)
			kinds[g["kind"].(string)] = true
			if g["kind"] != string(f.FormKind()) || (f.Label != "" && g["label"] != f.Label) || g["summary"] != nilIfEmpty(f.Summary) ||
				g["requiredUnless"] != nilIfEmpty(f.RequiredUnless) || g["default"] != nilIfEmpty(f.Default) {
				t.Errorf("%s field %s: %v, declared %+v", m.ID, f.Name, g, f)
			}
			if f.FormKind() == providers.KindSelect && len(g["options"].([]any)) != len(f.Options) {
				t.Errorf("%s field %s: options %v, declared %v", m.ID, f.Name, g["options"], f.Options)
			}
		}
	}
	// The registry's forms use a select, a map and secrets (else this test proves little).
	for _, k := range []string{"select", "map", "secret", "text"} {
		if !kinds[k] {
			t.Errorf("no module field of kind %q (kinds shown: %v)", k, kinds)
		}
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
