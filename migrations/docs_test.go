package migrations

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// docs/readmodels.md is generated from the embedded SQL migrations: the SQLite schema (the
// default) with the Postgres column types where they differ. A small parser reads the
// statements that shape tables (CREATE TABLE, CREATE INDEX, ALTER TABLE, DROP) and the "--"
// comments beside them. TestDocs fails when the committed page differs; -update rewrites it.

var update = flag.Bool("update", false, "rewrite the generated docs page (docs/readmodels.md)")

const (
	readModelsDocPath = "../docs/readmodels.md"
	regenerate        = "go test ./migrations -run TestDocs -update"
)

func TestDocs(t *testing.T) {
	got := renderReadModelsDoc(t)
	if *update {
		if err := os.MkdirAll(filepath.Dir(readModelsDocPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(readModelsDocPath, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(readModelsDocPath)
	if err != nil {
		t.Fatalf("%s: %v; generate it with: %s", readModelsDocPath, err, regenerate)
	}
	if !bytes.Equal(want, got) {
		t.Fatalf("%s is out of date (first difference at line %d); regenerate it with: %s",
			readModelsDocPath, firstDiffLine(want, got), regenerate)
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

// ---- lexer ----

type tokKind int

const (
	tWord tokKind = iota
	tPunct
	tString  // '...' or $tag$...$tag$
	tComment // -- to the end of the line
)

type token struct {
	kind tokKind
	text string
	line int
	// ownLine: a comment with nothing before it on its line; blankBefore: an empty line
	// separates it from the previous token; spaceBefore: any white space does.
	ownLine, blankBefore, spaceBefore bool
}

func lex(src string) ([]token, error) {
	var toks []token
	line, newlines := 1, 0
	lineStart, space := true, false
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			newlines++
			lineStart, space = true, true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r':
			space = true
			i++
			continue
		}
		tok := token{line: line, blankBefore: newlines >= 2 || len(toks) == 0, spaceBefore: space}
		newlines, space = 0, false
		switch {
		case strings.HasPrefix(src[i:], "--"):
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				end = len(src) - i
			}
			text := strings.TrimPrefix(src[i:i+end], "--")
			tok.kind, tok.text, tok.ownLine = tComment, strings.TrimSpace(text), lineStart
			i += end
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("line %d: unterminated /* comment", line)
			}
			line += strings.Count(src[i:i+2+end+2], "\n")
			i += 2 + end + 2
			space = true
			continue
		case c == '\'':
			j := i + 1
			for {
				k := strings.IndexByte(src[j:], '\'')
				if k < 0 {
					return nil, fmt.Errorf("line %d: unterminated string", line)
				}
				j += k + 1
				if j < len(src) && src[j] == '\'' {
					j++
					continue
				}
				break
			}
			tok.kind, tok.text = tString, src[i:j]
			line += strings.Count(tok.text, "\n")
			i = j
		case c == '"':
			k := strings.IndexByte(src[i+1:], '"')
			if k < 0 {
				return nil, fmt.Errorf("line %d: unterminated quoted identifier", line)
			}
			tok.kind, tok.text = tWord, src[i+1:i+1+k]
			i += k + 2
		case c == '$' && dollarTag(src[i:]) != "":
			tag := dollarTag(src[i:])
			k := strings.Index(src[i+len(tag):], tag)
			if k < 0 {
				return nil, fmt.Errorf("line %d: unterminated %s string", line, tag)
			}
			tok.kind, tok.text = tString, src[i:i+len(tag)+k+len(tag)]
			line += strings.Count(tok.text, "\n")
			i += len(tok.text)
		case strings.IndexByte("(),;", c) >= 0:
			tok.kind, tok.text = tPunct, string(c)
			i++
		default:
			j := i
			for j < len(src) && strings.IndexByte(" \t\r\n(),;'\"", src[j]) < 0 && !strings.HasPrefix(src[j:], "--") {
				j++
			}
			if j == i {
				j = i + 1
			}
			tok.kind, tok.text = tWord, src[i:j]
			i = j
		}
		lineStart = false
		toks = append(toks, tok)
	}
	return toks, nil
}

// dollarTag returns the $tag$ opening a dollar-quoted string at the start of s, or "".
func dollarTag(s string) string {
	for j := 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '$':
			return s[:j+1]
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || j > 1 && c >= '0' && c <= '9':
		default:
			return ""
		}
	}
	return ""
}

// ---- statements ----

