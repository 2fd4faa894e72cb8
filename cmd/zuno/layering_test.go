package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The rule cmd/zuno keeps (docs/architecture.md): it is flags, wiring and printing. Only its
// wiring files may import a package under domain/ (config.go reads the agents' config type);
// everything else reaches the application through commands/app and commands/queries. And no
// file reads or decodes the event log itself: that is the queries' and the handlers' work.
var wiringFiles = map[string]bool{"app.go": true, "config.go": true}

// logReads are the event store's read methods; the registry (which decodes what they return)
// is named only where it is wired.
var logReads = map[string]bool{"ReadStream": true, "ReadStreamBackward": true, "ReadAll": true, "Subscribe": true}

func TestCLIIsFlagsWiringAndPrinting(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/zuno-run/zuno/domain") && !wiringFiles[name] {
				t.Errorf("%s imports %s: only the wiring files (%v) may; use commands/app or commands/queries", name, path, keys(wiringFiles))
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			switch {
			case !ok:
			case logReads[sel.Sel.Name] && !isPackage(sel.X, "io", "os"):
				t.Errorf("%s calls %s: read the log through commands/queries", fset.Position(sel.Pos()), sel.Sel.Name)
			case sel.Sel.Name == "registry" && !wiringFiles[name]:
				t.Errorf("%s uses the event registry: decoding the log is the queries' work", fset.Position(sel.Pos()))
			}
			return true
		})
	}
	if checked < 10 {
		t.Fatalf("checked %d files; is the test running in cmd/zuno?", checked)
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// isPackage reports whether x names one of the standard packages (io.ReadAll is not the log).
func isPackage(x ast.Expr, names ...string) bool {
	id, ok := x.(*ast.Ident)
	return ok && slices.Contains(names, id.Name)
}
