package words

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"omniroute/backend/providers/registry"
)

// stableCode is the shape of the gateway's stable error codes.
var stableCode = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$`)

// emittedCodes parses every non-test Go file under backend/ and returns the
// stable codes the gateway can emit: the code argument of errs.New, the Code
// field of an errs.Error literal (and of any struct literal whose field is
// named Code or ErrorCode), and the value of every constant named Code….
func emittedCodes(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	add := func(fset *token.FileSet, lit ast.Expr) {
		b, ok := lit.(*ast.BasicLit)
		if !ok || b.Kind != token.STRING {
			return
		}
		v, err := strconv.Unquote(b.Value)
		if err != nil || !stableCode.MatchString(v) {
			return
		}
		if _, seen := out[v]; !seen {
			out[v] = fset.Position(b.Pos()).String()
		}
	}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CallExpr:
				if sel, ok := x.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "New" && len(x.Args) >= 2 {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "errs" {
						add(fset, x.Args[1])
					}
				}
			case *ast.KeyValueExpr:
				if k, ok := x.Key.(*ast.Ident); ok && (k.Name == "Code" || k.Name == "ErrorCode") {
					add(fset, x.Value)
				}
			case *ast.ValueSpec:
				for i, name := range x.Names {
					if strings.HasPrefix(name.Name, "Code") && i < len(x.Values) {
						add(fset, x.Values[i])
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEveryEmittedCodeHasWords: every stable error code the backend can emit
// has its sentence in the catalogue, so no page (Logs, Playground, the
// Cooldown Manager, error boxes) shows a raw code alone.
func TestEveryEmittedCodeHasWords(t *testing.T) {
	emitted := emittedCodes(t)
	if len(emitted) < 100 {
		t.Fatalf("parsed only %d codes: the walk is broken", len(emitted))
	}
	known := Get().Codes
	for _, m := range registry.Modules() {
		for code, sentence := range m.Words {
			known[code] = sentence
		}
	}
	var missing []string
	for code, where := range emitted {
		s, ok := known[code]
		if !ok || !strings.HasSuffix(s, ".") || strings.Contains(s, code) {
			missing = append(missing, code+" ("+where+")")
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%d codes the backend emits have no plain words:\n%s", len(missing), strings.Join(missing, "\n"))
	}
}
