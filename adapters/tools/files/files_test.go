package files

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/tools/internal/patchconformance"
	"github.com/zuno-run/zuno/domain/patch"
)

func newWS(t *testing.T) (*Workspace, string) {
	t.Helper()
	root := t.TempDir()
	w, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	return w, root
}

func put(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func read(t *testing.T, w *Workspace, rel string) ReadResult {
	t.Helper()
	r, err := w.Read(context.Background(), ReadRequest{Path: rel})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func wantConflict(t *testing.T, err error, kind patch.ConflictKind) *patch.Conflict {
	t.Helper()
	var c *patch.Conflict
	if !errors.As(err, &c) || c.Kind != kind {
		t.Fatalf("want %s conflict, got %T: %v", kind, err, err)
	}
	if c.RequiredAction == "" {
		t.Errorf("conflict without a required action: %v", c)
	}
	return c
}

func wantInvalid(t *testing.T, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Kind != InvalidArguments || e.Code() != "invalid_arguments" {
		t.Fatalf("want invalid_arguments, got %T: %v", err, err)
	}
}

func wantCode(t *testing.T, err error, code Code) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Kind != code || e.Code() != string(code) {
		t.Fatalf("want %s, got %T: %v", code, err, err)
	}
	return e
}

func TestReadWindowAndCredential(t *testing.T) {
	w, root := newWS(t)
	put(t, root, "a.txt", "one\ntwo\r\nthree")
	r := read(t, w, "a.txt")
	if r.Content != "one\ntwo\r\nthree" || r.TotalLines != 3 || r.HasMore || r.StartLine != 1 || r.EndLine != 3 {
		t.Fatalf("full read: %+v", r)
	}
	if r.Credential.Digest != patch.DigestOf([]byte("one\ntwo\r\nthree")) {
		t.Errorf("credential digest is not the file's SHA-256")
	}
	r, err := w.Read(context.Background(), ReadRequest{Path: "a.txt", Offset: 2, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Content != "two\r\n" || !r.HasMore || r.NextOffset != 3 || r.StartLine != 2 || r.EndLine != 2 {
		t.Fatalf("window: %+v", r)
	}
	if r.Credential.Digest != patch.DigestOf([]byte("one\ntwo\r\nthree")) {
		t.Errorf("a window's credential must cover the full file")
	}
	r, _ = w.Read(context.Background(), ReadRequest{Path: "a.txt", Offset: 9})
	if r.Content != "" || r.HasMore {
		t.Errorf("past the end: %+v", r)
	}
	// The byte bound cuts a window short.
	big := strings.Repeat(strings.Repeat("x", 99)+"\n", 1000)
	put(t, root, "big.txt", big)
	r = read(t, w, "big.txt")
	if len(r.Content) > MaxReadBytes || !r.HasMore || r.EndLine != MaxReadBytes/100 {
		t.Errorf("byte bound: %d bytes, end %d, more %v", len(r.Content), r.EndLine, r.HasMore)
	}
	put(t, root, "long.txt", strings.Repeat("y", MaxReadBytes*2))
	r = read(t, w, "long.txt")
	if len(r.Content) != MaxReadBytes || !r.Truncated {
		t.Errorf("long line: %d bytes, truncated %v", len(r.Content), r.Truncated)
	}
	// Directories list their entries.
	put(t, root, "d/x.txt", "")
	if err := os.Mkdir(filepath.Join(root, "d", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	r = read(t, w, "d")
	if !r.Dir || len(r.Entries) != 2 || r.Entries[0] != (Entry{Name: "sub", Dir: true}) || r.Entries[1] != (Entry{Name: "x.txt"}) {
		t.Errorf("directory: %+v", r)
	}
	_, err = w.Read(context.Background(), ReadRequest{Path: "missing.txt"})
	var e *Error
	if !errors.As(err, &e) || e.Kind != NotFound {
		t.Errorf("missing file: %v", err)
	}
}

func TestReadThenWrite(t *testing.T) {
	w, root := newWS(t)
	ctx := context.Background()
	res, err := w.Write(ctx, "new/dir/f.txt", []byte("hello\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Created || len(res.WrittenPaths) != 1 || res.WrittenPaths[0] != "new/dir/f.txt" {
		t.Fatalf("create: %+v", res)
	}
	// The writer's content counts as read: it may replace the file again right away.
	if _, err := w.Write(ctx, "new/dir/f.txt", []byte("again\n")); err != nil {
		t.Fatal(err)
	}
	put(t, root, "a.txt", "old\n")
	if err := os.Chmod(filepath.Join(root, "a.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	read(t, w, "a.txt")
	res, err = w.Write(ctx, "a.txt", []byte("new\n"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Created || get(t, root, "a.txt") != "new\n" {
		t.Fatalf("replace: %+v", res)
	}
	if fi, _ := os.Stat(filepath.Join(root, "a.txt")); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode not preserved: %v", fi.Mode())
	}
	assertNoTemp(t, root)
}

func TestWriteWithoutRead(t *testing.T) {
	w, root := newWS(t)
	put(t, root, "a.txt", "old\n")
	_, err := w.Write(context.Background(), "a.txt", []byte("new\n"))
	wantConflict(t, err, patch.ReadRequired)
	if get(t, root, "a.txt") != "old\n" {
		t.Error("file changed")
	}
	// A directory is not a file; a file is not a directory.
	put(t, root, "d/x", "")
	_, err = w.Write(context.Background(), "d", []byte("x"))
	wantConflict(t, err, patch.NotAFile)
	_, err = w.Write(context.Background(), "a.txt/b", []byte("x"))
	wantConflict(t, err, patch.NotADirectory)
}

func TestStaleRead(t *testing.T) {
	w, root := newWS(t)
	ctx := context.Background()
	put(t, root, "a.txt", "old\n")
	read(t, w, "a.txt")
	put(t, root, "a.txt", "changed outside\n")
	_, err := w.Write(ctx, "a.txt", []byte("new\n"))
	c := wantConflict(t, err, patch.StaleRead)
	if c.Read == nil || c.ContentDigest != patch.DigestOf([]byte("changed outside\n")) {
		t.Errorf("stale conflict lacks digests: %+v", c)
	}
	// apply_patch sees the same.
	_, err = w.ApplyPatch(ctx, "*** Begin Patch\n*** Update File: a.txt\n@@\n-changed outside\n+x\n*** End Patch\n")
	wantConflict(t, err, patch.StaleRead)
	// A runtime write moves the generation on: a credential from before it is stale even
	// if the bytes come back to what was read.
	read(t, w, "a.txt")
	cred := w.Credentials.Held("a.txt")
	if _, err := w.Write(ctx, "a.txt", []byte("v2\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(ctx, "a.txt", []byte("changed outside\n")); err != nil {
		t.Fatal(err)
	}
	w.Credentials.mu.Lock()
	w.Credentials.held["a.txt"] = *cred
	w.Credentials.mu.Unlock()
	_, err = w.Write(ctx, "a.txt", []byte("v3\n"))
	wantConflict(t, err, patch.StaleRead)
	if get(t, root, "a.txt") != "changed outside\n" {
		t.Error("file changed")
	}
}

const happyPatch = `*** Begin Patch
*** Add File: src/new.go
+package src
*** Update File: src/a.txt
@@
 keep
-old
+new
*** Delete File: gone.txt
*** Update File: mv.txt
*** Move to: moved/mv.txt
@@
-m
+M
*** End Patch
`

func TestApplyPatchHappyPath(t *testing.T) {
	w, root := newWS(t)
	put(t, root, "src/a.txt", "keep\nold\ntail\n")
	put(t, root, "gone.txt", "bye\n")
	put(t, root, "mv.txt", "m\n")
	if err := os.Chmod(filepath.Join(root, "mv.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"src/a.txt", "gone.txt", "mv.txt"} {
		read(t, w, f)
	}
	res, err := w.ApplyPatch(context.Background(), happyPatch)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res.WrittenPaths) != "[src/new.go src/a.txt moved/mv.txt]" || fmt.Sprint(res.DeletedPaths) != "[gone.txt mv.txt]" {
		t.Errorf("result: %+v", res)
	}
	if get(t, root, "src/new.go") != "package src\n" || get(t, root, "src/a.txt") != "keep\nnew\ntail\n" || get(t, root, "moved/mv.txt") != "M\n" {
		t.Error("wrong contents")
	}
	for _, f := range []string{"gone.txt", "mv.txt"} {
		if _, err := os.Stat(filepath.Join(root, f)); !os.IsNotExist(err) {
			t.Errorf("%s still exists", f)
		}
	}
	if fi, _ := os.Stat(filepath.Join(root, "moved/mv.txt")); fi.Mode().Perm() != 0o755 {
		t.Errorf("move lost the mode: %v", fi.Mode())
	}
	assertNoTemp(t, root)
	// The writer's content counts as read: a follow-up edit needs no new read.
	_, err = w.ApplyPatch(context.Background(), "*** Begin Patch\n*** Update File: src/a.txt\n@@\n-new\n+newer\n*** End Patch\n")
	if err != nil {
		t.Fatal(err)
	}
	// Deleted paths hold no credential: re-adding one over a file that appears needs a read.
	put(t, root, "gone.txt", "back\n")
	_, err = w.ApplyPatch(context.Background(), "*** Begin Patch\n*** Add File: gone.txt\n+x\n*** End Patch\n")
	wantConflict(t, err, patch.ReadRequired)
}

func TestIdenticalReplayAfterMismatch(t *testing.T) {
	w, root := newWS(t)
	put(t, root, "a.txt", "a\n")
	read(t, w, "a.txt")
	p := "*** Begin Patch\n*** Update File: a.txt\n@@\n-zzz\n+y\n*** End Patch\n"
	_, err := w.ApplyPatch(context.Background(), p)
	wantConflict(t, err, patch.ContextMismatch)
	_, err = w.ApplyPatch(context.Background(), p)
	wantConflict(t, err, patch.IdenticalReplay)
}

func TestConflictLeavesTreeUntouched(t *testing.T) {
	w, root := newWS(t)
	put(t, root, "src/a.txt", "keep\nold\ntail\n")
	put(t, root, "gone.txt", "bye\n")
	put(t, root, "mv.txt", "m\n")
	read(t, w, "src/a.txt")
	read(t, w, "gone.txt")
	// mv.txt was not read: one conflict, zero writes.
	before := patchconformance.Snapshot(t, root)
	_, err := w.ApplyPatch(context.Background(), happyPatch)
	var ce *patch.ConflictError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].Kind != patch.ReadRequired || ce.Conflicts[0].Path != "mv.txt" {
		t.Fatalf("want one read_required conflict on mv.txt, got %v", err)
	}
	if after := patchconformance.Snapshot(t, root); after != before {
		t.Errorf("tree changed:\n%s\n---\n%s", before, after)
	}
	// A malformed patch is invalid_argument, also with nothing written.
	_, err = w.ApplyPatch(context.Background(), "*** Begin Patch\n*** End Patch\n")
	var pe *patch.Error
	if !errors.As(err, &pe) || pe.Code() != "invalid_argument" {
		t.Errorf("empty patch: %v", err)
	}
}

func TestBOMAndCRLFPreserved(t *testing.T) {
	w, root := newWS(t)
	content := "\xEF\xBB\xBFfirst\r\nsecond\r\nthird"
	put(t, root, "win.txt", content)
	r := read(t, w, "win.txt")
	if r.Content != content {
		t.Fatalf("read changed the bytes: %q", r.Content)
	}
	_, err := w.ApplyPatch(context.Background(), "*** Begin Patch\n*** Update File: win.txt\n@@\n first\n-second\n+2nd\n+added\n*** End Patch\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := get(t, root, "win.txt"); got != "\xEF\xBB\xBFfirst\r\n2nd\r\nadded\r\nthird" {
		t.Errorf("got %q", got)
	}
	// write stores exactly what it is given.
	if _, err := w.Write(context.Background(), "win.txt", []byte("\xEF\xBB\xBFa\r\n")); err != nil {
		t.Fatal(err)
	}
	if got := get(t, root, "win.txt"); got != "\xEF\xBB\xBFa\r\n" {
		t.Errorf("write: %q", got)
	}
}

func TestPathEscapeRefused(t *testing.T) {
	w, root := newWS(t)
	outside := t.TempDir()
	put(t, outside, "secret.txt", "secret\n")
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "file-link")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Outside the root: the path says where it leads, and the error names the grant it needs.
	// A link in the middle of a path is refused whatever it points at.
	codes := map[string]Code{"../x": ExternalDirectoryRequired, "a/../../x": ExternalDirectoryRequired,
		outside + "/secret.txt": ExternalDirectoryRequired, "file-link": ExternalDirectoryRequired,
		"link/secret.txt": SymlinkRefused, "link/new.txt": SymlinkRefused}
	for p, code := range codes {
		_, err := w.Read(ctx, ReadRequest{Path: p})
		wantCode(t, err, code)
		_, err = w.Write(ctx, p, []byte("x"))
		wantCode(t, err, code)
	}
	for _, p := range []string{"link/secret.txt", "link/new.txt", "file-link"} {
		_, err := w.ApplyPatch(ctx, "*** Begin Patch\n*** Add File: "+p+"\n+x\n*** End Patch\n")
		wantCode(t, err, codes[p])
	}
	// "../x" is already refused by the parser, with its own invalid_argument code.
	_, err := w.ApplyPatch(ctx, "*** Begin Patch\n*** Add File: ../x\n+x\n*** End Patch\n")
	var pe *patch.Error
	if !errors.As(err, &pe) {
		t.Errorf("../ in a patch: %v", err)
	}
	if get(t, outside, "secret.txt") != "secret\n" {
		t.Error("outside file changed")
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); !os.IsNotExist(err) {
		t.Error("file created outside the root")
	}
	// A link that stays inside the root is followed, and keyed by its target.
	put(t, root, "real.txt", "r\n")
	if err := os.Symlink("real.txt", filepath.Join(root, "in-link")); err != nil {
		t.Fatal(err)
	}
	r := read(t, w, "in-link")
	if r.Path != "real.txt" || r.Content != "r\n" {
		t.Errorf("inner link: %+v", r)
	}
	// The root itself, spelled absolutely, is fine.
	if _, err := w.Read(ctx, ReadRequest{Path: root}); err != nil {
		t.Errorf("absolute root: %v", err)
	}
}

func TestConcurrentApplyPatchSerialized(t *testing.T) {
	w, root := newWS(t)
	put(t, root, "shared.txt", "v0\n")
	read(t, w, "shared.txt")
	var inside, overlap atomic.Int32
	w.beforeWrite = func(int, string) error {
		if inside.Add(1) > 1 {
			overlap.Store(1)
		}
		time.Sleep(time.Millisecond)
		inside.Add(-1)
		return nil
	}
	const n = 12
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Every call adds its own file and edits the shared one from v0: only the first
			// to take the lock may succeed; the rest find v1.. (the winner's write counts as
			// read for this one model, so the conflict is a context mismatch).
			p := fmt.Sprintf("*** Begin Patch\n*** Add File: own/%d.txt\n+%d\n*** Update File: shared.txt\n@@\n-v0\n+v%d\n*** End Patch\n", i, i, i+1)
			_, errs[i] = w.ApplyPatch(context.Background(), p)
		}()
	}
	wg.Wait()
	if overlap.Load() != 0 {
		t.Error("two apply_patch calls wrote at the same time")
	}
	ok := 0
	for i, err := range errs {
		if err == nil {
			ok++
			if get(t, root, fmt.Sprintf("own/%d.txt", i)) != fmt.Sprintf("%d\n", i) || get(t, root, "shared.txt") != fmt.Sprintf("v%d\n", i+1) {
				t.Error("winner's writes are not on disk")
			}
			continue
		}
		wantConflict(t, err, patch.ContextMismatch)
		if _, err := os.Stat(filepath.Join(root, fmt.Sprintf("own/%d.txt", i))); !os.IsNotExist(err) {
			t.Errorf("loser %d wrote its own file", i)
		}
	}
	if ok != 1 {
		t.Errorf("%d calls succeeded, want 1", ok)
	}
	assertNoTemp(t, root)
}

func TestUncertainAfterMidWriteFailure(t *testing.T) {
	w, root := newWS(t)
	put(t, root, "a.txt", "a\n")
	read(t, w, "a.txt")
	// After the first write, a file appears where the second write needs a directory: a
	// real I/O failure the pre-flight could not see (works as root, unlike a read-only dir).
	w.beforeWrite = func(i int, _ string) error {
		if i == 1 {
			put(t, root, "sub", "in the way\n")
		}
		return nil
	}
	_, err := w.ApplyPatch(context.Background(), "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Add File: sub/new.txt\n+n\n*** Add File: z.txt\n+z\n*** End Patch\n")
	var u *UncertainError
	if !errors.As(err, &u) || u.Code() != "uncertain" {
		t.Fatalf("want uncertain, got %T: %v", err, err)
	}
	if fmt.Sprint(u.Written) != "[a.txt]" || u.Failed != "sub/new.txt" || fmt.Sprint(u.NotWritten) != "[z.txt]" || u.Err == nil {
		t.Errorf("uncertain: %+v", u)
	}
	if !strings.Contains(u.Error(), "do not resend") {
		t.Errorf("message lacks the required action: %v", u)
	}
	if get(t, root, "a.txt") != "A\n" {
		t.Error("first write missing")
	}
	if _, err := os.Stat(filepath.Join(root, "z.txt")); !os.IsNotExist(err) {
		t.Error("write after the failure happened")
	}
	// The model must look again before the next change.
	if w.Credentials.Held("a.txt") != nil {
		t.Error("a credential survived an uncertain result")
	}
	assertNoTemp(t, root)
}

func TestUncertainReadOnlyDir(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: permissions do not stop writes (TestUncertainAfterMidWriteFailure covers the real failure)")
	}
	w, root := newWS(t)
	put(t, root, "a.txt", "a\n")
	put(t, root, "ro/b.txt", "b\n")
	read(t, w, "a.txt")
	read(t, w, "ro/b.txt")
	if err := os.Chmod(filepath.Join(root, "ro"), 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(root, "ro"), 0o755) })
	_, err := w.ApplyPatch(context.Background(), "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: ro/b.txt\n@@\n-b\n+B\n*** End Patch\n")
	var u *UncertainError
	if !errors.As(err, &u) || fmt.Sprint(u.Written) != "[a.txt]" || u.Failed != "ro/b.txt" {
		t.Fatalf("want uncertain, got %v", err)
	}
}

func assertNoTemp(t *testing.T, root string) {
	t.Helper()
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".zuno-write-") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}
