package patch_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/patch"
)

// workspace is a plan test's starting tree: files the model has read (valid credentials)
// unless listed in unread, and directories.
type workspace struct {
	files  map[string]string
	unread []string
	dirs   []string
}

func (w workspace) tree() tree {
	tr := newTree()
	for p, c := range w.files {
		tr.files[p] = []byte(c)
	}
	for _, d := range w.dirs {
		tr.dirs[d] = true
	}
	return tr
}

func (w workspace) snapshot(p *patch.Patch) patch.Snapshot {
	s := w.tree().snapshot(p)
	for _, q := range w.unread {
		if st, ok := s[q]; ok {
			st.Read = nil
			s[q] = st
		}
	}
	return s
}

func body(ls ...string) string {
	return lines(append(append([]string{"*** Begin Patch"}, ls...), "*** End Patch")...)
}

func mustParse(t *testing.T, text string) *patch.Patch {
	t.Helper()
	p, err := patch.Parse(text)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return p
}

func TestPlanUpdateContent(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		hunks []string
		want  string
	}{
		{"LF", "a\nb\nc\n", []string{"@@", "-b", "+B"}, "a\nB\nc\n"},
		{"CRLF kept", "a\r\nb\r\nc\r\n", []string{"@@", " a", "-b", "+B", "+B2"}, "a\r\nB\r\nB2\r\nc\r\n"},
		{"CRLF patch lines do not leak", "a\r\nb\r\n", []string{"@@", "-b\r", "+B\r"}, "a\r\nB\r\n"},
		{"mixed endings: untouched lines keep theirs, new lines take the majority", "a\r\nb\nc\r\n", []string{"@@", "-b", "+B"}, "a\r\nB\r\nc\r\n"},
		{"BOM kept and not part of the first line", "\ufeffa\nb\n", []string{"@@", "-a", "+A"}, "\ufeffA\nb\n"},
		{"BOM with CRLF", "\ufeffa\r\nb\r\n", []string{"@@", "-b", "+B"}, "\ufeffa\r\nB\r\n"},
		{"no final newline kept", "a\nb", []string{"@@", "-b", "+B"}, "a\nB"},
		{"no final newline kept when appending", "a\nb", []string{"@@", "+c"}, "a\nb\nc"},
		{"no final newline, CRLF", "a\r\nb", []string{"@@", "-a", "+A"}, "A\r\nb"},
		{"final newline kept", "a\n", []string{"@@", "-a", "+A", "+B"}, "A\nB\n"},
		{"empty file", "", []string{"@@", "+x"}, "x\n"},
		{"everything deleted", "a\nb\n", []string{"@@", "-a", "-b"}, ""},
		{"trailing whitespace tolerated", "foo   \nbar\n", []string{"@@", "-foo", "+baz"}, "baz\nbar\n"},
		{"surrounding whitespace tolerated", "\t foo \nbar\n", []string{"@@", "-foo", "+baz"}, "baz\nbar\n"},
		{"typographic punctuation tolerated", "say \u201chi\u201d \u2014 ok\n", []string{"@@", `-say "hi" - ok`, "+bye"}, "bye\n"},
		{"exact match beats an earlier fuzzy one", "  a\na\n", []string{"@@", "-a", "+b"}, "  a\nb\n"},
		{"hunks apply in order", "x\n1\nx\n2\n", []string{"@@", " 1", "-x", "+y"}, "x\n1\ny\n2\n"},
		{"@@ context narrows the search", "f() {\n}\ng() {\n}\n", []string{"@@ g() {", "-}", "+  body", "+}"}, "f() {\n}\ng() {\n  body\n}\n"},
		{"pure addition under @@ context goes after the context line", "f() {\n}\ng() {\n}\n", []string{"@@ f() {", "+  body"}, "f() {\n  body\n}\ng() {\n}\n"},
		{"pure addition without context appends", "a\n", []string{"@@", "+b"}, "a\nb\n"},
		{"pure addition stays before a trailing blank line", "a\n\n", []string{"@@", "+b"}, "a\nb\n\n"},
		{"End of File anchors to the last lines", "x\ny\nx\n", []string{"@@", "-x", "+z", "*** End of File"}, "x\ny\nz\n"},
		{"a trailing empty context line stands for the final newline", "a\nb\n", []string{"@@", "-b", "+c", ""}, "a\nc\n"},
		{"several hunks", "1\n2\n3\n4\n", []string{"@@", "-2", "+two", "@@", "-4", "+four"}, "1\ntwo\n3\nfour\n"},
		{"invalid UTF-8 passes through", "a\xff\nb\n", []string{"@@", "-b", "+c"}, "a\xff\nc\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustParse(t, body(append([]string{"*** Update File: f.txt"}, tt.hunks...)...))
			w := workspace{files: map[string]string{"f.txt": tt.file}}
			plan, err := patch.Plan(p, w.snapshot(p))
			if err != nil {
				t.Fatalf("Plan: %v", err)
			}
			if len(plan.Writes) != 1 || plan.Writes[0].Path != "f.txt" || plan.Writes[0].Delete {
				t.Fatalf("writes %+v", plan.Writes)
			}
			if got := string(plan.Writes[0].Content); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			if plan.Writes[0].Prior != patch.DigestOf([]byte(tt.file)) {
				t.Errorf("Prior is not the digest of the planned-against bytes")
			}
			if !reflect.DeepEqual(plan.WrittenPaths, []string{"f.txt"}) || plan.DeletedPaths != nil {
				t.Errorf("written %v deleted %v", plan.WrittenPaths, plan.DeletedPaths)
			}
		})
	}
}

