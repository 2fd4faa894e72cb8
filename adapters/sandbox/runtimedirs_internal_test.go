package sandbox

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestRuntimeDirs(t *testing.T) {
	base, err := realDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// A directory under /tmp is the sandbox's own tmpfs already, wherever TMPDIR points (CI
	// points it elsewhere on purpose).
	underTmp, err := os.MkdirTemp("/tmp", "zuno-xdg-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(underTmp)
	ws := filepath.Join(base, "ws")
	os.Mkdir(ws, 0o755)
	run := runtimeDirs(ws, "")
	if len(run) == 0 || run[0] != "/run" {
		t.Fatalf("runtimeDirs without XDG_RUNTIME_DIR = %q, want /run first", run)
	}
	other, err := os.MkdirTemp("/var/tmp", "zuno-xdg-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(other)
	for _, c := range []struct {
		xdg  string
		want []string
	}{
		{"", run},
		{"relative/dir", run},
		{"/", run},
		{ws, run},                       // the workspace itself
		{filepath.Join(ws, "sub"), run}, // missing (and inside the workspace)
		{underTmp, run},                 // under /tmp
		{"/run/user/0", run},            // under /run, missing or hidden
		{other, append(append([]string{}, run...), other)},
	} {
		if got := runtimeDirs(ws, c.xdg); !reflect.DeepEqual(got, c.want) {
			t.Errorf("runtimeDirs(%q) = %q, want %q", c.xdg, got, c.want)
		}
	}
}

func TestPinArgs(t *testing.T) {
	got := pinArgs([]string{"/w/a/b/c", "/w/x", "/etc/hosts", "/w/a/b/d"}, []string{"/w", "/w/a/b"})
	want := []string{"--bind", "/w/a", "/w/a", "--bind", "/w/a/b", "/w/a/b"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pinArgs = %q, want %q", got, want)
	}
}
