package toolset

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/tools"
)

func patchText(ops ...string) string {
	return "*** Begin Patch\n" + strings.Join(ops, "") + "*** End Patch\n"
}

func TestReadWindow(t *testing.T) {
	s, root := newSet(t)
	put(t, root, "a.txt", "one\ntwo\nthree\n")
	r := call(t, s, tools.NameRead, `{"path":"a.txt","limit":2}`)
	want(t, r, tools.OutcomeCompleted, "")
	for _, w := range []string{"a.txt: lines 1-2 of 3 (14 bytes)", "     1\tone\n", "     2\ttwo\n", "read with offset 3"} {
		if !strings.Contains(r.Output, w) {
			t.Errorf("output lacks %q:\n%s", w, r.Output)
		}
	}
	if strings.Contains(r.Output, "three") {
		t.Errorf("window went past its limit:\n%s", r.Output)
	}
	f := facts(t, r)
	if f["hasMore"] != true || f["nextOffset"] != 3.0 || f["totalLines"] != 3.0 {
		t.Errorf("details %v", f)
	}
	cred := f["credential"].(map[string]any)
	if !strings.HasPrefix(cred["digest"].(string), "sha256:") {
		t.Errorf("credential %v", cred)
	}
	if len(r.Metadata.WrittenPaths) != 0 || r.Metadata.WithheldOutput != nil {
		t.Errorf("read reported writes or withheld output: %+v", r.Metadata)
	}

	r = call(t, s, tools.NameRead, `{"path":"a.txt","offset":3}`)
	if !strings.Contains(r.Output, "     3\tthree\n") || !strings.Contains(r.Output, "(end of file)") {
		t.Errorf("last window:\n%s", r.Output)
	}
	r = call(t, s, tools.NameRead, `{"path":"a.txt","offset":9}`)
	want(t, r, tools.OutcomeCompleted, "")
	if !strings.Contains(r.Output, "the file has 3 lines") {
		t.Errorf("offset past the end:\n%s", r.Output)
	}
	put(t, root, "empty.txt", "")
	if r := call(t, s, tools.NameRead, `{"path":"empty.txt"}`); !strings.Contains(r.Output, "empty file") {
		t.Errorf("empty file:\n%s", r.Output)
	}
	put(t, root, "nonl.txt", "x")
	if r := call(t, s, tools.NameRead, `{"path":"nonl.txt"}`); !strings.Contains(r.Output, "no newline at the end") {
		t.Errorf("no final newline:\n%s", r.Output)
	}
}

func TestReadShowsBOMAndCRLFOnce(t *testing.T) {
	s, root := newSet(t)
	put(t, root, "w.txt", "\uFEFFalpha\r\nbeta\r\n")
	r := call(t, s, tools.NameRead, `{"path":"w.txt"}`)
	if !strings.Contains(r.Output, "UTF-8 BOM") || !strings.Contains(r.Output, "CRLF") {
		t.Errorf("header does not state BOM and CRLF:\n%s", r.Output)
	}
	if strings.Contains(r.Output, "\r") || strings.Contains(r.Output, "\uFEFF") || !strings.Contains(r.Output, "     1\talpha\n") {
		t.Errorf("lines are not shown as logical lines:\n%q", r.Output)
	}
}

func TestReadDirectoryAndErrors(t *testing.T) {
	s, root := newSet(t)
	put(t, root, "d/x.go", "package x\n")
	put(t, root, "d/sub/y.go", "package y\n")
	r := call(t, s, tools.NameRead, `{"path":"d"}`)
	want(t, r, tools.OutcomeCompleted, "")
	if !strings.Contains(r.Output, "sub/\n") || !strings.Contains(r.Output, "x.go\n") {
		t.Errorf("listing:\n%s", r.Output)
	}
	r = call(t, s, tools.NameRead, `{"path":"missing.txt"}`)
	want(t, r, tools.OutcomeError, "not_found")
	if !strings.Contains(r.Output, "missing.txt") {
		t.Errorf("error does not name the path: %s", r.Output)
	}
	want(t, call(t, s, tools.NameRead, `{"path":"../outside"}`), tools.OutcomeError, "external_directory_required")
}

func TestReadDirectoryWithheld(t *testing.T) {
	s, root := newSet(t, func(c *Config) { c.MaxLines = 5 })
	for i := range 10 {
		put(t, root, fmt.Sprintf("many/f%02d.txt", i), "")
	}
	r := callID(t, s, tools.NameRead, "dir-call", `{"path":"many"}`)
	want(t, r, tools.OutcomeCompleted, "")
	w := r.Metadata.WithheldOutput
	if w == nil || w.Limit != "max_lines" || w.Lines != 11 {
		t.Fatalf("withheld %+v:\n%s", w, r.Output)
	}
	b, err := os.ReadFile(w.Path)
	if err != nil || !strings.Contains(string(b), "f09.txt\n") || int64(len(b)) != w.Bytes {
		t.Fatalf("artifact %q: %v", b, err)
	}
}

