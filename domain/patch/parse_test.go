package patch_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/patch"
)

func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []patch.Op
	}{
		{
			name: "add, delete, update with move and several hunks",
			text: lines(
				"*** Begin Patch",
				"*** Add File: a/new.txt",
				"+one",
				"+",
				"+three",
				"*** Delete File: gone.txt",
				"*** Update File: src/x.go",
				"*** Move to: src/y.go",
				"@@ func main() {",
				" ctx",
				"-old",
				"+new",
				"@@",
				"-tail",
				"+tail2",
				"*** End of File",
				"*** End Patch",
			),
			want: []patch.Op{
				&patch.Add{Path: "a/new.txt", Content: "one\n\nthree\n", Line: 2},
				&patch.Delete{Path: "gone.txt", Line: 6},
				&patch.Update{Path: "src/x.go", MoveTo: "src/y.go", Line: 7, Chunks: []patch.Chunk{
					{Context: "func main() {", Old: []string{"ctx", "old"}, New: []string{"ctx", "new"}, Line: 9},
					{Old: []string{"tail"}, New: []string{"tail2"}, EndOfFile: true, Line: 13},
				}},
			},
		},
		{
			name: "first hunk without @@, empty line is empty context",
			text: lines("*** Begin Patch", "*** Update File: f", " a", "", "-b", "*** End Patch"),
			want: []patch.Op{&patch.Update{Path: "f", Line: 2, Chunks: []patch.Chunk{
				{Old: []string{"a", "", "b"}, New: []string{"a", ""}, Line: 3},
			}}},
		},
		{
			name: "CRLF patch, padded markers, blank lines between operations",
			text: "\r\n  *** Begin Patch \r\n *** Delete File: x \r\n\r\n*** Add File: y\r\n+1\r\n\r\n*** End Patch  \r\n\r\n",
			want: []patch.Op{
				&patch.Delete{Path: "x", Line: 3},
				&patch.Add{Path: "y", Content: "1\n", Line: 5},
			},
		},
		{
			name: "heredoc wrapper",
			text: lines("<<'EOF'", "*** Begin Patch", "*** Delete File: x", "*** End Patch", "EOF"),
			want: []patch.Op{&patch.Delete{Path: "x", Line: 3}},
		},
		{
			name: "paths are cleaned",
			text: lines("*** Begin Patch", "*** Delete File: ./a//b/./c", "*** End Patch"),
			want: []patch.Op{&patch.Delete{Path: "a/b/c", Line: 2}},
		},
		{
			name: "add with no lines is an empty file",
			text: lines("*** Begin Patch", "*** Add File: empty", "*** End Patch"),
			want: []patch.Op{&patch.Add{Path: "empty", Line: 2}},
		},
		{
			name: "move without hunks is a rename",
			text: lines("*** Begin Patch", "*** Update File: a", "*** Move to: b", "*** End Patch"),
			want: []patch.Op{&patch.Update{Path: "a", MoveTo: "b", Line: 2}},
		},
		{
			name: "padded header after a hunk ends the hunk",
			text: lines("*** Begin Patch", "*** Update File: a", "@@", "-x", "+y", "  *** Delete File: b", "*** End Patch"),
			want: []patch.Op{
				&patch.Update{Path: "a", Line: 2, Chunks: []patch.Chunk{{Old: []string{"x"}, New: []string{"y"}, Line: 3}}},
				&patch.Delete{Path: "b", Line: 6},
			},
		},
		{
			name: "lines that merely contain markers are content",
			text: lines("*** Begin Patch", "*** Add File: a", "+*** End Patch", "+@@", "*** Update File: b", "@@", " ***x", "-*** End of File", "+@@ y", "*** End Patch"),
			want: []patch.Op{
				&patch.Add{Path: "a", Content: "*** End Patch\n@@\n", Line: 2},
				&patch.Update{Path: "b", Line: 5, Chunks: []patch.Chunk{
					{Old: []string{"***x", "*** End of File"}, New: []string{"***x", "@@ y"}, Line: 6},
				}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := patch.Parse(tt.text)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(p.Ops, tt.want) {
				t.Fatalf("ops\n got %s\nwant %s", dump(p.Ops), dump(tt.want))
			}
		})
	}
}

