package health

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"testing"
)

// TestAllStatesListsEveryState: AllStates names every State constant declared
// in health.go, so a new state cannot miss its words (backend/words checks
// every state of AllStates) or the dashboard's list.
func TestAllStatesListsEveryState(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "health.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			v := spec.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); ok && id.Name == "State" {
				for _, n := range v.Names {
					declared = append(declared, n.Name)
				}
			}
		}
	}
	if len(declared) < 10 {
		t.Fatalf("parsed only %v from health.go", declared)
	}
	all := AllStates()
	if len(all) != len(declared) {
		t.Errorf("AllStates has %d states, health.go declares %d: %v", len(all), len(declared), declared)
	}
	for _, s := range all {
		if slices.Contains(all[:slices.Index(all, s)], s) {
			t.Errorf("state %s listed twice", s)
		}
	}
}
