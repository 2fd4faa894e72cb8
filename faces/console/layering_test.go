package console_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The console is a face (docs/architecture.md): it reads through the application
// (commands/app, commands/queries) and names the log's types (events, domain), never an
// adapter, the event store, the projections, the turn machinery or another face. The faces'
// rule for the whole tree is faces/httpapi's TestFacesLayering; this is the console's own,
// narrower list of what it may import.
func TestConsoleLayering(t *testing.T) {
	const module = "github.com/zuno-run/zuno/"
	allowed := func(inner string) bool {
		switch {
		case inner == "commands", inner == "commands/app", inner == "commands/queries", inner == "events", inner == "domain":
			return true
		case strings.HasPrefix(inner, "domain/"):
			return true
		}
		return false
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if inner, ok := strings.CutPrefix(path, module); ok && !allowed(inner) {
				t.Errorf("%s imports %s: the console reads through commands/app and commands/queries", name, path)
			}
		}
	}
	if checked < 5 {
		t.Fatalf("checked %d files", checked)
	}
}