func TestPlanOperations(t *testing.T) {
	tests := []struct {
		name    string
		ws      workspace
		ops     []string
		writes  []string // "path=content" or "-path"
		written []string
		deleted []string
	}{
		{
			name:    "add a new file in new directories",
			ws:      workspace{},
			ops:     []string{"*** Add File: a/b/c.txt", "+hi"},
			writes:  []string{"a/b/c.txt=hi\n"},
			written: []string{"a/b/c.txt"},
		},
		{
			name:    "add over an existing file that was read",
			ws:      workspace{files: map[string]string{"d.txt": "old\r\n"}},
			ops:     []string{"*** Add File: d.txt", "+new"},
			writes:  []string{"d.txt=new\n"},
			written: []string{"d.txt"},
		},
		{
			name:    "delete",
			ws:      workspace{files: map[string]string{"d.txt": "x", "keep": "k"}},
			ops:     []string{"*** Delete File: d.txt"},
			writes:  []string{"-d.txt"},
			deleted: []string{"d.txt"},
		},
		{
			name:    "move with edits keeps the source's style",
			ws:      workspace{files: map[string]string{"old/n.txt": "\ufeffa\r\nb"}},
			ops:     []string{"*** Update File: old/n.txt", "*** Move to: new/n.txt", "@@", "-a", "+A"},
			writes:  []string{"new/n.txt=\ufeffA\r\nb", "-old/n.txt"},
			written: []string{"new/n.txt"},
			deleted: []string{"old/n.txt"},
		},
		{
			name:    "move over an existing target that was read",
			ws:      workspace{files: map[string]string{"a": "from\n", "b": "existing\n"}},
			ops:     []string{"*** Update File: a", "*** Move to: b", "@@", "-from", "+new"},
			writes:  []string{"b=new\n", "-a"},
			written: []string{"b"},
			deleted: []string{"a"},
		},
		{
			name:    "rename without hunks",
			ws:      workspace{files: map[string]string{"a": "same"}},
			ops:     []string{"*** Update File: a", "*** Move to: b"},
			writes:  []string{"b=same", "-a"},
			written: []string{"b"},
			deleted: []string{"a"},
		},
		{
			name:    "several operations in patch order",
			ws:      workspace{files: map[string]string{"m": "1\n", "d": "x\n"}},
			ops:     []string{"*** Add File: n/new", "+c", "*** Delete File: d", "*** Update File: m", "@@", "-1", "+2"},
			writes:  []string{"n/new=c\n", "-d", "m=2\n"},
			written: []string{"n/new", "m"},
			deleted: []string{"d"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustParse(t, body(tt.ops...))
			plan, err := patch.Plan(p, tt.ws.snapshot(p))
			if err != nil {
				t.Fatalf("Plan: %v", err)
			}
			var got []string
			for _, w := range plan.Writes {
				if w.Delete {
					got = append(got, "-"+w.Path)
				} else {
					got = append(got, w.Path+"="+string(w.Content))
				}
				if w.Op != patch.OpDigest(opFor(p, w.Path)) {
					t.Errorf("write %s: Op is not its operation's digest", w.Path)
				}
			}
			if !reflect.DeepEqual(got, tt.writes) {
				t.Errorf("writes %q, want %q", got, tt.writes)
			}
			if !reflect.DeepEqual(plan.WrittenPaths, tt.written) || !reflect.DeepEqual(plan.DeletedPaths, tt.deleted) {
				t.Errorf("written %v deleted %v, want %v %v", plan.WrittenPaths, plan.DeletedPaths, tt.written, tt.deleted)
			}
		})
	}
}

