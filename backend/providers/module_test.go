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
	base := NewCatalog()
	m := Module{ID: "openai", MaxKey: 9000, Data: &DataSchema{Required: true},
		Rows: []Provider{{ID: "acme", Name: "Acme", Format: FormatOpenAI, Aliases: []string{"acme-ai"}}}}
	acme := Module{ID: "acme", Dialect: "acme"}
	cat := base.WithModules(m, acme)
	for _, id := range []string{"openai", "oai"} {
		p, ok := cat.Lookup(id)
		if !ok || p.Module == nil || p.Module.ID != "openai" || p.DataSchema() == nil || p.KeyLimit(4096) != 9000 {
			t.Fatalf("%s: %+v", id, p.Module)
		}
	}
	if p, ok := cat.Lookup("acme-ai"); !ok || p.Name != "Acme" || p.Module == nil || p.Module.Dialect != "acme" {
		t.Fatalf("a module's own row: %v %+v", ok, p)
	}
	if len(cat.All()) != len(base.All())+1 || len(cat.Modules()) != 2 {
		t.Fatalf("%d rows, %d modules", len(cat.All()), len(cat.Modules()))
	}
	if p, _ := base.Lookup("openai"); p.Module != nil || p.DataSchema() != nil || p.KeyLimit(4096) != 4096 {
		t.Fatal("WithModules changed the catalogue it was called on")
	}
	if _, ok := base.Lookup("acme"); ok {
		t.Fatal("a module's row leaked into the base catalogue")
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
