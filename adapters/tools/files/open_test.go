package files

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOpenBeneath: the doors glob and grep use (open.go) walk as the file tools do, with
// openat2 and with the openat fallback: no link followed on the way or at the end, nothing
// missing made up, and a walk from an opened directory stays below it.
func TestOpenBeneath(t *testing.T) {
	bothWalks(t, func(t *testing.T) {
		w, root := newWS(t)
		outside := t.TempDir()
		put(t, root, "sub/f.txt", "inside\n")
		put(t, root, "sub/deep/g.txt", "deep\n")
		put(t, outside, "f.txt", "OUTSIDE\n")
		for name, to := range map[string]string{"sub/ld": outside, "sub/lf": filepath.Join(outside, "f.txt"), "sub/in": "f.txt"} {
			if err := os.Symlink(to, filepath.Join(root, filepath.FromSlash(name))); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range []struct {
			rel     string
			content string // "" for a refusal
			errno   error  // the refusal's cause, when it is one
		}{
			{"sub/f.txt", "inside\n", nil},
			{"sub/deep/g.txt", "deep\n", nil},
			{"sub/ld/f.txt", "", nil},                           // a link on the way
			{"sub/lf", "", syscall.ELOOP},                       // a final link to outside
			{"sub/in", "", syscall.ELOOP},                       // a final link to inside: not followed either
			{"sub/missing", "", fs.ErrNotExist},                 // nothing there
			{"sub/nodir/x", "", fs.ErrNotExist},                 // nothing on the way
			{"sub/f.txt/x", "", nil},                            // a file on the way
			{"../" + filepath.Base(outside), "", fs.ErrInvalid}, // above the root
			{"sub/../sub/f.txt", "", fs.ErrInvalid},             // not a plain path
			{"sub//f.txt", "", fs.ErrInvalid},
			{"/etc/passwd", "", fs.ErrInvalid},
			{"..", "", fs.ErrInvalid},
		} {
			f, err := w.OpenBeneath(nil, c.rel)
			if c.content == "" {
				if err == nil {
					f.Close()
					t.Errorf("%s: opened, want a refusal", c.rel)
				} else if c.errno != nil && !errors.Is(err, c.errno) {
					t.Errorf("%s: %v, want %v", c.rel, err, c.errno)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", c.rel, err)
				continue
			}
			b, err := io.ReadAll(f)
			f.Close()
			if err != nil || string(b) != c.content {
				t.Errorf("%s: read %q, %v", c.rel, b, err)
			}
		}

		sub, err := w.OpenBeneath(nil, "sub")
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		if fi, err := sub.Stat(); err != nil || !fi.IsDir() {
			t.Fatalf("sub: %v %v", fi, err)
		}
		// Below an opened directory: it, not its name, is the base.
		if err := os.Rename(filepath.Join(root, "sub"), filepath.Join(root, "moved")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(root, "sub")); err != nil {
			t.Fatal(err)
		}
		f, err := w.OpenBeneath(sub, "f.txt")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(f)
		f.Close()
		if string(b) != "inside\n" {
			t.Fatalf("below the opened directory read %q", b)
		}
		for rel, want := range map[string]fs.FileMode{"f.txt": 0, "deep": fs.ModeDir, "ld": fs.ModeSymlink, "lf": fs.ModeSymlink, ".": fs.ModeDir} {
			m, err := w.LstatBeneath(sub, rel)
			if err != nil || m.Type() != want {
				t.Errorf("lstat %s: %v %v, want type %v", rel, m, err, want)
			}
		}
		if _, err := w.LstatBeneath(sub, "ld/f.txt"); err == nil {
			t.Error("lstat through a link succeeded")
		}
		if _, err := w.LstatBeneath(nil, "sub/f.txt"); err == nil {
			t.Error("lstat from the root through the link now named sub succeeded")
		}
		if _, err := w.LstatBeneath(sub, "missing"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("lstat missing: %v", err)
		}
	})
}
