package app

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"omniroute/backend/providers"
	"omniroute/backend/providers/registry"
)

// TestCompleteCommandListsTheCatalogue: `omniroute __complete` prints the
// sign-in commands and import sources of whatever modules the catalogue
// has (a made-up one included), the agents, and nothing for another word.
func TestCompleteCommandListsTheCatalogue(t *testing.T) {
	acme := providers.Module{ID: "acme",
		Rows: []providers.Provider{{ID: "acme", Name: "Acme", Category: providers.CategoryOAuth, Format: providers.FormatOpenAI,
			OAuth: &providers.OAuth{ImportSource: "acme-cli"}}},
		Login: &providers.LoginFlow{Command: "acme", Start: func(context.Context, providers.LoginCall) (providers.Device, error) { return providers.Device{}, nil }},
		Import: &providers.CredentialImport{Source: "acme-cli", Label: "Acme CLI", File: ".acme/login.json",
			Parse: func(providers.CredentialFile) (providers.CLILogin, error) { return providers.CLILogin{}, nil }}}
	real := registry.Catalog(nil)
	withAcme := providers.NewCatalog().WithModules(append(registry.Modules(), acme)...)
	var logins []string
	for _, p := range real.LoginProviders() {
		logins = append(logins, p.LoginFlow().Command)
	}
	for _, c := range []struct {
		name string
		cat  *providers.Catalog
		args []string
		want []string
		code int
	}{
		{"login", real, []string{"login"}, logins, 0},
		{"import", real, []string{"import"}, real.ImportSources(), 0},
		{"a module's login", withAcme, []string{"login"}, append([]string{"acme"}, logins...), 0},
		{"a module's import", withAcme, []string{"import"}, append([]string{"acme-cli"}, real.ImportSources()...), 0},
		{"unknown", real, []string{"frobnicate"}, nil, 0},
		{"no word", real, nil, nil, 2},
	} {
		var out bytes.Buffer
		code := CompleteCommand(c.args, c.cat, &out)
		if got := strings.Fields(out.String()); code != c.code || strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: exit %d, %q; want %d, %q", c.name, code, got, c.code, c.want)
		}
	}
	if len(logins) == 0 || len(real.ImportSources()) < 3 {
		t.Fatalf("the catalogue has %d logins, %d imports", len(logins), len(real.ImportSources()))
	}
	var out bytes.Buffer
	CompleteCommand([]string{"agents"}, real, &out)
	if agents := strings.Fields(out.String()); len(agents) < 10 {
		t.Errorf("agents: %q", agents)
	}
}
