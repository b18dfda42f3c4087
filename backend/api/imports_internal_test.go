package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"omniroute/backend/providers"
)

// TestImportSourcesAskTheModules: GET /api/providers/import lists each
// module's credential import as the dashboard's import card draws it (its
// word, label, provider and default file), and nothing for a catalogue
// without one.
func TestImportSourcesAskTheModules(t *testing.T) {
	acme := providers.Module{ID: "acme",
		Rows: []providers.Provider{{ID: "acme", Name: "Acme Cloud", Category: providers.CategoryOAuth, Format: providers.FormatOpenAI,
			OAuth: &providers.OAuth{ImportSource: "acme-cli"}}},
		Import: &providers.CredentialImport{Source: "acme-cli", Label: "Acme CLI", File: ".acme/login.json",
			Parse: func(providers.CredentialFile) (providers.CLILogin, error) { return providers.CLILogin{}, nil }}}
	for _, c := range []struct {
		name string
		cat  *providers.Catalog
		want []map[string]string
	}{
		{"a module's import", providers.NewCatalog().WithModules(acme),
			[]map[string]string{{"source": "acme-cli", "label": "Acme CLI", "provider": "acme", "defaultPath": "~/.acme/login.json"}}},
		{"none", providers.NewCatalog(), []map[string]string{}},
	} {
		a := &API{Deps: Deps{Catalog: c.cat}}
		w := httptest.NewRecorder()
		a.listImports(w, httptest.NewRequest(http.MethodGet, "/api/providers/import", nil))
		var got struct {
			Sources []map[string]string `json:"sources"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != http.StatusOK || got.Sources == nil || len(got.Sources) != len(c.want) {
			t.Fatalf("%s: %d %s %v", c.name, w.Code, w.Body, err)
		}
		for i, want := range c.want {
			for k, v := range want {
				if got.Sources[i][k] != v {
					t.Errorf("%s: %s = %q, want %q", c.name, k, got.Sources[i][k], v)
				}
			}
		}
	}
}