func TestWrite(t *testing.T) {
	s, root := newSet(t)
	r := call(t, s, tools.NameWrite, args("path", "new/dir/x.txt", "content", "hello\n"))
	want(t, r, tools.OutcomeCompleted, "")
	if !slices.Equal(r.Metadata.WrittenPaths, []string{"new/dir/x.txt"}) || get(t, root, "new/dir/x.txt") != "hello\n" {
		t.Fatalf("write: %+v", r.Metadata)
	}
	if !strings.Contains(r.Output, "Created new/dir/x.txt (6 bytes)") {
		t.Errorf("output %q", r.Output)
	}

	put(t, root, "old.txt", "old\n")
	r = call(t, s, tools.NameWrite, args("path", "old.txt", "content", "new\n"))
	want(t, r, tools.OutcomeError, "read_required")
	if get(t, root, "old.txt") != "old\n" || len(r.Metadata.WrittenPaths) != 0 || !strings.Contains(r.Output, "Nothing was changed") {
		t.Fatalf("refused write changed something: %+v %s", r.Metadata, r.Output)
	}
	call(t, s, tools.NameRead, `{"path":"old.txt"}`)
	put(t, root, "old.txt", "changed behind the model's back\n")
	want(t, call(t, s, tools.NameWrite, args("path", "old.txt", "content", "new\n")), tools.OutcomeError, "stale_read")
	call(t, s, tools.NameRead, `{"path":"old.txt"}`)
	r = call(t, s, tools.NameWrite, args("path", "old.txt", "content", "new\n"))
	want(t, r, tools.OutcomeCompleted, "")
	if get(t, root, "old.txt") != "new\n" || !strings.Contains(r.Output, "Replaced") {
		t.Fatalf("write after read: %s", r.Output)
	}
	want(t, call(t, s, tools.NameWrite, args("path", "new", "content", "x")), tools.OutcomeError, "not_a_file")
}

func TestApplyPatchSuccess(t *testing.T) {
	s, root := newSet(t)
	put(t, root, "a.txt", "one\ntwo\nthree\n")
	put(t, root, "gone.txt", "bye\n")
	call(t, s, tools.NameRead, `{"path":"a.txt"}`)
	call(t, s, tools.NameRead, `{"path":"gone.txt"}`)
	p := patchText(
		"*** Update File: a.txt\n@@\n one\n-two\n+TWO\n three\n",
		"*** Add File: b/new.txt\n+fresh\n",
		"*** Delete File: gone.txt\n",
	)
	r := call(t, s, tools.NameApplyPatch, args("patch", p))
	want(t, r, tools.OutcomeCompleted, "")
	if get(t, root, "a.txt") != "one\nTWO\nthree\n" || get(t, root, "b/new.txt") != "fresh\n" {
		t.Fatal("patch not applied")
	}
	if _, err := os.Stat(filepath.Join(root, "gone.txt")); !os.IsNotExist(err) {
		t.Fatal("delete not applied")
	}
	if !slices.Equal(r.Metadata.WrittenPaths, []string{"a.txt", "b/new.txt"}) {
		t.Errorf("writtenPaths %v", r.Metadata.WrittenPaths)
	}
	if !strings.Contains(r.Output, "Written: a.txt, b/new.txt") || !strings.Contains(r.Output, "Deleted: gone.txt") {
		t.Errorf("summary:\n%s", r.Output)
	}
	f := facts(t, r)
	if fmt.Sprint(f["deletedPaths"]) != "[gone.txt]" {
		t.Errorf("details %v", f)
	}
	// What the patch wrote counts as read: a follow-up patch needs no new read.
	r = call(t, s, tools.NameApplyPatch, args("patch", patchText("*** Update File: a.txt\n@@\n-one\n+ONE\n")))
	want(t, r, tools.OutcomeCompleted, "")
}

