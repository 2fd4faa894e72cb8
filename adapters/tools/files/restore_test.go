package files

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/zuno-run/zuno/domain/patch"
)

// restoreFixture is a workspace with notes.txt, a directory, a link inside the root to
// notes.txt, a link to a directory outside the root, and a dangling link; outside holds a
// file with the same bytes as notes.txt.
func restoreFixture(t *testing.T) (w *Workspace, root, outside string) {
	t.Helper()
	w, root = newWS(t)
	outside = t.TempDir()
	put(t, root, "notes.txt", "hello\n")
	put(t, root, "sub/x.txt", "x\n")
	put(t, outside, "notes.txt", "hello\n")
	for link, to := range map[string]string{
		"alias.txt": "notes.txt",
		"out":       outside,
		"dangling":  filepath.Join(outside, "missing"),
	} {
		if err := os.Symlink(to, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return w, root, outside
}

func TestRestoreCredentialPaths(t *testing.T) {
	w, root, _ := restoreFixture(t)
	cred := patch.ReadCredential{Digest: patch.DigestOf([]byte("hello\n"))}
	for _, p := range []string{
		"", ".", "..", "../notes.txt", "../" + filepath.Base(root) + "/notes.txt",
		filepath.Join(root, "notes.txt"), "/notes.txt", "./notes.txt", "sub/../notes.txt",
		"notes.txt/", "sub//x.txt", "alias.txt", "out", "out/notes.txt", "dangling", "no\x00pe",
	} {
		if err := w.RestoreCredential(p, cred); err == nil {
			t.Errorf("%q: restored", p)
		}
		if w.Credentials.Held(p) != nil || w.Credentials.Held("notes.txt") != nil {
			t.Fatalf("%q: a credential is held after a refused restore", p)
		}
	}
	if err := w.RestoreCredential("notes.txt", patch.ReadCredential{}); err == nil {
		t.Error("a credential without a digest was restored")
	}
	if err := w.RestoreCredential("notes.txt", patch.ReadCredential{Digest: cred.Digest, Generation: maxRestoredGeneration + 1}); err == nil {
		t.Error("a generation beyond the bound was restored")
	}
	// Clean paths, existing or not, are restored under their own key.
	for _, p := range []string{"notes.txt", "sub/x.txt", "sub/new.txt"} {
		if err := w.RestoreCredential(p, cred); err != nil {
			t.Errorf("%q: %v", p, err)
		}
		if h := w.Credentials.Held(p); h == nil || *h != cred {
			t.Errorf("%q: held %v", p, h)
		}
	}
}

// TestRestoreGenerations checks the rule in restore.go: a restored credential raises the
// path's generation to its own, is current, and every later credential is newer; an older
// one is refused.
func TestRestoreGenerations(t *testing.T) {
	w, root, _ := restoreFixture(t)
	ctx := context.Background()
	if err := w.RestoreCredential("notes.txt", patch.ReadCredential{Digest: patch.DigestOf([]byte("hello\n")), Generation: 5}); err != nil {
		t.Fatal(err)
	}
	if g := w.Credentials.Generation("notes.txt"); g != 5 {
		t.Fatalf("generation %d after restoring 5", g)
	}
	res, err := w.Write(ctx, "notes.txt", []byte("v2\n"))
	if err != nil {
		t.Fatalf("write with a restored credential: %v", err)
	}
	if res.Credential.Generation != 6 {
		t.Errorf("the write's credential has generation %d, want 6", res.Credential.Generation)
	}
	if err := w.RestoreCredential("notes.txt", patch.ReadCredential{Digest: patch.DigestOf([]byte("hello\n")), Generation: 5}); err == nil {
		t.Error("an older credential was restored")
	}
	if h := w.Credentials.Held("notes.txt"); h == nil || *h != res.Credential {
		t.Errorf("held %v, want the write's %v", h, res.Credential)
	}
	// A read issues the current generation, as a re-read did in the issuing process.
	if r := read(t, w, "notes.txt"); r.Credential.Generation != 6 {
		t.Errorf("read after restore: generation %d", r.Credential.Generation)
	}
	w.Credentials.Invalidate("notes.txt")
	if err := w.RestoreCredential("notes.txt", res.Credential); err == nil {
		t.Error("a credential older than an invalidation was restored")
	}
	if w.Credentials.Held("notes.txt") != nil {
		t.Error("held after an invalidation and a refused restore")
	}
	if get(t, root, "notes.txt") != "v2\n" {
		t.Error("file")
	}
}

// TestRestoredCredentialIsCheckedAtWriteTime: a restored credential is only as good as the
// file on disk and the path's confinement when the write happens.
func TestRestoredCredentialIsCheckedAtWriteTime(t *testing.T) {
	ctx := context.Background()
	hello := patch.ReadCredential{Digest: patch.DigestOf([]byte("hello\n"))}
	update := "*** Begin Patch\n*** Update File: notes.txt\n@@\n-hello\n+HELLO\n*** End Patch\n"

	// Changed on disk since it was recorded: stale.
	w, root, _ := restoreFixture(t)
	if err := w.RestoreCredential("notes.txt", hello); err != nil {
		t.Fatal(err)
	}
	put(t, root, "notes.txt", "hello\nchanged\n")
	_, err := w.Write(ctx, "notes.txt", []byte("x\n"))
	wantConflict(t, err, patch.StaleRead)
	_, err = w.ApplyPatch(ctx, update)
	wantConflict(t, err, patch.StaleRead)

	// Replaced by a link to a file outside with the same bytes: the path no longer leads
	// inside the root, so without an external_directory grant nothing is written anywhere.
	w, root, outside := restoreFixture(t)
	if err := w.RestoreCredential("notes.txt", hello); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "notes.txt"), filepath.Join(root, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	_, err = w.Write(ctx, "notes.txt", []byte("x\n"))
	wantCode(t, err, ExternalDirectoryRequired)
	_, err = w.ApplyPatch(ctx, update)
	wantCode(t, err, ExternalDirectoryRequired)
	if get(t, outside, "notes.txt") != "hello\n" {
		t.Fatal("a file outside the workspace was written")
	}

	// Replaced by a link to another file inside with the same bytes: that file's key has no
	// credential.
	w, root, _ = restoreFixture(t)
	put(t, root, "other.txt", "hello\n")
	if err := w.RestoreCredential("notes.txt", hello); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("other.txt", filepath.Join(root, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	_, err = w.ApplyPatch(ctx, update)
	wantConflict(t, err, patch.ReadRequired)
	if get(t, root, "other.txt") != "hello\n" {
		t.Fatal("other.txt was written")
	}
}

func TestRestoreAttempts(t *testing.T) {
	ctx := context.Background()
	w1, root := newWS(t)
	put(t, root, "a.txt", "one\n")
	read(t, w1, "a.txt")
	// An insertion that would apply again to its own result.
	p := "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n+two\n*** End Patch\n"
	res, err := w1.ApplyPatch(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Attempts) != 1 || res.Attempts[0].Path != "a.txt" || res.Attempts[0].Content != res.Credentials["a.txt"].Digest {
		t.Fatalf("attempts %+v", res.Attempts)
	}

	w2, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := w2.RestoreCredential("a.txt", res.Credentials["a.txt"]); err != nil {
		t.Fatal(err)
	}
	// Malformed attempts are dropped; the recorded one makes the resend a replay.
	junk := patch.Attempt{Op: res.Attempts[0].Op, Content: res.Attempts[0].Content}
	w2.RestoreAttempts([]patch.PathAttempt{
		{Path: "../a.txt", Attempt: junk}, {Path: "/a.txt", Attempt: junk}, {Path: "a.txt"},
	})
	if len(w2.Credentials.Attempts("a.txt")) != 0 {
		t.Fatal("a malformed attempt was recorded")
	}
	w2.RestoreAttempts(res.Attempts)
	_, err = w2.ApplyPatch(ctx, p)
	wantConflict(t, err, patch.IdenticalReplay)
	if get(t, root, "a.txt") != "one\ntwo\n" {
		t.Fatal("the patch applied twice")
	}
}