type statement struct {
	toks []token // without comments
	// doc is the comment block right before the statement (no blank line between them);
	// fileDoc says that block is also the file's opening comment.
	doc     string
	fileDoc bool
	// comments are the comments inside the statement, in order, for column descriptions.
	all []token
}

// split cuts a file into statements and returns the file's opening comment block.
func split(toks []token) (stmts []statement, fileDoc string) {
	var block []token // the pending comment block
	blockIsFileDoc := false
	var cur *statement
	for i, tk := range toks {
		if cur == nil {
			if tk.kind == tComment {
				if tk.blankBefore || len(block) == 0 {
					block = block[:0]
					blockIsFileDoc = i == 0
				}
				block = append(block, tk)
				if blockIsFileDoc {
					fileDoc = joinComments(block)
				}
				continue
			}
			cur = &statement{}
			if len(block) > 0 && !tk.blankBefore {
				cur.doc, cur.fileDoc = joinComments(block), blockIsFileDoc
			}
			block, blockIsFileDoc = nil, false
		}
		cur.all = append(cur.all, tk)
		if tk.kind != tComment {
			cur.toks = append(cur.toks, tk)
		}
		if tk.kind == tPunct && tk.text == ";" {
			stmts = append(stmts, *cur)
			cur = nil
		}
	}
	if cur != nil && len(cur.toks) > 0 {
		stmts = append(stmts, *cur)
	}
	return stmts, fileDoc
}

// joinComments joins a comment block into text; an empty comment line separates paragraphs
// ("\n\n").
func joinComments(block []token) string {
	var paras []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			paras = append(paras, strings.Join(strings.Fields(strings.Join(cur, " ")), " "))
		}
		cur = nil
	}
	for _, c := range block {
		if c.text == "" {
			flush()
			continue
		}
		cur = append(cur, c.text)
	}
	flush()
	return strings.Join(paras, "\n\n")
}

// firstParagraph is the text up to the first paragraph break.
func firstParagraph(doc string) string {
	p, _, _ := strings.Cut(doc, "\n\n")
	return p
}

// render writes tokens back as SQL text on one line: one space where the source had white
// space (line breaks and indentation included), none where it had none.
func render(toks []token) string {
	var b strings.Builder
	for i, tk := range toks {
		if i > 0 && tk.spaceBefore && toks[i-1].text != "(" && tk.text != ")" {
			b.WriteByte(' ')
		}
		b.WriteString(tk.text)
	}
	return b.String()
}

func isWord(tk token, words ...string) bool {
	if tk.kind != tWord {
		return false
	}
	for _, w := range words {
		if strings.EqualFold(tk.text, w) {
			return true
		}
	}
	return false
}

// ---- schema ----

type column struct {
	name, typ, constraints, doc string
}

type index struct {
	name, columns, where string
	unique               bool
}

type table struct {
	name, doc, file string
	columns         []column
	constraints     []string
	indexes         []index
}

type function struct {
	signature, doc, file string
}

type schema struct {
	tables    map[string]*table
	order     []string // tables in creation order
	views     []string
	functions []function
	files     []migrationFile
}

type migrationFile struct{ name, doc string }

func (s *schema) column(tbl, name string) *column {
	if t := s.tables[tbl]; t != nil {
		for i := range t.columns {
			if t.columns[i].name == name {
				return &t.columns[i]
			}
		}
	}
	return nil
}

