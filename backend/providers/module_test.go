package providers

import (
	"context"
	"net/http"
	"testing"
)

type nopExec struct{}

func (nopExec) Do(context.Context, *Target, Call) (*http.Response, error) { return nil, nil }

// TestWithModules: a module's row (by id and alias) points at it, its own
// rows join the catalogue, and the catalogue it came from is left as it was.
func TestWithModules(t *testing.T) {
	base := NewCatalog().WithModules(Module{ID: "rows", Rows: []Provider{{ID: "plain", Name: "Plain", Format: FormatOpenAI, Aliases: []string{"pl"}}}})
	m := Module{ID: "plain", MaxKey: 9000, Data: &DataSchema{Required: true},
		Rows: []Provider{{ID: "acme", Name: "Acme", Format: FormatOpenAI, Aliases: []string{"acme-ai"}}}}
	acme := Module{ID: "acme", Dialect: "acme"}
	cat := base.WithModules(m, acme)
	for _, id := range []string{"plain", "pl"} {
		p, ok := cat.Lookup(id)
		if !ok || p.Module == nil || p.Module.ID != "plain" || p.DataSchema() == nil || p.KeyLimit(4096) != 9000 {
			t.Fatalf("%s: %+v", id, p.Module)
		}
	}
	if p, ok := cat.Lookup("acme-ai"); !ok || p.Name != "Acme" || p.Module == nil || p.Module.Dialect != "acme" {
		t.Fatalf("a module's own row: %v %+v", ok, p)
	}
	if len(cat.All()) != len(base.All())+1 || len(cat.Modules()) != 2 {
		t.Fatalf("%d rows, %d modules", len(cat.All()), len(cat.Modules()))
	}
	if p, _ := base.Lookup("plain"); p.Module != nil || p.DataSchema() != nil || p.KeyLimit(4096) != 4096 {
		t.Fatal("WithModules changed the catalogue it was called on")
	}
	if _, ok := base.Lookup("acme"); ok {
		t.Fatal("a module's row leaked into the base catalogue")
	}
}

// TestModuleRowsTakeEnvOverrides: a module's OAuth row takes the
// OMNIROUTE_<ID>_OAUTH_* overrides of the catalogue's getenv like a
// built-in row, and the module's own Rows are left as they were.
func TestModuleRowsTakeEnvOverrides(t *testing.T) {
	env := map[string]string{"OMNIROUTE_ACME_CLI_OAUTH_TOKEN_URL": "http://127.0.0.1:9/token", "OMNIROUTE_ACME_CLI_OAUTH_CLIENT_ID": " fake-client ",
		"OMNIROUTE_ACME_CLI_OAUTH_BASE_URL": "http://127.0.0.1:9"}
	m := Module{ID: "acme-cli", Rows: []Provider{{ID: "acme-cli", BaseURL: "https://acme.example", OAuth: &OAuth{TokenURL: "https://acme.example/token", ClientID: "cli", ClientSecret: "pub"}}}}
	for _, c := range []struct {
		name                        string
		getenv                      func(string) string
		token, client, secret, base string
	}{
		{"overridden", func(k string) string { return env[k] }, "http://127.0.0.1:9/token", "fake-client", "pub", "http://127.0.0.1:9"},
		{"no environment", nil, "https://acme.example/token", "cli", "pub", "https://acme.example"},
	} {
		p, ok := NewCatalogEnv(c.getenv).WithModules(m).Lookup("acme-cli")
		if !ok || p.OAuth.TokenURL != c.token || p.OAuth.ClientID != c.client || p.OAuth.ClientSecret != c.secret || p.BaseURL != c.base {
			t.Errorf("%s: %+v %+v", c.name, p, p.OAuth)
		}
	}
	if m.Rows[0].OAuth.TokenURL != "https://acme.example/token" || m.Rows[0].BaseURL != "https://acme.example" {
		t.Fatal("the module's own row was changed")
	}
}

// TestModuleWirePerModel: a module's FormatOf and Prefills decide per
// model; without them the row's format and prefill flags do.
func TestModuleWirePerModel(t *testing.T) {
	m := Module{ID: "acme", FormatOf: func(model string) Format {
		if model == "claude-x" {
			return FormatAnthropic
		}
		return ""
	}, Prefills: func(model string) bool { return model == "claude-x" }}
	cat := NewCatalog().WithModules(Module{ID: "acme", Rows: []Provider{{ID: "acme", Format: FormatGemini}}})
	plain, _ := cat.Lookup("acme")
	hooked := plain
	hooked.Module = &m
	for _, c := range []struct {
		p       Provider
		model   string
		format  Format
		prefill bool
	}{
		{hooked, "claude-x", FormatAnthropic, true},
		{hooked, "gemini-y", FormatGemini, false},
		{plain, "claude-x", FormatGemini, false},
	} {
		if f := c.p.FormatOf(c.model); f != c.format || c.p.Prefills(c.model) != c.prefill {
			t.Errorf("%s (hooks %v): format %s prefill %v", c.model, c.p.Module.FormatOf != nil, f, c.p.Prefills(c.model))
		}
	}
}

// TestExecutorsBuiltOncePerModule: one module's executor serves each of its
// formats under its dialect, built once; modules without one add nothing.
func TestExecutorsBuiltOncePerModule(t *testing.T) {
	built := 0
	cat := NewCatalog().WithModules(
		Module{ID: "x", Dialect: "x", Formats: []Format{FormatGemini, FormatAnthropic},
			NewExecutor: func(d ExecDeps) Executor { built++; return nopExec{} }},
		Module{ID: "y", Dialect: "y"})
	got := cat.Executors(ExecDeps{})
	if built != 1 || got[FormatGemini]["x"] == nil || got[FormatAnthropic]["x"] == nil || len(got) != 2 {
		t.Fatalf("built %d times: %v", built, got)
	}
}