func TestApplyPatchConflicts(t *testing.T) {
	s, root := newSet(t)
	put(t, root, "f.go", "package f\n\nfunc A() {}\n")
	update := args("patch", patchText("*** Update File: f.go\n@@\n-func A() {}\n+func A() { return }\n"))

	r := call(t, s, tools.NameApplyPatch, update)
	want(t, r, tools.OutcomeError, "read_required")
	if !strings.Contains(r.Output, "Nothing was changed") {
		t.Errorf("output: %s", r.Output)
	}
	var d struct {
		Conflicts []conflictFacts `json:"conflicts"`
	}
	if err := json.Unmarshal(r.Metadata.Details, &d); err != nil || len(d.Conflicts) != 1 ||
		d.Conflicts[0].Kind != "read_required" || d.Conflicts[0].Path != "f.go" || d.Conflicts[0].RequiredAction == "" {
		t.Errorf("conflict details %s (%v)", r.Metadata.Details, err)
	}

	call(t, s, tools.NameRead, `{"path":"f.go"}`)
	put(t, root, "f.go", "package f\n\nfunc A() {}\nfunc B() {}\n")
	want(t, call(t, s, tools.NameApplyPatch, update), tools.OutcomeError, "stale_read")

	call(t, s, tools.NameRead, `{"path":"f.go"}`)
	mismatch := args("patch", patchText("*** Update File: f.go\n@@\n-func C() {}\n+func C() { return }\n"))
	r = call(t, s, tools.NameApplyPatch, mismatch)
	want(t, r, tools.OutcomeError, "context_mismatch")
	// The same operation on the same content again is refused as a replay, not retried.
	want(t, call(t, s, tools.NameApplyPatch, mismatch), tools.OutcomeError, "identical_replay")

	if get(t, root, "f.go") != "package f\n\nfunc A() {}\nfunc B() {}\n" {
		t.Fatal("a refused patch changed the file")
	}
	// A patch that does not parse never reaches Execute through Validate; handed raw
	// arguments directly, Execute runs nothing and says the caller skipped validation.
	direct := toolNamed(t, s, tools.NameApplyPatch).Execute(context.Background(),
		tools.Invocation{CallID: "x", Parsed: tools.Parsed{Args: json.RawMessage(`{"patch":"nonsense"}`)}})
	want(t, direct, tools.OutcomeError, tools.CodeNotValidated)
}

func TestApplyPatchKeepsBOMAndCRLF(t *testing.T) {
	s, root := newSet(t)
	put(t, root, "w.txt", "\uFEFFfirst\r\nsecond\r\nthird")
	call(t, s, tools.NameRead, `{"path":"w.txt"}`)
	r := call(t, s, tools.NameApplyPatch, args("patch", patchText("*** Update File: w.txt\n@@\n first\n-second\n+SECOND\n+inserted\n")))
	want(t, r, tools.OutcomeCompleted, "")
	if got := get(t, root, "w.txt"); got != "\uFEFFfirst\r\nSECOND\r\ninserted\r\nthird" {
		t.Fatalf("got %q", got)
	}
}

// TestUncertainAfterPartialPatch provokes a real write failure after a first file was
// written: the second file's directory refuses new entries. As root, permission bits do
// not stop writes, so the immutable attribute (chattr +i) is used when the file system
// supports it.
func TestUncertainAfterPartialPatch(t *testing.T) {
	s, root := newSet(t)
	put(t, root, "a.txt", "a\n")
	put(t, root, "locked/b.txt", "b\n")
	call(t, s, tools.NameRead, `{"path":"a.txt"}`)
	call(t, s, tools.NameRead, `{"path":"locked/b.txt"}`)
	lockDir(t, filepath.Join(root, "locked"))

	r := call(t, s, tools.NameApplyPatch, args("patch", patchText(
		"*** Update File: a.txt\n@@\n-a\n+A\n",
		"*** Update File: locked/b.txt\n@@\n-b\n+B\n",
	)))
	want(t, r, tools.OutcomeUncertain, "uncertain")
	if !slices.Equal(r.Metadata.WrittenPaths, []string{"a.txt"}) {
		t.Errorf("writtenPaths %v", r.Metadata.WrittenPaths)
	}
	f := facts(t, r)
	if f["failed"] != "locked/b.txt" {
		t.Errorf("details %v", f)
	}
	if !strings.Contains(r.Output, "do not resend") || get(t, root, "a.txt") != "A\n" {
		t.Errorf("output %s", r.Output)
	}
	if s.Credentials().Held("a.txt") != nil {
		t.Error("a credential survived an uncertain result")
	}
}

func lockDir(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		return
	}
	chattr, err := exec.LookPath("chattr")
	if err != nil {
		t.Skip("running as root without chattr: permission bits do not stop root's writes, so no write failure can be provoked")
	}
	if out, err := exec.Command(chattr, "+i", dir).CombinedOutput(); err != nil {
		t.Skipf("running as root and chattr +i is not supported here (%v: %s): no write failure can be provoked", err, out)
	}
	t.Cleanup(func() { exec.Command(chattr, "-i", dir).Run() })
}