// loadSchema applies the migrations of one dialect and set in name order, as the runner does.
func loadSchema(t *testing.T, dialect, set string) *schema {
	t.Helper()
	names, err := fs.Glob(FS, dialect+"/"+set+"/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	s := &schema{tables: map[string]*table{}}
	for _, name := range names {
		src, err := fs.ReadFile(FS, name)
		if err != nil {
			t.Fatal(err)
		}
		toks, err := lex(string(src))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		stmts, fileDoc := split(toks)
		s.files = append(s.files, migrationFile{name: name, doc: fileDoc})
		creates := 0
		for _, st := range stmts {
			if len(st.toks) > 2 && isWord(st.toks[0], "CREATE") && isWord(st.toks[1], "TABLE") {
				creates++
			}
		}
		for _, st := range stmts {
			if err := s.apply(name, st, creates); err != nil {
				t.Fatalf("%s line %d: %v; extend the parser in migrations/docs_test.go", name, st.toks[0].line, err)
			}
		}
	}
	return s
}

// apply folds one statement into the schema. Statements that do not shape tables (INSERT,
// UPDATE, SELECT, ...) are ignored; a table-shaping form the parser does not know is an error,
// so the page is never silently wrong.
func (s *schema) apply(file string, st statement, tablesInFile int) error {
	toks := st.toks
	if n := len(toks); n > 0 && toks[n-1].text == ";" {
		toks = toks[:n-1]
	}
	if len(toks) == 0 {
		return nil
	}
	doc := st.doc
	if st.fileDoc && tablesInFile > 1 {
		doc = "" // the file's opening comment describes the file, not its first table
	}
	i := 1
	switch {
	case isWord(toks[0], "CREATE"):
		if i < len(toks) && isWord(toks[i], "OR") {
			i += 2 // OR REPLACE
		}
		for i < len(toks) && isWord(toks[i], "TEMP", "TEMPORARY", "UNIQUE") {
			i++
		}
		if i >= len(toks) {
			return nil
		}
		switch {
		case isWord(toks[i], "TABLE"):
			return s.createTable(file, doc, toks, st.all)
		case isWord(toks[i], "INDEX"):
			return s.createIndex(toks)
		case isWord(toks[i], "VIEW"):
			i++
			i = skipIfNotExists(toks, i)
			s.views = append(s.views, toks[i].text)
		case isWord(toks[i], "FUNCTION"):
			i++
			end := i
			for end < len(toks) && !isWord(toks[end], "LANGUAGE", "AS") {
				end++
			}
			s.functions = append(s.functions, function{signature: render(toks[i:end]), doc: st.doc, file: file})
		}
	case isWord(toks[0], "ALTER") && len(toks) > 3 && isWord(toks[1], "TABLE"):
		return s.alterTable(toks)
	case isWord(toks[0], "DROP") && len(toks) > 2 && isWord(toks[1], "TABLE"):
		name := toks[skipIfExists(toks, 2)].text
		delete(s.tables, name)
		s.order = without(s.order, name)
	case isWord(toks[0], "DROP") && len(toks) > 2 && isWord(toks[1], "INDEX"):
		name := toks[skipIfExists(toks, 2)].text
		for _, t := range s.tables {
			for k, ix := range t.indexes {
				if ix.name == name {
					t.indexes = append(t.indexes[:k], t.indexes[k+1:]...)
					break
				}
			}
		}
	}
	return nil
}

func skipIfNotExists(toks []token, i int) int {
	if i+2 < len(toks) && isWord(toks[i], "IF") && isWord(toks[i+1], "NOT") && isWord(toks[i+2], "EXISTS") {
		return i + 3
	}
	return i
}

func skipIfExists(toks []token, i int) int {
	if i+1 < len(toks) && isWord(toks[i], "IF") && isWord(toks[i+1], "EXISTS") {
		return i + 2
	}
	return i
}

func without(list []string, s string) []string {
	var out []string
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

// constraint keywords end a column's type.
var columnConstraintWords = []string{"NOT", "NULL", "PRIMARY", "UNIQUE", "DEFAULT", "REFERENCES", "CHECK",
	"COLLATE", "GENERATED", "CONSTRAINT", "AS"}

func parseColumn(toks []token) column {
	c := column{name: toks[0].text}
	i := 1
	depth := 0
	for i < len(toks) {
		tk := toks[i]
		if depth == 0 && isWord(tk, columnConstraintWords...) {
			break
		}
		switch tk.text {
		case "(":
			depth++
		case ")":
			depth--
		}
		i++
	}
	c.typ = render(toks[1:i])
	c.constraints = render(toks[i:])
	return c
}

func (s *schema) createTable(file, doc string, toks, all []token) error {
	i := 1
	for !isWord(toks[i], "TABLE") {
		i++
	}
	i = skipIfNotExists(toks, i+1)
	if i+1 >= len(toks) || toks[i+1].text != "(" {
		return fmt.Errorf("CREATE TABLE without a column list")
	}
	t := &table{name: toks[i].text, doc: doc, file: file}
	open := toks[i+1]

	// Walk the statement with its comments: split the column list at top-level commas; a
	// comment on a line of its own describes the next element, a comment after code on the
	// same line the element that code belongs to.
	var elems [][]token
	var docs []string
	var cur []token
	var pending []string
	started := false
	depth := 0
	appendDoc := func(k int, text string) {
		docs[k] = strings.TrimSpace(docs[k] + " " + text)
	}
	finish := func() {
		if len(cur) > 0 {
			elems = append(elems, cur)
			docs = append(docs, strings.Join(pending, " "))
			pending = nil
		}
		cur = nil
	}
	for _, tk := range all {
		if !started {
			if tk == open {
				started, depth = true, 1
			}
			continue
		}
		if tk.kind == tComment {
			switch {
			case !tk.ownLine && len(cur) > 0:
				pending = append(pending, tk.text) // describes the element being read
			case !tk.ownLine && len(elems) > 0:
				appendDoc(len(elems)-1, tk.text)
			default:
				pending = append(pending, tk.text)
			}
			continue
		}
		if tk.kind == tPunct {
			switch tk.text {
			case "(":
				depth++
			case ")":
				depth--
				if depth == 0 {
					finish()
					started = false
					continue
				}
			case ",":
				if depth == 1 {
					finish()
					continue
				}
			}
		}
		if depth >= 1 && started {
			cur = append(cur, tk)
		}
	}
	for k, e := range elems {
		if isWord(e[0], "PRIMARY", "UNIQUE", "CONSTRAINT", "CHECK", "FOREIGN", "EXCLUDE") {
			t.constraints = append(t.constraints, render(e))
			continue
		}
		c := parseColumn(e)
		c.doc = docs[k]
		t.columns = append(t.columns, c)
	}
	if _, exists := s.tables[t.name]; !exists {
		s.order = append(s.order, t.name)
	}
	s.tables[t.name] = t
	return nil
}

func (s *schema) createIndex(toks []token) error {
	ix := index{}
	i := 1
	for !isWord(toks[i], "INDEX") {
		if isWord(toks[i], "UNIQUE") {
			ix.unique = true
		}
		i++
	}
	i = skipIfNotExists(toks, i+1)
	ix.name = toks[i].text
	if i+2 >= len(toks) || !isWord(toks[i+1], "ON") {
		return fmt.Errorf("CREATE INDEX %s without ON", ix.name)
	}
	tbl := toks[i+2].text
	rest := toks[i+3:]
	for k, tk := range rest {
		if isWord(tk, "WHERE") {
			ix.where = render(rest[k+1:])
			rest = rest[:k]
			break
		}
	}
	ix.columns = render(rest)
	t := s.tables[tbl]
	if t == nil {
		return fmt.Errorf("index %s on unknown table %s", ix.name, tbl)
	}
	t.indexes = append(t.indexes, ix)
	return nil
}

func (s *schema) alterTable(toks []token) error {
	name := toks[2].text
	t := s.tables[name]
	if t == nil {
		return fmt.Errorf("ALTER TABLE of unknown table %s", name)
	}
	op := toks[3:]
	switch {
	case isWord(op[0], "ADD") && !isWord(op[1], "CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"):
		if isWord(op[1], "COLUMN") {
			op = op[1:]
		}
		if len(op) > 3 && isWord(op[1], "IF") && isWord(op[2], "NOT") && isWord(op[3], "EXISTS") {
			op = op[3:]
		}
		t.columns = append(t.columns, parseColumn(op[1:]))
		return nil
	case isWord(op[0], "RENAME") && isWord(op[1], "TO"):
		delete(s.tables, name)
		t.name = op[2].text
		s.tables[t.name] = t
		for k, n := range s.order {
			if n == name {
				s.order[k] = t.name
			}
		}
		return nil
	case isWord(op[0], "RENAME") && len(op) >= 4:
		if isWord(op[1], "COLUMN") {
			op = op[1:]
		}
		if c := s.column(name, op[1].text); c != nil && isWord(op[2], "TO") {
			c.name = op[3].text
			return nil
		}
	case isWord(op[0], "DROP") && len(op) >= 2:
		if isWord(op[1], "COLUMN") {
			op = op[1:]
		}
		col := op[skipIfExists(op, 1)].text
		for k, c := range t.columns {
			if c.name == col {
				t.columns = append(t.columns[:k], t.columns[k+1:]...)
				return nil
			}
		}
	}
	return fmt.Errorf("unsupported statement %q", render(toks))
}

// ---- page ----

var (
	textEscaper = strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;")
	codeEscaper = strings.NewReplacer("|", `\|`)
)

// cell makes a comment safe in a table cell or list item: a pipe would end the cell, and
// outside code spans a <word> would be taken for HTML (inside them entities are not decoded).
func cell(s string) string {
	if s == "" {
		return "—"
	}
	s = strings.Join(strings.Fields(s), " ")
	parts := strings.Split(s, "`")
	if len(parts)%2 == 0 {
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

func code(s string) string {
	if s == "" {
		return "—"
	}
	return "`" + strings.ReplaceAll(s, "|", `\|`) + "`"
}

func renderReadModelsDoc(t *testing.T) []byte {
	lite := loadSchema(t, "sqlite", "readmodel")
	pg := loadSchema(t, "postgres", "readmodel")
	liteLog := loadSchema(t, "sqlite", "eventlog")
	pgLog := loadSchema(t, "postgres", "eventlog")

	var b bytes.Buffer
	b.WriteString("# Read models\n\n")
	b.WriteString("<!-- Generated from the SQL migrations in migrations/; do not edit. Regenerate: " + regenerate + " -->\n\n")
	b.WriteString("The tables `zuno db` queries, as the migrations create them: the SQLite schema (the default), " +
		"with the Postgres type in its own column where it differs (— where it is the same). Every read model is derived from the event " +
		"log by a projector (see [storage.md](storage.md)) and can be dropped and rebuilt with " +
		"`zuno projections rebuild`; `projection_checkpoint` holds each projector's position. JSON columns are " +
		"read with `json_extract(column, '$.path')` on both databases (on Postgres a function of that name is " +
		"defined, returning text). The event payloads stored in `event.data` are described in [events.md](events.md).\n\n")
	b.WriteString("Migration files, applied in name order, each once:\n\n")
	for _, f := range lite.files {
		fmt.Fprintf(&b, "- `%s`%s\n", f.name, descSuffix(f.doc))
	}
	for _, f := range pg.files {
		fmt.Fprintf(&b, "- `%s`%s\n", f.name, descSuffix(f.doc))
	}
	b.WriteString("\nTables: ")
	var links []string
	for _, n := range lite.order {
		links = append(links, fmt.Sprintf("[`%s`](#%s)", n, n))
	}
	b.WriteString(strings.Join(links, ", ") + ".\n")

	renderTables(&b, lite, pg)
	renderOnlyPostgres(&b, lite, pg)
	renderExtras(&b, lite, pg)

	b.WriteString("\n## The event log tables\n\n")
	b.WriteString("Not read models: the SQL event stores' own log (`migrations/<dialect>/eventlog`), written only " +
		"by the event store adapters. Query the `event` read model instead; it holds the same events.\n")
	renderTables(&b, liteLog, pgLog)
	renderOnlyPostgres(&b, liteLog, pgLog)
	renderExtras(&b, liteLog, pgLog)
	return append(bytes.TrimRight(b.Bytes(), "\n"), '\n')
}

// renderExtras lists the functions and views the migrations create.
func renderExtras(b *bytes.Buffer, lite, pg *schema) {
	for _, d := range []struct {
		name string
		s    *schema
	}{{"SQLite", lite}, {"Postgres", pg}} {
		if len(d.s.functions) > 0 {
			fmt.Fprintf(b, "\n%s functions:\n\n", d.name)
			for _, f := range d.s.functions {
				fmt.Fprintf(b, "- `%s` (`%s`)%s\n", strings.ReplaceAll(f.signature, "|", `\|`), f.file, descSuffix(firstParagraph(f.doc)))
			}
		}
		if len(d.s.views) > 0 {
			fmt.Fprintf(b, "\n%s views: %s.\n", d.name, strings.Join(d.s.views, ", "))
		}
	}
}

func descSuffix(doc string) string {
	if doc == "" {
		return ""
	}
	return ": " + cell(doc)
}

func renderTables(b *bytes.Buffer, lite, pg *schema) {
	for _, n := range lite.order {
		tb := lite.tables[n]
		fmt.Fprintf(b, "\n### %s\n\n", n)
		if tb.doc != "" {
			fmt.Fprintf(b, "%s\n\n", cell(tb.doc))
		}
		fmt.Fprintf(b, "Created in `%s`.", tb.file)
		if pg.tables[n] == nil {
			b.WriteString(" Not in the Postgres schema.")
		}
		b.WriteString("\n\n| column | type | Postgres type | constraints | description |\n|---|---|---|---|---|\n")
		for _, c := range tb.columns {
			pgType := ""
			doc := c.doc
			if pc := pg.column(n, c.name); pc == nil {
				pgType = "(absent)"
			} else {
				if !strings.EqualFold(pc.typ, c.typ) {
					pgType = pc.typ
				}
				if doc == "" && pc.doc != "" {
					doc = "Postgres: " + pc.doc
				}
			}
			fmt.Fprintf(b, "| `%s` | %s | %s | %s | %s |\n", c.name, code(c.typ), code(pgType), code(c.constraints), cell(doc))
		}
		if len(tb.constraints) > 0 {
			var cs []string
			for _, c := range tb.constraints {
				cs = append(cs, code(c))
			}
			fmt.Fprintf(b, "\nTable constraints: %s.\n", strings.Join(cs, ", "))
		}
		if len(tb.indexes) > 0 {
			b.WriteString("\nIndexes:\n\n")
			for _, ix := range tb.indexes {
				kind := "index"
				if ix.unique {
					kind = "unique index"
				}
				fmt.Fprintf(b, "- `%s`: %s on `%s`", ix.name, kind, ix.columns)
				if ix.where != "" {
					fmt.Fprintf(b, " where `%s`", ix.where)
				}
				b.WriteString("\n")
			}
		}
	}
}

// renderOnlyPostgres notes tables and columns that only the Postgres schema has.
func renderOnlyPostgres(b *bytes.Buffer, lite, pg *schema) {
	var notes []string
	for _, n := range pg.order {
		lt := lite.tables[n]
		if lt == nil {
			notes = append(notes, fmt.Sprintf("table `%s`", n))
			continue
		}
		for _, c := range pg.tables[n].columns {
			if lite.column(n, c.name) == nil {
				notes = append(notes, fmt.Sprintf("column `%s.%s` (`%s`)", n, c.name, c.typ))
			}
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(b, "\nOnly in the Postgres schema: %s.\n", strings.Join(notes, ", "))
	}
}

// TestSchemaParser covers the forms a later migration is likely to use, so a new migration
// does not first meet the parser in TestDocs.
func TestSchemaParser(t *testing.T) {
	src := `-- File comment.

-- The widget table.
CREATE TABLE IF NOT EXISTS widget (
    -- The id.
    id    TEXT PRIMARY KEY,
    size  NUMERIC(10, 2) NOT NULL DEFAULT 0, -- in metres
    label TEXT -- shown to people
);
CREATE UNIQUE INDEX IF NOT EXISTS widget_label ON widget (label) WHERE label IS NOT NULL;
ALTER TABLE widget ADD COLUMN colour TEXT NOT NULL DEFAULT 'red; really';
ALTER TABLE widget RENAME COLUMN label TO name;
ALTER TABLE widget ADD COLUMN IF NOT EXISTS weight BIGINT NOT NULL DEFAULT '0';
INSERT INTO widget (id) VALUES ('a;b');
CREATE FUNCTION f(x int) RETURNS int LANGUAGE sql AS $$ SELECT x; $$;
`
	toks, err := lex(src)
	if err != nil {
		t.Fatal(err)
	}
	stmts, fileDoc := split(toks)
	if fileDoc != "File comment." {
		t.Errorf("file doc %q", fileDoc)
	}
	s := &schema{tables: map[string]*table{}}
	for _, st := range stmts {
		if err := s.apply("x.sql", st, 1); err != nil {
			t.Fatal(err)
		}
	}
	w := s.tables["widget"]
	if w == nil || w.doc != "The widget table." {
		t.Fatalf("widget: %+v", w)
	}
	want := []column{
		{name: "id", typ: "TEXT", constraints: "PRIMARY KEY", doc: "The id."},
		{name: "size", typ: "NUMERIC(10, 2)", constraints: "NOT NULL DEFAULT 0", doc: "in metres"},
		{name: "name", typ: "TEXT", doc: "shown to people"},
		{name: "colour", typ: "TEXT", constraints: "NOT NULL DEFAULT 'red; really'"},
		{name: "weight", typ: "BIGINT", constraints: "NOT NULL DEFAULT '0'"},
	}
	if len(w.columns) != len(want) {
		t.Fatalf("columns %+v", w.columns)
	}
	for i := range want {
		if w.columns[i] != want[i] {
			t.Errorf("column %d: got %+v, want %+v", i, w.columns[i], want[i])
		}
	}
	if len(w.indexes) != 1 || !w.indexes[0].unique || w.indexes[0].columns != "(label)" || w.indexes[0].where != "label IS NOT NULL" {
		t.Errorf("indexes %+v", w.indexes)
	}
	if len(s.functions) != 1 || s.functions[0].signature != "f(x int) RETURNS int" {
		t.Errorf("functions %+v", s.functions)
	}
}
