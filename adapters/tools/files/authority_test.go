package files

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bothWalks runs f once with openat2 (when the kernel has it) and once with the openat
// fallback forced through the useOpenat2 seam.
func bothWalks(t *testing.T, f func(t *testing.T)) {
	t.Run("openat2", func(t *testing.T) {
		if !kernelHasOpenat2() {
			t.Skip("the kernel refuses openat2")
		}
		f(t)
	})
	t.Run("openat", func(t *testing.T) {
		saved := useOpenat2
		useOpenat2 = func() bool { return false }
		t.Cleanup(func() { useOpenat2 = saved })
		f(t)
	})
}

func TestWalkSeam(t *testing.T) {
	bothWalks(t, func(t *testing.T) {
		w, _ := newWS(t)
		if w.openat2 != useOpenat2() {
			t.Errorf("Workspace.openat2 = %v, the probe said %v", w.openat2, useOpenat2())
		}
	})
}

// attackFixture: root holds real.txt, dir/f.txt, links of every kind; outside holds
// secret.txt; root is also reachable through a link "alias" to it (an absolute spelling of
// the root that is not the resolved one).
func attackFixture(t *testing.T) (w *Workspace, root, outside string) {
	t.Helper()
	parent := t.TempDir()
	root = filepath.Join(parent, "root")
	outside = filepath.Join(parent, "outside")
	put(t, root, "real.txt", "real\n")
	put(t, root, "dir/f.txt", "f\n")
	put(t, outside, "secret.txt", "secret\n")
	for link, to := range map[string]string{
		"in-link":       "real.txt",
		"in-abs-link":   filepath.Join(root, "real.txt"),
		"dir-link":      "dir",
		"out-link":      filepath.Join(outside, "secret.txt"),
		"out-dir-link":  outside,
		"chain":         "in-link",
		"dangling-in":   "missing.txt",
		"dangling-out":  filepath.Join(outside, "missing.txt"),
		"dotdot-link":   "../outside/secret.txt",
		"dir/up-link":   "../real.txt",
		"dir/root-link": "..",
	} {
		if err := os.Symlink(to, filepath.Join(root, filepath.FromSlash(link))); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(root, filepath.Join(parent, "alias")); err != nil {
		t.Fatal(err)
	}
	w, err := New(filepath.Join(parent, "alias"))
	if err != nil {
		t.Fatal(err)
	}
	return w, root, outside
}

// TestPathAttacks is the table of routes around the boundary ("Path authority" in
// docs/tools.md): each row is a spelling, what Authorize reports, and what read and write do.
func TestPathAttacks(t *testing.T) {
	bothWalks(t, func(t *testing.T) {
		w, root, outside := attackFixture(t)
		parent := filepath.Dir(root)
		outDir := ExternalResource(outside)
		type row struct {
			name, path string
			// Authorize: the target (relative to parent), inside, link; or an error code.
			target      string
			inside      bool
			link        bool
			authErr     Code
			readKey     string // key read reports ("" when read fails)
			readErr     Code
			writeErr    Code   // "" when write succeeds
			writeTarget string // where the bytes land, relative to parent
		}
		rows := []row{
			{name: "plain relative path", path: "real.txt", target: "root/real.txt", inside: true, readKey: "real.txt", writeTarget: "root/real.txt"},
			{name: "./ and // are cleaned", path: ".//dir//f.txt", target: "root/dir/f.txt", inside: true, readKey: "dir/f.txt", writeTarget: "root/dir/f.txt"},
			{name: ".. that stays inside", path: "dir/../real.txt", target: "root/real.txt", inside: true, readKey: "real.txt", writeTarget: "root/real.txt"},
			{name: ".. escape", path: "../outside/secret.txt", target: "outside/secret.txt", readErr: ExternalDirectoryRequired, writeErr: ExternalDirectoryRequired},
			{name: "deep .. escape", path: "dir/../../outside/secret.txt", target: "outside/secret.txt", readErr: ExternalDirectoryRequired, writeErr: ExternalDirectoryRequired},
			{name: "absolute inside, resolved spelling", path: filepath.Join(root, "real.txt"), target: "root/real.txt", inside: true, readKey: "real.txt", writeTarget: "root/real.txt"},
			{name: "absolute inside, configured spelling", path: filepath.Join(parent, "alias", "real.txt"), target: "root/real.txt", inside: true, readKey: "real.txt", writeTarget: "root/real.txt"},
			{name: "absolute outside", path: filepath.Join(outside, "secret.txt"), target: "outside/secret.txt", readErr: ExternalDirectoryRequired, writeErr: ExternalDirectoryRequired},
			{name: "final link inside to inside", path: "in-link", target: "root/real.txt", inside: true, link: true, readKey: "real.txt", writeTarget: "root/real.txt"},
			{name: "final absolute link to inside", path: "in-abs-link", target: "root/real.txt", inside: true, link: true, readKey: "real.txt", writeTarget: "root/real.txt"},
			{name: "final link up and back in", path: "dir/up-link", target: "root/real.txt", inside: true, link: true, readKey: "real.txt", writeTarget: "root/real.txt"},
			{name: "final link to outside file", path: "out-link", target: "outside/secret.txt", link: true, readErr: ExternalDirectoryRequired, writeErr: ExternalDirectoryRequired},
			{name: "final relative link escaping with ..", path: "dotdot-link", target: "outside/secret.txt", link: true, readErr: ExternalDirectoryRequired, writeErr: ExternalDirectoryRequired},
			{name: "link to a link is followed once only", path: "chain", target: "root/in-link", inside: true, link: true, readErr: SymlinkRefused, writeErr: "not_a_file"},
			{name: "intermediate link inside", path: "dir-link/f.txt", authErr: SymlinkRefused, readErr: SymlinkRefused, writeErr: SymlinkRefused},
			{name: "intermediate link outside", path: "out-dir-link/secret.txt", authErr: SymlinkRefused, readErr: SymlinkRefused, writeErr: SymlinkRefused},
			{name: "intermediate link to new file", path: "out-dir-link/new.txt", authErr: SymlinkRefused, readErr: SymlinkRefused, writeErr: SymlinkRefused},
			{name: "intermediate .. link", path: "dir/root-link/real.txt", authErr: SymlinkRefused, readErr: SymlinkRefused, writeErr: SymlinkRefused},
			{name: "dangling link inside: the target is created", path: "dangling-in", target: "root/missing.txt", inside: true, link: true, readErr: NotFound, writeTarget: "root/missing.txt"},
			{name: "dangling link outside", path: "dangling-out", target: "outside/missing.txt", link: true, readErr: ExternalDirectoryRequired, writeErr: ExternalDirectoryRequired},
			{name: "NUL byte", path: "real.txt\x00x", authErr: InvalidArguments, readErr: InvalidArguments, writeErr: InvalidArguments},
		}
		ctx := context.Background()
		for _, r := range rows {
			t.Run(r.name, func(t *testing.T) {
				a, err := w.Authorize(r.path)
				if r.authErr != "" {
					wantCode(t, err, r.authErr)
				} else {
					if err != nil {
						t.Fatalf("Authorize: %v", err)
					}
					want := Authority{Target: filepath.Join(parent, filepath.FromSlash(r.target)), Inside: r.inside, Symlink: r.link}
					if !r.inside {
						want.ExternalDir = ExternalResource(filepath.Dir(want.Target))
					}
					if a != want {
						t.Errorf("Authorize = %+v, want %+v", a, want)
					}
				}
				res, err := w.Read(ctx, ReadRequest{Path: r.path})
				if r.readErr != "" {
					e := wantCode(t, err, r.readErr)
					if r.readErr == ExternalDirectoryRequired && !strings.Contains(e.Message, outDir) {
						t.Errorf("the refusal does not name %s: %v", outDir, e)
					}
				} else if err != nil || res.Path != r.readKey {
					t.Fatalf("read: %+v, %v", res, err)
				}
				_, err = w.Write(ctx, r.path, []byte("new\n"))
				switch {
				case r.writeErr == "not_a_file":
					wantConflict(t, err, "not_a_file")
				case r.writeErr != "":
					wantCode(t, err, r.writeErr)
				case err != nil:
					t.Fatalf("write: %v", err)
				default:
					if got := get(t, parent, r.writeTarget); got != "new\n" {
						t.Errorf("%s holds %q", r.writeTarget, got)
					}
					// Put the fixture back (and forget the credential) for the next row.
					if orig, ok := map[string]string{"root/real.txt": "real\n", "root/dir/f.txt": "f\n"}[r.writeTarget]; ok {
						put(t, parent, r.writeTarget, orig)
					} else {
						os.Remove(filepath.Join(parent, filepath.FromSlash(r.writeTarget)))
					}
				}
				if get(t, outside, "secret.txt") != "secret\n" {
					t.Fatal("a file outside was changed")
				}
				for _, l := range []string{"in-link", "in-abs-link", "out-link", "chain", "dangling-in", "dangling-out", "dir-link", "out-dir-link"} {
					if fi, err := os.Lstat(filepath.Join(root, l)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
						t.Fatalf("link %s is no longer a link", l)
					}
				}
				if _, err := os.Stat(filepath.Join(outside, "new.txt")); !errors.Is(err, os.ErrNotExist) {
					t.Fatal("a file was created outside")
				}
			})
		}
		assertNoTemp(t, parent)
	})
}

// TestExternalDirectory: a final link to a file outside needs the external_directory grant
// naming the target's directory; with it the write lands in the target and the link stays.
func TestExternalDirectory(t *testing.T) {
	bothWalks(t, func(t *testing.T) {
		w, root, outside := attackFixture(t)
		ctx := context.Background()
		a, err := w.Authorize("out-link")
		if err != nil || a.Inside || !a.Symlink || a.ExternalDir != filepath.ToSlash(outside)+"/*" {
			t.Fatalf("Authorize(out-link) = %+v, %v", a, err)
		}
		_, err = w.Write(ctx, "out-link", []byte("x\n"))
		e := wantCode(t, err, ExternalDirectoryRequired)
		if !strings.Contains(e.Message, a.ExternalDir) {
			t.Errorf("refusal does not name %s: %v", a.ExternalDir, e)
		}
		// A grant for another directory does not help.
		_, err = w.WriteIn(ctx, filepath.Join(root, "dir"), "out-link", []byte("x\n"))
		wantCode(t, err, ExternalDirectoryRequired)

		for _, grant := range []string{outside, a.ExternalDir} {
			r, err := w.Read(ctx, ReadRequest{Path: "out-link", ExternalRoot: grant})
			key := filepath.ToSlash(filepath.Join(outside, "secret.txt"))
			if err != nil || r.Content != "secret\n" || r.Path != key {
				t.Fatalf("read under %s: %+v, %v", grant, r, err)
			}
			// Replacing it needs the read credential, like any file.
			if _, err := w.WriteIn(ctx, grant, "out-link", []byte("changed\n")); err != nil {
				t.Fatalf("write under %s: %v", grant, err)
			}
			if get(t, outside, "secret.txt") != "changed\n" {
				t.Error("the target was not written")
			}
			if fi, err := os.Lstat(filepath.Join(root, "out-link")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Fatal("the link did not survive the write")
			}
			put(t, outside, "secret.txt", "secret\n")
		}
		// Absolute paths under the grant, new files and new directories.
		if _, err := w.WriteIn(ctx, outside, filepath.Join(outside, "d", "new.txt"), []byte("n\n")); err != nil || get(t, outside, "d/new.txt") != "n\n" {
			t.Fatalf("new file under the grant: %v", err)
		}
		// apply_patch's paths are relative (the parser refuses absolute and .. paths), so it
		// reaches outside only through a final link: the grant admits it too.
		if _, err := w.Read(ctx, ReadRequest{Path: "out-link", ExternalRoot: outside}); err != nil {
			t.Fatal(err)
		}
		upd := "*** Begin Patch\n*** Update File: out-link\n@@\n-secret\n+patched\n*** End Patch\n"
		_, err = w.ApplyPatch(ctx, upd)
		wantCode(t, err, ExternalDirectoryRequired)
		res, err := w.ApplyPatchIn(ctx, outside, upd)
		if err != nil || get(t, outside, "secret.txt") != "patched\n" || res.WrittenPaths[0] != filepath.ToSlash(filepath.Join(outside, "secret.txt")) {
			t.Fatalf("apply_patch under the grant: %+v, %v", res, err)
		}
		// Links under the grant are refused like links in the workspace.
		if err := os.Symlink(filepath.Join(root, "dir"), filepath.Join(outside, "back")); err != nil {
			t.Fatal(err)
		}
		_, err = w.WriteIn(ctx, outside, filepath.Join(outside, "back", "x.txt"), []byte("x"))
		wantCode(t, err, SymlinkRefused)
		// A grant spelled through a link is refused: grant the resolved directory.
		_, err = w.WriteIn(ctx, filepath.Join(root, "out-dir-link"), filepath.Join(root, "out-dir-link", "y.txt"), []byte("y"))
		if err == nil {
			t.Error("a write through a linked grant succeeded")
		}
		assertNoTemp(t, filepath.Dir(root))
	})
}

// TestFileAmongParents: a file where a directory is needed is still a not_a_directory
// conflict (the walk tells it apart from a link).
func TestFileAmongParents(t *testing.T) {
	bothWalks(t, func(t *testing.T) {
		w, root := newWS(t)
		put(t, root, "a.txt", "a\n")
		_, err := w.Write(context.Background(), "a.txt/b/c", []byte("x"))
		c := wantConflict(t, err, "not_a_directory")
		if c.Path != "a.txt" {
			t.Errorf("conflict names %s", c.Path)
		}
		_, err = w.Read(context.Background(), ReadRequest{Path: "a.txt/b"})
		wantCode(t, err, InvalidArguments)
	})
}
