package acp_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The ACP face is a face (docs/architecture.md): it reaches the application (commands/app and
// its queries), names the log's types (events, domain), and speaks the protocol through its
// library; never an adapter, the event store, the projections, the turn machinery or another
// face. The faces' rule for the whole tree is faces/httpapi's TestFacesLayering; this is the
// ACP face's own, narrower list.
func TestACPLayering(t *testing.T) {
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
				t.Errorf("%s imports %s: the ACP face reaches the application, not what it is built on", name, path)
			}
		}
	}
	if checked < 5 {
		t.Fatalf("checked %d files; is the test running in faces/acp?", checked)
	}
}