func opFor(p *patch.Patch, path string) patch.Op {
	for _, op := range p.Ops {
		if op.Target() == path {
			return op
		}
		if u, ok := op.(*patch.Update); ok && u.MoveTo == path {
			return op
		}
	}
	return nil
}

func TestPlanConflicts(t *testing.T) {
	stale := func(s patch.Snapshot) {
		st := s["f"]
		st.Read = &patch.ReadCredential{Digest: patch.DigestOf([]byte("what the model saw\n")), Generation: st.Generation}
		s["f"] = st
	}
	staleGeneration := func(s patch.Snapshot) {
		st := s["f"]
		st.Generation++
		s["f"] = st
	}
	update := []string{"*** Update File: f", "@@", "-a", "+b"}
	tests := []struct {
		name   string
		ws     workspace
		ops    []string
		mutate func(patch.Snapshot)
		kind   patch.ConflictKind
		path   string
		check  func(t *testing.T, c *patch.Conflict)
	}{
		{name: "update unread", ws: workspace{files: map[string]string{"f": "a\n"}, unread: []string{"f"}}, ops: update, kind: patch.ReadRequired, path: "f"},
		{name: "delete unread", ws: workspace{files: map[string]string{"f": "a\n"}, unread: []string{"f"}}, ops: []string{"*** Delete File: f"}, kind: patch.ReadRequired, path: "f"},
		{name: "move unread source", ws: workspace{files: map[string]string{"f": "a\n"}, unread: []string{"f"}}, ops: []string{"*** Update File: f", "*** Move to: g"}, kind: patch.ReadRequired, path: "f"},
		{name: "move onto unread target", ws: workspace{files: map[string]string{"f": "a\n", "g": "b\n"}, unread: []string{"g"}}, ops: []string{"*** Update File: f", "*** Move to: g"}, kind: patch.ReadRequired, path: "g"},
		{name: "add over unread file", ws: workspace{files: map[string]string{"f": "a\n"}, unread: []string{"f"}}, ops: []string{"*** Add File: f", "+x"}, kind: patch.ReadRequired, path: "f"},
		{
			name: "content changed since the read", ws: workspace{files: map[string]string{"f": "a\n"}}, ops: update, mutate: stale, kind: patch.StaleRead, path: "f",
			check: func(t *testing.T, c *patch.Conflict) {
				if c.Read == nil || c.Read.Digest != patch.DigestOf([]byte("what the model saw\n")) || c.ContentDigest != patch.DigestOf([]byte("a\n")) {
					t.Errorf("credential %+v, content %s", c.Read, c.ContentDigest)
				}
			},
		},
		{
			name: "written and restored since the read (generation moved)", ws: workspace{files: map[string]string{"f": "a\n"}}, ops: update, mutate: staleGeneration, kind: patch.StaleRead, path: "f",
			check: func(t *testing.T, c *patch.Conflict) {
				if c.Read.Generation != 1 || c.Generation != 2 {
					t.Errorf("generations %d -> %d", c.Read.Generation, c.Generation)
				}
			},
		},
		{name: "stale move target", ws: workspace{files: map[string]string{"x": "1\n", "f": "a\n"}}, ops: []string{"*** Update File: x", "*** Move to: f"}, mutate: stale, kind: patch.StaleRead, path: "f"},
		{
			name: "context mismatch names the hunk and the nearest candidate",
			ws:   workspace{files: map[string]string{"f": "package main\n\nfunc main() {\n\tprintln(\"hello, world\")\n}\n"}},
			ops:  []string{"*** Update File: f", "@@", " package main", "@@", " func main() {", "-\tprintln(\"hello world\")", "+\tprintln(\"bye\")"},
			kind: patch.ContextMismatch, path: "f",
			check: func(t *testing.T, c *patch.Conflict) {
				if c.Hunk != 2 || c.HunkLine != 5 || c.HunkHeader != "" {
					t.Errorf("hunk %d line %d header %q", c.Hunk, c.HunkLine, c.HunkHeader)
				}
				if c.Nearest == nil || c.Nearest.Line != 3 || c.Nearest.Matching != 1 || c.Nearest.Lines[1] != "\tprintln(\"hello, world\")" {
					t.Fatalf("nearest %+v", c.Nearest)
				}
				if !strings.Contains(c.RequiredAction, "around line 3") || !strings.Contains(c.Error(), "nearest candidate at line 3") {
					t.Errorf("action %q / %s", c.RequiredAction, c.Error())
				}
			},
		},
		{
			name: "@@ context line not found",
			ws:   workspace{files: map[string]string{"f": "func alpha() {\n}\n"}},
			ops:  []string{"*** Update File: f", "@@ func alpah() {", "-}", "+}}"},
			kind: patch.ContextMismatch, path: "f",
			check: func(t *testing.T, c *patch.Conflict) {
				if c.Hunk != 1 || c.HunkHeader != "func alpah() {" || !strings.Contains(c.Message, "@@ header") {
					t.Errorf("%+v", c)
				}
				if c.Nearest == nil || c.Nearest.Line != 1 {
					t.Errorf("nearest %+v", c.Nearest)
				}
			},
		},
		{
			name: "End of File hunk that is not at the end",
			ws:   workspace{files: map[string]string{"f": "a\nb\n"}},
			ops:  []string{"*** Update File: f", "@@", "-a", "+x", "*** End of File"},
			kind: patch.ContextMismatch, path: "f",
			check: func(t *testing.T, c *patch.Conflict) {
				if !strings.Contains(c.Message, "last lines") {
					t.Errorf("%s", c.Message)
				}
			},
		},
		{name: "hunks out of order", ws: workspace{files: map[string]string{"f": "1\n2\n"}}, ops: []string{"*** Update File: f", "@@", "-2", "+b", "@@", "-1", "+a"}, kind: patch.ContextMismatch, path: "f"},
		{
			name: "nothing similar: no candidate",
			ws:   workspace{files: map[string]string{"f": "line1\nline2\n"}},
			ops:  []string{"*** Update File: f", "@@", "-missing", "+changed"},
			kind: patch.ContextMismatch, path: "f",
			check: func(t *testing.T, c *patch.Conflict) {
				if c.Nearest != nil {
					t.Errorf("nearest %+v", c.Nearest)
				}
			},
		},
		{name: "update that changes nothing", ws: workspace{files: map[string]string{"f": "a\n"}}, ops: []string{"*** Update File: f", "@@", "-a", "+a"}, kind: patch.IdenticalReplay, path: "f"},
		{name: "hunk of context lines only", ws: workspace{files: map[string]string{"f": "a\n"}}, ops: []string{"*** Update File: f", "@@", " a"}, kind: patch.IdenticalReplay, path: "f"},
		{name: "add with the content the file has", ws: workspace{files: map[string]string{"f": "x\n"}}, ops: []string{"*** Add File: f", "+x"}, kind: patch.IdenticalReplay, path: "f"},
		{
			name: "same operation on the same content as a recorded attempt",
			ws:   workspace{files: map[string]string{"f": "a\n"}},
			ops:  update,
			mutate: func(s patch.Snapshot) {
				st := s["f"]
				op := &patch.Update{Path: "f", Chunks: []patch.Chunk{{Old: []string{"a"}, New: []string{"b"}}}}
				st.Attempts = []patch.Attempt{{Op: patch.OpDigest(op), Content: patch.DigestOf([]byte("a\n"))}}
				s["f"] = st
			},
			kind: patch.IdenticalReplay, path: "f",
		},
		{name: "update missing file", ws: workspace{}, ops: update, kind: patch.FileNotFound, path: "f"},
		{name: "delete missing file", ws: workspace{}, ops: []string{"*** Delete File: f"}, kind: patch.FileNotFound, path: "f"},
		{name: "move missing file", ws: workspace{}, ops: []string{"*** Update File: f", "*** Move to: g"}, kind: patch.FileNotFound, path: "f"},
		{name: "delete a directory", ws: workspace{files: map[string]string{"f/x": "1"}, dirs: []string{"f"}}, ops: []string{"*** Delete File: f"}, kind: patch.NotAFile, path: "f"},
		{name: "update a directory", ws: workspace{dirs: []string{"f"}}, ops: update, kind: patch.NotAFile, path: "f"},
		{name: "add onto a directory", ws: workspace{dirs: []string{"f"}}, ops: []string{"*** Add File: f", "+x"}, kind: patch.NotAFile, path: "f"},
		{name: "move onto a directory", ws: workspace{files: map[string]string{"a": "1"}, dirs: []string{"f"}}, ops: []string{"*** Update File: a", "*** Move to: f"}, kind: patch.NotAFile, path: "f"},
		{name: "add below a file", ws: workspace{files: map[string]string{"f": "1"}}, ops: []string{"*** Add File: f/g/h", "+x"}, kind: patch.NotADirectory, path: "f"},
		{name: "move below a file", ws: workspace{files: map[string]string{"a": "1", "f": "2"}}, ops: []string{"*** Update File: a", "*** Move to: f/a"}, kind: patch.NotADirectory, path: "f"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustParse(t, body(tt.ops...))
			s := tt.ws.snapshot(p)
			if tt.mutate != nil {
				tt.mutate(s)
			}
			plan, err := patch.Plan(p, s)
			var ce *patch.ConflictError
			if !errors.As(err, &ce) {
				t.Fatalf("want a conflict, got %v (plan %+v)", err, plan)
			}
			if plan.Writes != nil || plan.WrittenPaths != nil {
				t.Errorf("a refused patch came with writes: %+v", plan)
			}
			if len(ce.Conflicts) != 1 {
				t.Fatalf("conflicts: %v", ce)
			}
			c := ce.Conflicts[0]
			if c.Kind != tt.kind || c.Path != tt.path || ce.Code() != string(tt.kind) {
				t.Fatalf("got %s on %s, want %s on %s: %v", c.Kind, c.Path, tt.kind, tt.path, c)
			}
			if c.Op != 1 || c.OpLine != 2 || c.OpDigest != patch.OpDigest(p.Ops[0]) || c.Message == "" || c.RequiredAction == "" {
				t.Errorf("incomplete conflict %+v", c)
			}
			if st := s[c.Path]; st.Kind == patch.File && c.ContentDigest != patch.DigestOf(st.Content) {
				t.Errorf("ContentDigest is not the current content's digest")
			}
			var single *patch.Conflict
			if !errors.As(err, &single) || single != c {
				t.Errorf("errors.As does not reach the conflict")
			}
			if tt.check != nil {
				tt.check(t, c)
			}
		})
	}
}

