package events_test

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/events"
)

// Two reference pages are generated here: docs/events.md, the event catalogue (from the
// registry, the payload types and their doc comments), and docs/errors.md, every stable error
// code of the module (errors_docs_test.go). TestDocs fails when a committed page differs from
// what the code says; -update rewrites both.

var update = flag.Bool("update", false, "rewrite the generated docs pages (docs/events.md, docs/errors.md)")

const regenerate = "go test ./events -run TestDocs -update"

func TestDocs(t *testing.T) {
	t.Run("events.md", func(t *testing.T) {
		checkGenerated(t, "../docs/events.md", renderEventsDoc(t))
	})
	t.Run("errors.md", func(t *testing.T) {
		checkGenerated(t, "../docs/errors.md", renderErrorsDoc(t))
	})
}

// checkGenerated compares a generated page with the committed file, or writes it with -update.
func checkGenerated(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v; generate it with: %s", path, err, regenerate)
	}
	if !bytes.Equal(want, got) {
		t.Fatalf("%s is out of date (first difference at line %d); regenerate it with: %s",
			path, firstDiffLine(want, got), regenerate)
	}
}

func firstDiffLine(a, b []byte) int {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}

// goPackage is the parsed source of one package: its type declarations with their docs.
type goPackage struct {
	fset  *token.FileSet
	types map[string]*ast.TypeSpec
	docs  map[string]string
	// consts are the const declarations in file name and source order.
	consts []*ast.GenDecl
}

// parsePackage parses the non-test .go files of dir.
func parsePackage(t *testing.T, dir string) *goPackage {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	pkg := &goPackage{fset: fset, types: map[string]*ast.TypeSpec{}, docs: map[string]string{}}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if ok && gd.Tok == token.CONST {
				pkg.consts = append(pkg.consts, gd)
			}
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				pkg.types[ts.Name.Name] = ts
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				pkg.docs[ts.Name.Name] = commentText(doc)
			}
		}
	}
	return pkg
}

// commentText is a doc comment on one line.
func commentText(g *ast.CommentGroup) string {
	if g == nil {
		return ""
	}
	return strings.Join(strings.Fields(g.Text()), " ")
}

func (p *goPackage) exprString(e ast.Expr) string {
	var b bytes.Buffer
	printer.Fprint(&b, p.fset, e)
	return b.String()
}

// structOf returns the struct a package type declares, or nil.
func (p *goPackage) structOf(name string) *ast.StructType {
	if ts, ok := p.types[name]; ok {
		if st, ok := ts.Type.(*ast.StructType); ok {
			return st
		}
	}
	return nil
}

// jsonField is one field of a type's JSON encoding.
type jsonField struct {
	name    string // the JSON key
	goType  ast.Expr
	options string // omitempty, omitzero, string
	doc     string
	via     string // the embedded struct it is inlined from, "" for a direct field
}

// jsonFields lists the JSON fields of a struct type as encoding/json writes them (exported
// fields, json tag names, embedded untagged structs inlined), in declaration order.
func (p *goPackage) jsonFields(t *testing.T, typeName, via string) []jsonField {
	t.Helper()
	st := p.structOf(typeName)
	if st == nil {
		t.Fatalf("type %s: no struct of that name in package events; the generator (events/docs_test.go) reads only this package's source", typeName)
	}
	var out []jsonField
	for _, f := range st.Fields.List {
		tag := ""
		if f.Tag != nil {
			tag = reflect.StructTag(strings.Trim(f.Tag.Value, "`")).Get("json")
		}
		if tag == "-" {
			continue
		}
		key, options, _ := strings.Cut(tag, ",")
		doc := commentText(f.Doc)
		if doc == "" {
			doc = commentText(f.Comment)
		}
		if len(f.Names) == 0 { // embedded
			name := embeddedName(f.Type)
			if key == "" && p.structOf(name) != nil {
				out = append(out, p.jsonFields(t, name, name)...)
				continue
			}
			if !ast.IsExported(name) {
				continue
			}
			if key == "" {
				key = name
			}
			out = append(out, jsonField{name: key, goType: f.Type, options: options, doc: doc, via: via})
			continue
		}
		for _, n := range f.Names {
			if !n.IsExported() {
				continue
			}
			k := key
			if k == "" {
				k = n.Name
			}
			out = append(out, jsonField{name: k, goType: f.Type, options: options, doc: doc, via: via})
		}
	}
	return out
}

