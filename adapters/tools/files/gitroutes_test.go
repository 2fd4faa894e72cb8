package files_test

// The file tools' door on the routes of REVIEW25b's GIT and C1 findings: the one list the
// sandbox assembles (adapters/sandbox.ScanGit, with the real git) refuses, through write,
// each file git would run or read that the shell's sandbox protects: a script a command of
// the configuration names, a hook manager's configuration, where .git links to, a link
// among git's places and what it leads to, and a trusted configuration file not made yet.
// Each row is first written unprotected (the control).

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	adsandbox "github.com/zuno-run/zuno/adapters/sandbox"
	"github.com/zuno-run/zuno/adapters/tools/files"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/sandbox"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v %s", args, err, out)
	}
}

func put(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestWriteRefusesGitRoutes(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	rows := []struct {
		name  string
		setup func(t *testing.T, ws string) sandbox.Locations
		path  string
	}{
		{"a script core.fsmonitor runs", func(t *testing.T, ws string) sandbox.Locations {
			put(t, filepath.Join(ws, "scripts", "fsmon.sh"), "exit 1\n")
			git(t, ws, "config", "core.fsmonitor", "sh scripts/fsmon.sh")
			return sandbox.Locations{}
		}, "scripts/fsmon.sh"},
		{"a script not made yet that an alias runs", func(t *testing.T, ws string) sandbox.Locations {
			git(t, ws, "config", "alias.x", "!bash tools/x.sh")
			return sandbox.Locations{}
		}, "tools/x.sh"},
		{"husky's hook", func(t *testing.T, ws string) sandbox.Locations {
			put(t, filepath.Join(ws, ".husky", "_", "pre-commit"), ". \"$(dirname \"$0\")/h\"\n")
			git(t, ws, "config", "core.hooksPath", ".husky/_")
			return sandbox.Locations{}
		}, ".husky/pre-commit"},
		{"lefthook-local.yml", func(t *testing.T, ws string) sandbox.Locations {
			put(t, filepath.Join(ws, ".git", "hooks", "pre-commit"), "#!/bin/sh\nlefthook run pre-commit\n")
			return sandbox.Locations{}
		}, "lefthook-local.yml"},
		{"where .git links to", func(t *testing.T, ws string) sandbox.Locations {
			if err := os.Rename(filepath.Join(ws, ".git"), filepath.Join(ws, "meta")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("meta", filepath.Join(ws, ".git")); err != nil {
				t.Fatal(err)
			}
			return sandbox.Locations{}
		}, "meta/hooks/pre-commit"},
		{"an include.path link", func(t *testing.T, ws string) sandbox.Locations {
			put(t, filepath.Join(ws, "conf", "real.cfg"), "[user]\n\tname = u\n")
			if err := os.Symlink("conf/real.cfg", filepath.Join(ws, "shared.cfg")); err != nil {
				t.Fatal(err)
			}
			git(t, ws, "config", "include.path", "../shared.cfg")
			return sandbox.Locations{}
		}, "shared.cfg"},
		{"where an include.path link leads", func(t *testing.T, ws string) sandbox.Locations {
			put(t, filepath.Join(ws, "conf", "real.cfg"), "[user]\n\tname = u\n")
			if err := os.Symlink("conf/real.cfg", filepath.Join(ws, "shared.cfg")); err != nil {
				t.Fatal(err)
			}
			git(t, ws, "config", "include.path", "../shared.cfg")
			return sandbox.Locations{}
		}, "conf/real.cfg"},
		{"a ZUNO_CONFIG file not made yet (C1)", func(t *testing.T, ws string) sandbox.Locations {
			return sandbox.Locations{ConfigFiles: []string{filepath.Join(ws, "trusted.json")}}
		}, "trusted.json"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			for _, protected := range []bool{false, true} {
				base, err := filepath.EvalSymlinks(t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				ws := filepath.Join(base, "ws")
				git(t, base, "init", "-q", "ws")
				own := row.setup(t, ws)
				w, err := files.New(ws)
				if err != nil {
					t.Fatal(err)
				}
				if protected {
					own.Git = adsandbox.GitPaths(ws, "")
					w.Protected = sandbox.Protections(sandbox.Config{}, own)
				}
				if _, err := os.Stat(filepath.Join(ws, row.path)); err == nil {
					w.Read(context.Background(), files.ReadRequest{Path: row.path})
				}
				_, err = w.Write(context.Background(), row.path, []byte("touch MARKER\n"))
				var de *domain.Error
				refused := errors.As(err, &de) && de.Code() == sandbox.CodeProtectedPath
				switch {
				case protected && !refused:
					t.Errorf("write %s: %v, want %s", row.path, err, sandbox.CodeProtectedPath)
				case !protected && err != nil:
					t.Errorf("control: write %s fails even unprotected: %v", row.path, err)
				}
			}
		})
	}
}