// TestPlanPreflight: one conflict anywhere means nothing is written, and every conflicting
// operation is reported, not only the first.
func TestPlanPreflight(t *testing.T) {
	p := mustParse(t, body(
		"*** Add File: created.txt", "+hello",
		"*** Update File: missing.txt", "@@", "-old", "+new",
		"*** Update File: ok.txt", "@@", "-1", "+2",
		"*** Delete File: unread.txt",
	))
	ws := workspace{files: map[string]string{"ok.txt": "1\n", "unread.txt": "u\n"}, unread: []string{"unread.txt"}}
	plan, err := patch.Plan(p, ws.snapshot(p))
	var ce *patch.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("want conflicts, got %v", err)
	}
	if len(plan.Writes) != 0 {
		t.Fatalf("writes despite conflicts: %+v", plan.Writes)
	}
	var got []string
	for _, c := range ce.Conflicts {
		got = append(got, string(c.Kind)+" "+c.Path)
	}
	want := []string{"file_not_found missing.txt", "read_required unread.txt"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("conflicts %v, want %v", got, want)
	}
	if ce.Conflicts[0].Op != 2 || ce.Conflicts[1].Op != 4 || ce.Conflicts[1].OpLine != 12 {
		t.Errorf("operation numbers %d %d line %d", ce.Conflicts[0].Op, ce.Conflicts[1].Op, ce.Conflicts[1].OpLine)
	}
	if !strings.Contains(err.Error(), "wrote nothing: 2 conflicting operations") {
		t.Errorf("%v", err)
	}
}

