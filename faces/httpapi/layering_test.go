package httpapi_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/zuno-run/zuno/"

// The faces' place in the layers (docs/architecture.md): only cmd imports faces, and a face
// reaches the application, never an adapter, the event store or the projections directly.
func TestFacesLayering(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no module root at %s: %v", root, err)
	}
	fset := token.NewFileSet()
	checked := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			inner, ok := strings.CutPrefix(path, module)
			if !ok {
				continue
			}
			switch {
			case strings.HasPrefix(inner, "faces/") && !strings.HasPrefix(rel, "cmd/") && !strings.HasPrefix(rel, "faces/"):
				t.Errorf("%s imports %s: only cmd may import a face", rel, path)
			case strings.HasPrefix(rel, "faces/") && (strings.HasPrefix(inner, "adapters/") || strings.HasPrefix(inner, "projections") ||
				strings.HasPrefix(inner, "cmd/")):
				t.Errorf("%s imports %s: a face reaches the application (commands/app), not what it is built on", rel, path)
			case narrowFace(rel) && !narrowImport(inner):
				t.Errorf("%s imports %s: this face reaches the application and names the log's types only (commands, commands/app, commands/queries, events, domain)", rel, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d files; is the walk at the module root?", checked)
	}
}

// narrowFace is a face held to the narrower list: the audit console and the ACP agent reach
// the application and name the log's types, never the turn machinery or another face (the
// HTTP face serves the console, and it and the terminal name the turn's outcome types).
func narrowFace(rel string) bool {
	return strings.HasPrefix(rel, "faces/console/") || strings.HasPrefix(rel, "faces/acp/")
}

func narrowImport(inner string) bool {
	switch inner {
	case "commands", "commands/app", "commands/queries", "events", "domain":
		return true
	}
	return strings.HasPrefix(inner, "domain/")
}
