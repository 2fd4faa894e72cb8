package guard

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Program takes the dedicated guard only when a regular, executable zuno-guard stands beside
// the running binary; anything else falls back to this binary through /proc/self/exe.
func TestProgram(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/false\n"), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	self := write("zuno", 0o755)
	for _, tc := range []struct {
		name  string
		setup func()
		exe   func() (string, error)
		want  string
	}{
		{"nothing beside", func() {}, func() (string, error) { return self, nil }, "/proc/self/exe"},
		{"not executable", func() { write(ProgramName, 0o644) }, func() (string, error) { return self, nil }, "/proc/self/exe"},
		{"executable", func() { os.Chmod(filepath.Join(dir, ProgramName), 0o755) }, func() (string, error) { return self, nil }, filepath.Join(dir, ProgramName)},
		{"a directory by that name", func() {
			os.Remove(filepath.Join(dir, ProgramName))
			os.Mkdir(filepath.Join(dir, ProgramName), 0o755)
		}, func() (string, error) { return self, nil }, "/proc/self/exe"},
		{"no executable path", func() {}, func() (string, error) { return "", errors.New("unknown") }, "/proc/self/exe"},
		{"a bare name", func() {}, func() (string, error) { return "zuno", nil }, "/proc/self/exe"},
	} {
		tc.setup()
		executable = tc.exe
		got := Program()
		executable = os.Executable
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