// TestReplayAfterSuccess checks IdenticalReplay: the runtime records what a patch did,
// and sending the same operation again at the content it produced is refused, even with a
// fresh read, instead of being applied twice.
func TestReplayAfterSuccess(t *testing.T) {
	p := mustParse(t, body("*** Update File: f", "@@", "+appended"))
	tr := workspace{files: map[string]string{"f": "a\n"}}.tree()
	plan, err := patch.Plan(p, tr.snapshot(p))
	if err != nil {
		t.Fatal(err)
	}
	tr = tr.apply(plan)
	s := tr.snapshot(p) // the model read the file again: its credential is fresh
	for _, a := range plan.Attempts() {
		st := s[a.Path]
		st.Attempts = append(st.Attempts, a.Attempt)
		s[a.Path] = st
	}
	_, err = patch.Plan(p, s)
	var c *patch.Conflict
	if !errors.As(err, &c) || c.Kind != patch.IdenticalReplay {
		t.Fatalf("want identical_replay, got %v", err)
	}
	// Once the file really changes, the same operation is allowed again.
	tr.files["f"] = []byte("changed\n")
	s = tr.snapshot(p)
	s["f"] = patch.FileState{Kind: patch.File, Content: tr.files["f"], Generation: 1, Read: s["f"].Read, Attempts: s["f"].Attempts}
	for _, a := range plan.Attempts() {
		st := s[a.Path]
		st.Attempts = append(st.Attempts, a.Attempt)
		s[a.Path] = st
	}
	if _, err := patch.Plan(p, s); err != nil {
		t.Fatalf("after a real change: %v", err)
	}
}