func dump(ops []patch.Op) string {
	var b strings.Builder
	for _, op := range ops {
		b.WriteString("\n  ")
		switch op := op.(type) {
		case *patch.Add:
			b.WriteString(strings.ReplaceAll(strings.TrimSpace(strings.Join([]string{"add", op.Path, op.Content}, " ")), "\n", `\n`))
		case *patch.Delete:
			b.WriteString("delete " + op.Path)
		case *patch.Update:
			b.WriteString("update " + op.Path + " -> " + op.MoveTo)
			for _, c := range op.Chunks {
				b.WriteString("\n    chunk ")
				b.WriteString(strings.Join([]string{c.Context, "old=" + strings.Join(c.Old, "|"), "new=" + strings.Join(c.New, "|")}, " "))
			}
		}
	}
	return b.String()
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		line    int
		message string
	}{
		{"empty", "  \n\n", 1, "empty"},
		{"no begin", lines("*** Update File: a", "*** End Patch"), 1, "first line"},
		{"no end", lines("*** Begin Patch", "*** Delete File: a"), 2, "last line"},
		{"only begin", lines("*** Begin Patch"), 1, "last line"},
		{"no operations", lines("*** Begin Patch", "*** End Patch"), 2, "no file operations"},
		{"unknown header", lines("*** Begin Patch", "*** Frobnicate File: foo", "*** End Patch"), 2, "not an operation header"},
		{"stray move", lines("*** Begin Patch", "*** Move to: b", "*** End Patch"), 2, "Move to"},
		{"update without hunks", lines("*** Begin Patch", "*** Update File: a", "*** End Patch"), 2, "no hunks"},
		{"hunk without lines", lines("*** Begin Patch", "*** Update File: a", "@@", "*** End Patch"), 3, "no lines"},
		{"eof marker alone", lines("*** Begin Patch", "*** Update File: a", "@@", "*** End of File", "*** End Patch"), 3, "no lines"},
		{"second hunk without @@", lines("*** Begin Patch", "*** Update File: a", "@@", "-a", "+b", "x", "*** End Patch"), 6, "expected a '@@'"},
		{"bad hunk line", lines("*** Begin Patch", "*** Update File: a", "@@", "x", "*** End Patch"), 4, "unexpected line"},
		{"unified diff header", lines("*** Begin Patch", "*** Update File: a", "@@ -1,3 +1,4 @@", "-a", "*** End Patch"), 3, "unified-diff"},
		{"add line without plus", lines("*** Begin Patch", "*** Add File: a", "+x", "y", "*** End Patch"), 4, "does not start with '+'"},
		{"add blank line without plus", lines("*** Begin Patch", "*** Add File: a", "+x", "", "+y", "*** End Patch"), 4, "does not start with '+'"},
		{"absolute path", lines("*** Begin Patch", "*** Delete File: /etc/passwd", "*** End Patch"), 2, "absolute"},
		{"windows absolute path", lines("*** Begin Patch", "*** Delete File: C:/x", "*** End Patch"), 2, "absolute"},
		{"escaping path", lines("*** Begin Patch", "*** Delete File: a/../../x", "*** End Patch"), 2, "leaves the workspace"},
		{"escaping backslash path", lines("*** Begin Patch", `*** Delete File: a\..\..\x`, "*** End Patch"), 2, "leaves the workspace"},
		{"escaping move", lines("*** Begin Patch", "*** Update File: a", "*** Move to: ../b", "*** End Patch"), 3, "leaves the workspace"},
		{"home path", lines("*** Begin Patch", "*** Delete File: ~/x", "*** End Patch"), 2, "home"},
		{"workspace root", lines("*** Begin Patch", "*** Delete File: ./", "*** End Patch"), 2, "workspace itself"},
		{"empty path", lines("*** Begin Patch", "*** Delete File: ", "*** End Patch"), 2, "no path"},
		{"control character", lines("*** Begin Patch", "*** Delete File: a\tb", "*** End Patch"), 2, "control character"},
		{"same path twice", lines("*** Begin Patch", "*** Delete File: a", "*** Add File: ./a", "+x", "*** End Patch"), 3, "already named by the operation on line 2"},
		{"move onto itself", lines("*** Begin Patch", "*** Update File: a", "*** Move to: a", "*** End Patch"), 3, "already named"},
		{"file and directory", lines("*** Begin Patch", "*** Add File: a", "+x", "*** Add File: a/b", "+y", "*** End Patch"), 4, "also a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := patch.Parse(tt.text)
			var pe *patch.Error
			if !errors.As(err, &pe) {
				t.Fatalf("want *patch.Error, got %v (patch %v)", err, p)
			}
			if p != nil {
				t.Fatalf("a patch came back with the error")
			}
			if pe.Code() != patch.CodeInvalidArgument || pe.Line != tt.line || !strings.Contains(pe.Message, tt.message) || pe.Fix == "" {
				t.Fatalf("got line %d code %s %q (fix %q), want line %d containing %q", pe.Line, pe.Code(), pe.Message, pe.Fix, tt.line, tt.message)
			}
		})
	}
}

