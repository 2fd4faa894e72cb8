package toolset

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/search"
	"github.com/zuno-run/zuno/domain/tools"
)

func TestGlob(t *testing.T) {
	s, root := newSet(t)
	put(t, root, "cmd/main.go", "package main\n")
	put(t, root, "lib/a.go", "package lib\n")
	put(t, root, "lib/a.txt", "text\n")
	r := call(t, s, tools.NameGlob, `{"pattern":"*.go"}`)
	want(t, r, tools.OutcomeCompleted, "")
	if r.Output != "cmd/main.go\nlib/a.go\n" {
		t.Errorf("output %q", r.Output)
	}
	if f := facts(t, r); f["returned"] != 2.0 || f["truncated"] != false {
		t.Errorf("details %v", f)
	}
	r = call(t, s, tools.NameGlob, `{"pattern":"*","path":"lib","limit":1}`)
	if f := facts(t, r); f["returned"] != 1.0 || f["found"] != 2.0 || f["truncated"] != true || !strings.Contains(r.Output, "truncated") {
		t.Errorf("limited glob: %v\n%s", f, r.Output)
	}
	if r := call(t, s, tools.NameGlob, `{"pattern":"*.rs"}`); r.Outcome != tools.OutcomeCompleted || !strings.Contains(r.Output, "No files found") {
		t.Errorf("no match: %+v", r)
	}
	want(t, call(t, s, tools.NameGlob, `{"pattern":"*","path":"nope"}`), tools.OutcomeError, "invalid_arguments")
}

func TestGrep(t *testing.T) {
	s, root := newSet(t)
	put(t, root, "a.go", "package a\n\nfunc Hello() {}\n")
	put(t, root, "b.txt", "hello there\n")
	r := call(t, s, tools.NameGrep, `{"pattern":"hello","caseInsensitive":true,"include":"*.go","context":1}`)
	want(t, r, tools.OutcomeCompleted, "")
	if !strings.Contains(r.Output, "a.go:\n") || !strings.Contains(r.Output, "Line 3: func Hello() {}") ||
		!strings.Contains(r.Output, "Line 2- ") || strings.Contains(r.Output, "b.txt") {
		t.Errorf("output:\n%s", r.Output)
	}
	// A pattern rg cannot compile is a refused call, not "no matches".
	r = call(t, s, tools.NameGrep, `{"pattern":"(unclosed"}`)
	want(t, r, tools.OutcomeError, "invalid_arguments")
	want(t, call(t, s, tools.NameGrep, `{"pattern":"x","path":"../.."}`), tools.OutcomeError, "invalid_arguments")
}

func TestSearchWithoutRG(t *testing.T) {
	s, root := newSet(t, func(c *Config) { c.RG = filepath.Join(t.TempDir(), "no-such-rg") })
	put(t, root, "a.txt", "x\n")
	for _, name := range []string{tools.NameGlob, tools.NameGrep} {
		r := call(t, s, name, `{"pattern":"*"}`)
		want(t, r, tools.OutcomeError, "unavailable")
		if !strings.Contains(r.Output, "ripgrep") {
			t.Errorf("%s: %s", name, r.Output)
		}
	}
	// read does not depend on rg.
	want(t, call(t, s, tools.NameRead, `{"path":"a.txt"}`), tools.OutcomeCompleted, "")
}

// TestGrepWithheld: output over the byte cap is stored whole (the adapter's own rendering,
// byte for byte) and the model gets a notice with the size, the cap and the read-back call.
func TestGrepWithheld(t *testing.T) {
	const maxBytes = 400
	s, root := newSet(t, func(c *Config) { c.MaxBytes = maxBytes })
	var content strings.Builder
	for i := range 60 {
		fmt.Fprintf(&content, "needle number %d\n", i)
	}
	put(t, root, "hay.txt", content.String())
	r := callID(t, s, tools.NameGrep, "call/with:odd chars", `{"pattern":"needle","limit":1000}`)
	want(t, r, tools.OutcomeCompleted, "")

	direct, err := search.New(root)
	if err != nil {
		t.Fatal(err)
	}
	direct.MaxBytes = maxBytes
	expected, err := direct.Grep(context.Background(), search.GrepRequest{Pattern: "needle", Limit: 1000})
	if err != nil || expected.Withheld == nil {
		t.Fatalf("direct grep: %v %+v", err, expected.Withheld)
	}

	w := r.Metadata.WithheldOutput
	if w == nil || w.Limit != "max_bytes" || w.MaxBytes != maxBytes || w.Bytes != int64(len(expected.Output)) || w.Lines != expected.Withheld.Lines {
		t.Fatalf("withheld %+v", w)
	}
	if len(r.Metadata.OutputPaths) != 1 || r.Metadata.OutputPaths[0] != w.Path {
		t.Fatalf("outputPaths %v", r.Metadata.OutputPaths)
	}
	if filepath.Base(w.Path) != "call_with_odd_chars-grep.out" || filepath.Dir(w.Path) != s.art.dir {
		t.Errorf("artifact path %s", w.Path)
	}
	stored, err := os.ReadFile(w.Path)
	if err != nil || !bytes.Equal(stored, []byte(expected.Output)) {
		t.Fatalf("artifact differs from the search output (%v)", err)
	}
	for _, part := range []string{fmt.Sprint(len(stored), " bytes"), "max_bytes", w.Path, `"action": "artifact"`, `"outputPath"`} {
		if !strings.Contains(r.Output, part) {
			t.Errorf("notice lacks %q:\n%s", part, r.Output)
		}
	}
	if strings.Contains(r.Output, "needle number") {
		t.Error("withheld output leaked into the notice")
	}
	if f := facts(t, r); f["returned"] != 60.0 {
		t.Errorf("details %v", f)
	}
}

func TestGlobWithheldByLines(t *testing.T) {
	s, root := newSet(t, func(c *Config) { c.MaxLines = 3 })
	for i := range 5 {
		put(t, root, fmt.Sprintf("f%d.txt", i), "")
	}
	r := call(t, s, tools.NameGlob, `{"pattern":"*.txt"}`)
	w := r.Metadata.WithheldOutput
	if r.Outcome != tools.OutcomeCompleted || w == nil || w.Limit != "max_lines" || w.Lines != 5 {
		t.Fatalf("%+v\n%s", w, r.Output)
	}
	if got, _ := os.ReadFile(w.Path); string(got) != "f0.txt\nf1.txt\nf2.txt\nf3.txt\nf4.txt\n" {
		t.Errorf("artifact %q", got)
	}
}