// TestReplayAfterMismatch: a mismatch the content decided is recorded; resent unchanged to the
// unchanged file it is an IdenticalReplay. A missing read is not recorded: after reading, the
// same operation may succeed.
func TestReplayAfterMismatch(t *testing.T) {
	p := mustParse(t, body("*** Update File: f", "@@", "-nope", "+x", "*** Delete File: g"))
	ws := workspace{files: map[string]string{"f": "a\n", "g": "b\n"}, unread: []string{"g"}}
	s := ws.snapshot(p)
	_, err := patch.Plan(p, s)
	var ce *patch.ConflictError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 2 {
		t.Fatalf("want two conflicts, got %v", err)
	}
	attempts := ce.Attempts()
	if len(attempts) != 1 || attempts[0].Path != "f" || attempts[0].Content != patch.DigestOf([]byte("a\n")) {
		t.Fatalf("attempts %+v", attempts)
	}
	st := s["f"]
	st.Attempts = []patch.Attempt{attempts[0].Attempt}
	s["f"] = st
	_, err = patch.Plan(p, s)
	if !errors.As(err, &ce) || ce.Conflicts[0].Kind != patch.IdenticalReplay || ce.Conflicts[1].Kind != patch.ReadRequired {
		t.Fatalf("got %v", err)
	}
}

func TestPlanCallerErrors(t *testing.T) {
	p := mustParse(t, body("*** Add File: a/b", "+x"))
	if got := p.Paths(); !reflect.DeepEqual(got, []string{"a", "a/b"}) {
		t.Fatalf("Paths %v", got)
	}
	_, err := patch.Plan(p, patch.Snapshot{"a/b": {}})
	var se *patch.SnapshotError
	if !errors.As(err, &se) || se.Path != "a" || se.Code() != patch.CodeSnapshotIncomplete {
		t.Fatalf("got %v", err)
	}

	hand := &patch.Patch{Ops: []patch.Op{&patch.Delete{Path: "./x"}}}
	var pe *patch.Error
	if _, err := patch.Plan(hand, patch.Snapshot{}); !errors.As(err, &pe) {
		t.Fatalf("non-canonical hand-built path: got %v", err)
	}
	if hand.Ops[0].Target() != "./x" {
		t.Fatalf("Plan rewrote the caller's patch")
	}
	if _, err := patch.Plan(&patch.Patch{}, patch.Snapshot{}); !errors.As(err, &pe) {
		t.Fatalf("empty patch: got %v", err)
	}
	if _, err := patch.Plan(nil, patch.Snapshot{}); !errors.As(err, &pe) {
		t.Fatalf("nil patch: got %v", err)
	}
}