func TestPatchStringRoundTrip(t *testing.T) {
	text := lines(
		"*** Begin Patch",
		"*** Add File: a/new.txt",
		"+one",
		"+",
		"*** Delete File: gone.txt",
		"*** Update File: src/x.go",
		"*** Move to: src/y.go",
		" first",
		"-old",
		"+new",
		"@@ func f() {",
		"+added",
		"*** End of File",
		"*** Update File: r",
		"*** Move to: s",
		"*** End Patch",
	)
	p, err := patch.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	again, err := patch.Parse(p.String())
	if err != nil {
		t.Fatalf("%v\n%s", err, p.String())
	}
	if !reflect.DeepEqual(withoutLines(p), withoutLines(again)) {
		t.Fatalf("round trip changed the patch:\n%s\n%s", dump(p.Ops), dump(again.Ops))
	}
	for i := range p.Ops {
		if patch.OpDigest(p.Ops[i]) != patch.OpDigest(again.Ops[i]) {
			t.Fatalf("op %d: digest changed in the round trip", i)
		}
	}
}

// withoutLines clears line numbers, which are where an operation was written, not what it does.
func withoutLines(p *patch.Patch) []patch.Op {
	var out []patch.Op
	for _, op := range p.Ops {
		switch op := op.(type) {
		case *patch.Add:
			c := *op
			c.Line = 0
			out = append(out, &c)
		case *patch.Delete:
			c := *op
			c.Line = 0
			out = append(out, &c)
		case *patch.Update:
			c := *op
			c.Line = 0
			c.Chunks = append([]patch.Chunk(nil), op.Chunks...)
			for i := range c.Chunks {
				c.Chunks[i].Line = 0
			}
			out = append(out, &c)
		}
	}
	return out
}

func TestOpDigest(t *testing.T) {
	a := &patch.Update{Path: "f", Chunks: []patch.Chunk{{Old: []string{"ab"}, New: []string{"c"}}}, Line: 3}
	moved := &patch.Update{Path: "f", Chunks: []patch.Chunk{{Old: []string{"ab"}, New: []string{"c"}}}, Line: 9}
	split := &patch.Update{Path: "f", Chunks: []patch.Chunk{{Old: []string{"a", "b"}, New: []string{"c"}}}}
	other := &patch.Update{Path: "g", Chunks: []patch.Chunk{{Old: []string{"ab"}, New: []string{"c"}}}}
	if patch.OpDigest(a) != patch.OpDigest(moved) {
		t.Error("the line an operation sits on changed its digest")
	}
	if patch.OpDigest(a) == patch.OpDigest(split) || patch.OpDigest(a) == patch.OpDigest(other) {
		t.Error("different operations share a digest")
	}
	if patch.OpDigest(&patch.Add{Path: "f"}) == patch.OpDigest(&patch.Delete{Path: "f"}) {
		t.Error("add and delete share a digest")
	}
}
