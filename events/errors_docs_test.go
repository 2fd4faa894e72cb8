package events_test

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// docs/errors.md lists every stable error code of the module, read from the source of all its
// non-test .go files: exported string constants named Code… (CodeStaleRevision = "stale_revision",
// CodeUncertain Code = Code(files.CodeUncertain)), and exported string constants whose declared
// type is named Code or …Kind (files.NotFound Code = "not_found", patch.StaleRead ConflictKind =
// "stale_read"). A constant defined as another constant is resolved to its value, so a code
// declared twice shows up once with both names.

// codeConst is one constant that names a stable code.
type codeConst struct {
	pkg  string // the package's directory relative to the module root, "." for the root
	name string
	doc  string
}

// constDef is any package-level constant while values are resolved.
type constDef struct {
	pkg, name, typeName string
	doc                 string
	value               *string // a string literal
	ref                 *constRef
}

type constRef struct{ pkg, name string }

// moduleRoot is the nearest directory at or above the test's directory holding go.mod.
func moduleRoot(t *testing.T) (root, modulePath string) {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
					return dir, strings.Trim(strings.TrimSpace(rest), `"`)
				}
			}
			t.Fatalf("%s/go.mod names no module", dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

// scanConsts parses every non-test .go file of the module and returns its package-level
// constants keyed by package directory and name.
func scanConsts(t *testing.T, root, modulePath string) map[constRef]*constDef {
	t.Helper()
	fset := token.NewFileSet()
	type parsed struct {
		pkg  string
		file *ast.File
	}
	var files []parsed
	pkgName := map[string]string{} // import path -> package name
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" ||
				name == "vendor" || name == "node_modules") {
				return filepath.SkipDir
			}
			if p != root {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		files = append(files, parsed{rel, f})
		pkgName[path.Join(modulePath, rel)] = f.Name.Name
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	consts := map[constRef]*constDef{}
	for _, pf := range files {
		imports := map[string]string{} // name in this file -> package dir
		for _, imp := range pf.file.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			rel, ok := strings.CutPrefix(ip, modulePath)
			if !ok || (rel != "" && !strings.HasPrefix(rel, "/")) {
				continue // outside the module
			}
			dir := strings.TrimPrefix(rel, "/")
			if dir == "" {
				dir = "."
			}
			name := pkgName[ip]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			imports[name] = dir
		}
		for _, decl := range pf.file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				doc := commentText(vs.Doc)
				if doc == "" {
					doc = commentText(vs.Comment)
				}
				if doc == "" && len(gd.Specs) == 1 {
					doc = commentText(gd.Doc)
				}
				typeName := ""
				if id, ok := vs.Type.(*ast.Ident); ok {
					typeName = id.Name
				}
				for i, n := range vs.Names {
					if i >= len(vs.Values) {
						continue // iota and implicit repetition: not a string literal
					}
					c := &constDef{pkg: pf.pkg, name: n.Name, typeName: typeName, doc: doc}
					c.value, c.ref = constValue(vs.Values[i], pf.pkg, imports)
					if c.value != nil || c.ref != nil {
						consts[constRef{pf.pkg, n.Name}] = c
					}
				}
			}
		}
	}
	return consts
}

// constValue reads a string literal, a conversion of one (Code("x")), or a reference to another
// constant of the module (CodeX, pkg.CodeX, Code(pkg.CodeX)).
func constValue(e ast.Expr, pkg string, imports map[string]string) (*string, *constRef) {
	switch x := e.(type) {
	case *ast.BasicLit:
		if x.Kind == token.STRING {
			if s, err := strconv.Unquote(x.Value); err == nil {
				return &s, nil
			}
		}
	case *ast.ParenExpr:
		return constValue(x.X, pkg, imports)
	case *ast.CallExpr:
		if len(x.Args) == 1 {
			return constValue(x.Args[0], pkg, imports)
		}
	case *ast.Ident:
		return nil, &constRef{pkg, x.Name}
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok {
			if dir, ok := imports[id.Name]; ok {
				return nil, &constRef{dir, x.Sel.Name}
			}
		}
	}
	return nil, nil
}

// resolve follows references to a string value.
func resolve(consts map[constRef]*constDef, c *constDef) (string, bool) {
	for range 16 {
		if c.value != nil {
			return *c.value, true
		}
		next, ok := consts[*c.ref]
		if !ok {
			return "", false
		}
		c = next
	}
	return "", false
}

// isCodeConst reports whether a constant names a stable code by the rule of this page.
func isCodeConst(c *constDef) bool {
	if !ast.IsExported(c.name) {
		return false
	}
	if rest, ok := strings.CutPrefix(c.name, "Code"); ok && rest != "" && !unicode.IsLower(rune(rest[0])) {
		return true
	}
	return c.typeName == "Code" || strings.HasSuffix(c.typeName, "Kind")
}

func renderErrorsDoc(t *testing.T) []byte {
	root, modulePath := moduleRoot(t)
	consts := scanConsts(t, root, modulePath)
	byCode := map[string][]codeConst{}
	for _, c := range consts {
		if !isCodeConst(c) {
			continue
		}
		v, ok := resolve(consts, c)
		if !ok {
			continue // not a string constant of this module
		}
		byCode[v] = append(byCode[v], codeConst{pkg: c.pkg, name: c.name, doc: c.doc})
	}
	codes := make([]string, 0, len(byCode))
	for v, cs := range byCode {
		codes = append(codes, v)
		sort.Slice(cs, func(i, j int) bool {
			if cs[i].pkg != cs[j].pkg {
				return cs[i].pkg < cs[j].pkg
			}
			return cs[i].name < cs[j].name
		})
	}
	sort.Strings(codes)

	var b bytes.Buffer
	b.WriteString("# Error codes\n\n")
	b.WriteString("<!-- Generated from the Go source of the module; do not edit. Regenerate: " + regenerate + " -->\n\n")
	b.WriteString("Every stable error code declared in the module, once. A code never changes meaning; a new " +
		"situation gets a new code. Codes reach the CLI's JSON errors (`{\"error\":{\"code\":…,\"message\":…}}`, " +
		"exit status 1), the `error.code` of `session.provider.request.1` and `session.turn.finished.1`, and the " +
		"`errorCode` and `category` of tool results (`session.tool.settled.1`, `session.tool.blocked.1`); " +
		"see [events.md](events.md).\n\n")
	b.WriteString("Listed: exported string constants of non-test files named `Code…`, and those whose declared " +
		"type is named `Code` or `…Kind` (tool and patch categories). A constant defined as another one is " +
		"resolved to its value; a code declared under several names has one row naming all of them. Codes " +
		"written as plain strings where an error is built (for example the CLI's `usage` and `bad_config`, " +
		"the read models' `query_failed`) are not found by this scan.\n\n")
	b.WriteString("| code | constant (package directory . name) | description |\n|---|---|---|\n")
	for _, v := range codes {
		cs := byCode[v]
		var names, docs []string
		for _, c := range cs {
			names = append(names, "`"+c.pkg+"."+c.name+"`")
			if c.doc != "" {
				if len(cs) > 1 {
					docs = append(docs, "`"+c.pkg+"`: "+cell(c.doc))
				} else {
					docs = append(docs, cell(c.doc))
				}
			}
		}
		desc := strings.Join(docs, "<br>")
		if desc == "" {
			desc = "—"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", v, strings.Join(names, "<br>"), desc)
	}
	return b.Bytes()
}
