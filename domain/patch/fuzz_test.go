package patch_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/patch"
)

// seedPatches are the conformance scenarios' patches when the data is there, plus a few that
// reach the parser's corners.
func seedPatches() []string {
	seeds := []string{
		"",
		"*** Begin Patch\n*** End Patch",
		"<<'EOF'\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF\n",
		"*** Begin Patch\r\n*** Update File: a\r\n*** Move to: b\r\n@@ ctx\r\n a\r\n-b\r\n+c\r\n*** End of File\r\n*** End Patch\r\n",
		"*** Begin Patch\n*** Add File: a/b\n+x\n\n+y\n*** End Patch\n",
		"*** Begin Patch\n*** Update File: f\n@@ -1,2 +1,2 @@\n-a\n*** End Patch\n",
		"*** Begin Patch\n*** Update File: f\n\n@@\n\n-\n+\n  *** Delete File: ../x\n*** End Patch\n",
	}
	dir := filepath.Join("..", "..", "..", "shared", "conformance", "apply_patch", "scenarios")
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			if b, err := os.ReadFile(filepath.Join(dir, e.Name(), "patch.txt")); err == nil {
				seeds = append(seeds, string(b))
			}
		}
	}
	return seeds
}

func FuzzParse(f *testing.F) {
	for _, s := range seedPatches() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		p, err := patch.Parse(text)
		if err != nil {
			var pe *patch.Error
			if !errors.As(err, &pe) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			if p != nil || pe.Code() != patch.CodeInvalidArgument || pe.Message == "" || pe.Fix == "" {
				t.Fatalf("incomplete error %+v", pe)
			}
			if n := strings.Count(text, "\n") + 1; pe.Line < 1 || pe.Line > n {
				t.Fatalf("line %d outside the patch's %d lines: %v", pe.Line, n, pe)
			}
			return
		}
		if p == nil || len(p.Ops) == 0 {
			t.Fatal("accepted a patch without operations")
		}
		for _, q := range p.Paths() {
			if q == "" || q == "." || strings.HasPrefix(q, "/") || q == ".." || strings.HasPrefix(q, "../") || strings.Contains(q, "/../") {
				t.Fatalf("unsafe path %q accepted", q)
			}
		}
		// Plan re-validates a patch; a parsed one must pass, so the only refusal left with an
		// empty snapshot is the missing state.
		var se *patch.SnapshotError
		if _, err := patch.Plan(p, patch.Snapshot{}); !errors.As(err, &se) {
			t.Fatalf("Plan refused a parsed patch: %v", err)
		}
		if strings.Contains(text, "\r") {
			return // a line's own trailing CR is indistinguishable from a CRLF break
		}
		again, err := patch.Parse(p.String())
		if err != nil {
			t.Fatalf("canonical form does not parse: %v\n%s", err, p.String())
		}
		if !reflect.DeepEqual(withoutLines(p), withoutLines(again)) {
			t.Fatalf("canonical form changed the patch:\n%s\n%s", dump(p.Ops), dump(again.Ops))
		}
	})
}

var conflictKinds = map[patch.ConflictKind]bool{
	patch.ReadRequired: true, patch.StaleRead: true, patch.ContextMismatch: true, patch.IdenticalReplay: true,
	patch.FileNotFound: true, patch.NotAFile: true, patch.NotADirectory: true,
}

// FuzzPlan gives every path the patch names the same file content, read or not, and checks
// that Plan only ever answers with a plan or typed conflicts, and that an updated file keeps
// its BOM and final-newline state.
func FuzzPlan(f *testing.F) {
	contents := []string{"", "a\nb\nc\n", "\ufeffa\r\nb\r\n", "a\nb", "line1\nline2\n", "x\n\n"}
	for i, s := range seedPatches() {
		f.Add(s, []byte(contents[i%len(contents)]), uint8(i))
	}
	f.Fuzz(func(t *testing.T, text string, content []byte, mode uint8) {
		p, err := patch.Parse(text)
		if err != nil {
			return
		}
		named := map[string]bool{}
		for _, op := range p.Ops {
			named[op.Target()] = true
		}
		s := patch.Snapshot{}
		for i, q := range p.Paths() {
			st := patch.FileState{Generation: uint64(mode >> 4)}
			switch {
			case named[q] && mode&1 == 0:
				st.Kind, st.Content = patch.File, content
				if mode&2 == 0 {
					st.Read = &patch.ReadCredential{Digest: patch.DigestOf(content), Generation: st.Generation}
				}
			case mode&4 != 0 && i%2 == 0:
				st.Kind = patch.Dir
			}
			s[q] = st
		}
		plan, err := patch.Plan(p, s)
		if err != nil {
			var ce *patch.ConflictError
			if !errors.As(err, &ce) || len(ce.Conflicts) == 0 {
				t.Fatalf("not a conflict: %T %v", err, err)
			}
			for _, c := range ce.Conflicts {
				if !conflictKinds[c.Kind] || c.Message == "" || c.RequiredAction == "" || c.Op < 1 || c.Op > len(p.Ops) {
					t.Fatalf("bad conflict %+v", c)
				}
			}
			_ = err.Error()
			return
		}
		for _, w := range plan.Writes {
			if _, ok := s[w.Path]; !ok {
				t.Fatalf("write to %s, which is not in Paths", w.Path)
			}
			u, ok := opFor(p, w.Path).(*patch.Update)
			if !ok || w.Delete || u.MoveTo != "" {
				continue
			}
			orig := s[w.Path].Content
			if bytes.HasPrefix(orig, []byte("\ufeff")) != bytes.HasPrefix(w.Content, []byte("\ufeff")) {
				t.Fatalf("BOM not kept: %q -> %q", orig, w.Content)
			}
			body := bytes.TrimPrefix(orig, []byte("\ufeff"))
			out := bytes.TrimPrefix(w.Content, []byte("\ufeff"))
			// Appending an empty last line to a file without a final newline is
			// indistinguishable from adding the newline, so that case is left out.
			if len(body) > 0 && !bytes.HasSuffix(body, []byte("\n")) && len(out) > 0 && bytes.HasSuffix(out, []byte("\n")) && !endsWithEmptyLine(u) {
				t.Fatalf("final-newline state not kept: %q -> %q", orig, w.Content)
			}
			if !bytes.Contains(body, []byte("\r")) && bytes.Contains(out, []byte("\r\n")) && !strings.Contains(text, "\r") {
				t.Fatalf("CRLF appeared in an LF file: %q -> %q", orig, w.Content)
			}
		}
	})
}

func endsWithEmptyLine(u *patch.Update) bool {
	for _, c := range u.Chunks {
		if len(c.New) > 0 && c.New[len(c.New)-1] == "" {
			return true
		}
	}
	return false
}