func embeddedName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.StarExpr:
		return embeddedName(x.X)
	case *ast.SelectorExpr:
		return x.Sel.Name
	}
	return ""
}

// reflectJSONNames lists the JSON keys encoding/json uses for t (one level of inlined
// embedded structs is enough for the payloads), to check the source reading against the
// compiled types.
func reflectJSONNames(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		key, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && key == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, reflectJSONNames(f.Type)...)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if key == "" {
			key = f.Name
		}
		out = append(out, key)
	}
	return out
}

// referencedTypes returns the names of this package's types that a type expression uses.
func (p *goPackage) referencedTypes(e ast.Expr) []string {
	var out []string
	ast.Inspect(e, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SelectorExpr:
			return false // another package's type
		case *ast.Ident:
			if _, ok := p.types[x.Name]; ok {
				out = append(out, x.Name)
			}
		}
		return true
	})
	return out
}

// typeCell renders a Go type, linked to its section when it is one of the shared types.
func (p *goPackage) typeCell(e ast.Expr, shared map[string]bool) string {
	s := p.exprString(e)
	refs := p.referencedTypes(e)
	if len(refs) == 1 && shared[refs[0]] {
		return fmt.Sprintf("[`%s`](#%s)", s, strings.ToLower(refs[0]))
	}
	return "`" + s + "`"
}

func optionsCell(options string) string {
	if options == "" {
		return "—"
	}
	return strings.ReplaceAll(options, ",", ", ")
}

var (
	textEscaper = strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "\n", " ")
	codeEscaper = strings.NewReplacer("|", `\|`, "\n", " ")
)

// cell makes a doc comment safe in a table cell: a pipe would end the cell and outside code
// spans a <word> would be taken for HTML. Inside code spans entities are not decoded, so
// only the pipe is escaped there.
func cell(s string) string {
	if s == "" {
		return "—"
	}
	parts := strings.Split(s, "`")
	if len(parts)%2 == 0 { // an unmatched backtick: no code spans
		return textEscaper.Replace(s)
	}
	for i, p := range parts {
		if i%2 == 0 {
			parts[i] = textEscaper.Replace(p)
		} else {
			parts[i] = codeEscaper.Replace(p)
		}
	}
	return strings.Join(parts, "`")
}

func (p *goPackage) fieldTable(b *bytes.Buffer, fields []jsonField, shared map[string]bool) {
	b.WriteString("| JSON field | Go type | options | description |\n|---|---|---|---|\n")
	for _, f := range fields {
		doc := f.doc
		if f.via != "" {
			doc = strings.TrimSpace(doc + " (from `" + f.via + "`)")
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", f.name, p.typeCell(f.goType, shared), optionsCell(f.options), cell(doc))
	}
}

// goFieldTable renders a struct's Go fields (the envelope types have no JSON tags).
func (p *goPackage) goFieldTable(b *bytes.Buffer, typeName string) {
	b.WriteString("| field | Go type | description |\n|---|---|---|\n")
	for _, f := range p.structOf(typeName).Fields.List {
		doc := commentText(f.Doc)
		if doc == "" {
			doc = commentText(f.Comment)
		}
		if len(f.Names) == 0 {
			fmt.Fprintf(b, "| (embedded) | `%s` | %s |\n", p.exprString(f.Type), cell(doc))
			continue
		}
		for _, n := range f.Names {
			if n.IsExported() {
				fmt.Fprintf(b, "| `%s` | `%s` | %s |\n", n.Name, p.exprString(f.Type), cell(doc))
			}
		}
	}
}

func renderEventsDoc(t *testing.T) []byte {
	pkg := parsePackage(t, ".")
	payloads := events.AllPayloads()
	reg := events.NewRegistry(payloads...)
	goTypeOf := map[string]reflect.Type{}
	for _, p := range payloads {
		rt := reflect.TypeOf(p)
		if rt.Kind() == reflect.Pointer {
			rt = rt.Elem()
		}
		goTypeOf[p.EventType()] = rt
	}
	names := reg.Names()

	// Fields per event type, checked against what encoding/json does with the compiled type.
	fieldsOf := map[string][]jsonField{}
	for _, name := range names {
		rt := goTypeOf[name]
		fs := pkg.jsonFields(t, rt.Name(), "")
		var keys []string
		for _, f := range fs {
			keys = append(keys, f.name)
		}
		if want := reflectJSONNames(rt); !reflect.DeepEqual(keys, want) {
			t.Fatalf("%s (%s): fields read from the source %v differ from the compiled type's JSON fields %v; fix events/docs_test.go",
				name, rt.Name(), keys, want)
		}
		fieldsOf[name] = fs
	}

	// Shared types: every package type the payload fields use, transitively, listed once.
	shared := map[string]bool{}
	var queue []string
	for _, name := range names {
		for _, f := range fieldsOf[name] {
			queue = append(queue, pkg.referencedTypes(f.goType)...)
		}
	}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if shared[n] || n == "Metadata" {
			continue
		}
		shared[n] = true
		if pkg.structOf(n) != nil {
			for _, f := range pkg.jsonFields(t, n, "") {
				queue = append(queue, pkg.referencedTypes(f.goType)...)
			}
		}
	}
	sharedNames := make([]string, 0, len(shared))
	for n := range shared {
		sharedNames = append(sharedNames, n)
	}
	sort.Strings(sharedNames)

	var b bytes.Buffer
	b.WriteString("# Event catalogue\n\n")
	b.WriteString("<!-- Generated from package events (the registry, the payload types and their doc comments); " +
		"do not edit. Regenerate: " + regenerate + " -->\n\n")
	b.WriteString("Every event the log can hold: its versioned type name, the Go payload type in package " +
		"`events`, and the JSON fields of its `data`. Descriptions are the doc comments of the source. " +
		"A type name is dotted and versioned (`session.created.1`); a changed payload shape gets a new " +
		"version, and an event whose type this build does not know stops every reader at that position " +
		"(`unknown_event_type`) rather than being skipped. In the read models, `event.data` holds this JSON " +
		"and `event.metadata` the [metadata](#metadata); query fields with `json_extract(data, '$.field')`.\n\n")
	b.WriteString("Options: `omitempty` and `omitzero` fields are absent from the JSON when empty or zero.\n\n")
	b.WriteString("Implied members: `session.prompt.assembled.1`, `session.provider.request.1`, " +
		"`session.tool.blocked.1`, `session.tool.started.1` and `session.tool.settled.1` leave out their " +
		"leading `sessionId` where it is the session of their stream (`session-<sessionId>`), and then " +
		"their `turnId` where it is the turn of their command id (`turn_` and the first 32 hex digits of " +
		"SHA-256 of `turn`, a newline and `metadata.commandId`); a reader decodes them back from the " +
		"envelope. `session.verification.receipt.1` leaves out its leading `sessionId` alone, the same way " +
		"(since issue 32; its `turnId` is optional, so an absent one is empty, never implied). So " +
		"`json_extract(data, '$.sessionId')` is NULL for such an event recorded since issue 13 (issue 32 " +
		"for the verification receipt): read the session from `event.aggregate_id` (docs/storage.md, " +
		"\"Bytes per step\"). A member present in the data is the value, whatever the envelope says. " +
		"Events recorded before keep both.\n\n")

	b.WriteString("## Event types\n\n| type | payload | description |\n|---|---|---|\n")
	for _, name := range names {
		goName := goTypeOf[name].Name()
		fmt.Fprintf(&b, "| [`%s`](#%s) | `%s` | %s |\n", name, anchor(name), goName, cell(firstSentence(pkg.docs[goName])))
	}

	b.WriteString("\n## Envelope\n\n")
	b.WriteString("An event is appended as an `Event` and read back as a `Recorded` (Go types; the stores " +
		"keep them in columns of their own). Its payload is `Data`, its metadata `Metadata`.\n\n")
	fmt.Fprintf(&b, "### Event\n\n%s\n\n", cell(pkg.docs["Event"]))
	pkg.goFieldTable(&b, "Event")
	fmt.Fprintf(&b, "\n### Recorded\n\n%s\n\n", cell(pkg.docs["Recorded"]))
	pkg.goFieldTable(&b, "Recorded")
	fmt.Fprintf(&b, "\n### Metadata\n\n%s\n\n", cell(pkg.docs["Metadata"]))
	pkg.fieldTable(&b, pkg.jsonFields(t, "Metadata", ""), shared)

	b.WriteString("\n## Payloads\n")
	for _, name := range names {
		goName := goTypeOf[name].Name()
		fmt.Fprintf(&b, "\n### %s\n\nPayload `%s`. %s\n\n", name, goName, cell(pkg.docs[goName]))
		var inlined []string
		for _, f := range fieldsOf[name] {
			if f.via != "" && !contains(inlined, f.via) {
				inlined = append(inlined, f.via)
			}
		}
		for _, v := range inlined {
			fmt.Fprintf(&b, "The fields of the embedded `%s` sit at the top level of `data`.\n\n", v)
		}
		pkg.fieldTable(&b, fieldsOf[name], shared)
	}

	renderValueSets(&b, pkg)

	b.WriteString("\n## Shared types\n\nTypes the payloads use as field types, each listed once.\n")
	for _, n := range sharedNames {
		fmt.Fprintf(&b, "\n### %s\n\n", n)
		if doc := pkg.docs[n]; doc != "" {
			fmt.Fprintf(&b, "%s\n\n", cell(doc))
		}
		if pkg.structOf(n) == nil {
			fmt.Fprintf(&b, "Defined as `%s`.\n", pkg.exprString(pkg.types[n].Type))
			continue
		}
		pkg.fieldTable(&b, pkg.jsonFields(t, n, ""), shared)
	}
	return b.Bytes()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// anchor is the heading id GitHub derives from a heading such as "session.created.1".
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// firstSentence is a doc comment's first sentence, for the index.
func firstSentence(doc string) string {
	if i := strings.Index(doc, ". "); i >= 0 {
		return doc[:i+1]
	}
	return doc
}

// renderValueSets lists the package's documented groups of string constants other than type
// names and error codes (provider request statuses, turn finish reasons): the values that
// string fields such as status and reason take.
func renderValueSets(b *bytes.Buffer, pkg *goPackage) {
	var sets []string
	for _, gd := range pkg.consts {
		if gd.Doc == nil {
			continue
		}
		var rows []string
		ok := true
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if !n.IsExported() || strings.HasPrefix(n.Name, "Type") || strings.HasPrefix(n.Name, "Code") || i >= len(vs.Values) {
					ok = false
					break
				}
				lit, isLit := vs.Values[i].(*ast.BasicLit)
				if !isLit || lit.Kind != token.STRING {
					ok = false
					break
				}
				doc := commentText(vs.Doc)
				if doc == "" {
					doc = commentText(vs.Comment)
				}
				value, err := strconv.Unquote(lit.Value)
				if err != nil {
					ok = false
					break
				}
				rows = append(rows, fmt.Sprintf("| `%s` | `%s` | %s |", value, n.Name, cell(doc)))
			}
		}
		if ok && len(rows) > 0 {
			sets = append(sets, fmt.Sprintf("%s\n\n| value | constant | description |\n|---|---|---|\n%s\n",
				cell(commentText(gd.Doc)), strings.Join(rows, "\n")))
		}
	}
	if len(sets) == 0 {
		return
	}
	b.WriteString("\n## Values\n\nThe documented sets of string values that payload fields take.\n")
	for _, s := range sets {
		b.WriteString("\n" + s)
	}
}
