package sandbox_test

// Issue 25 ("Side doors"), vectors 1 and 5, on the real bubblewrap and the real git: every
// protected path (sandbox.Protections: .git, .zuno, zuno.json[c], Zuno's configuration) and
// every hidden one (the auth file, the database and its WAL, other sessions' artifacts and
// background output, an anchor kept with Zuno's data), in the default and in custom
// locations, against every way a shell command reaches a file. The data lives under
// /var/tmp (hostDir), never under /tmp, whose private tmpfs would hide it by accident: what
// hides it here is the sandbox's own mounts.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	adsandbox "github.com/zuno-run/zuno/adapters/sandbox"
	"github.com/zuno-run/zuno/domain/sandbox"
)

// zunoFiles is one layout of a workspace and Zuno's own files around it.
type zunoFiles struct {
	base, ws, data string
	own            sandbox.Locations
	hidden         map[string]string // path -> the secret it holds
	readOnly       []string          // files that must not change (they may be read)
}

// layoutFiles writes a workspace and Zuno's files. custom moves them where the environment
// overrides put them: the data directory under another XDG_DATA_HOME, the database at a
// ZUNO_DB of its own, and an explicit --config file.
func layoutFiles(t *testing.T, custom bool) zunoFiles {
	t.Helper()
	base := hostDir(t)
	z := zunoFiles{base: base, ws: filepath.Join(base, "ws"), hidden: map[string]string{}}
	z.data = filepath.Join(base, "xdg", "zuno")
	db := filepath.Join(z.data, "zuno.db")
	cfgDir := filepath.Join(base, "config", "zuno")
	z.own = sandbox.Locations{DataDir: z.data, DB: db, Config: []string{cfgDir}}
	if custom {
		z.data = filepath.Join(base, "elsewhere", "share", "zuno")
		db = filepath.Join(base, "srv", "audit", "events.db")
		explicit := filepath.Join(base, "etc", "team.json")
		write(t, explicit, `{"permission": {"mode": "standard"}}`)
		z.readOnly = append(z.readOnly, explicit)
		z.own = sandbox.Locations{DataDir: z.data, DB: db, Config: []string{cfgDir, explicit}}
	}
	secret := func(rel string) string {
		return "SECRET-" + strings.NewReplacer("/", "_", ".", "_").Replace(rel) + "-" + strconv.Itoa(os.Getpid())
	}
	for _, p := range []string{
		filepath.Join(z.data, "auth.json"),
		db, db + "-wal", db + "-shm",
		filepath.Join(z.data, "artifacts", "ses_other", "c1-shell.out"),
		filepath.Join(z.data, "bg", "ses_other", "task.log"),
		filepath.Join(z.data, "anchor.json"),
	} {
		rel, _ := filepath.Rel(base, p)
		z.hidden[p] = secret(rel)
		write(t, p, z.hidden[p])
	}
	for _, rel := range []string{".zuno/zuno.json", "zuno.json", "zuno.jsonc", ".zuno/reports/r.md"} {
		write(t, filepath.Join(z.ws, rel), `{"sandbox": {}}`)
		z.readOnly = append(z.readOnly, filepath.Join(z.ws, rel))
	}
	write(t, filepath.Join(cfgDir, "zuno.json"), `{"permission": {"mode": "standard"}}`)
	z.readOnly = append(z.readOnly, filepath.Join(cfgDir, "zuno.json"))
	gitIn(t, z.ws, "init", "-q", ".")
	z.readOnly = append(z.readOnly, filepath.Join(z.ws, ".git", "config"), filepath.Join(z.ws, ".git", "HEAD"),
		filepath.Join(z.ws, ".git", "hooks", "pre-commit.sample"))
	return z
}

// protectedSession is the confined session a turn in z.ws gets.
func protectedSession(t *testing.T, z zunoFiles, js string) adsandbox.Session {
	t.Helper()
	requireBwrap(t)
	sess, err := adsandbox.Assemble(context.Background(), mergeGlobal(t, js),
		adsandbox.Request{Workspace: z.ws, Platform: "linux", Own: z.own}, adsandbox.Probe{})
	if err != nil {
		t.Fatalf("Assemble: %v", err)
	}
	if sess.Resolution.ResolutionKind != sandbox.KindConfined {
		t.Fatalf("not confined: %+v", sess.Resolution)
	}
	return sess
}

// attack runs command confined and fails the test unless the command itself ran: a sandbox
// that refuses to start would pass every row.
func attack(t *testing.T, sess adsandbox.Session, ws, command string) string {
	t.Helper()
	res := runIn(t, sess, ws, "echo COMMAND-RAN; "+command)
	out := string(res.Output)
	if !strings.HasPrefix(out, "COMMAND-RAN\n") {
		t.Fatalf("the command did not run: %q", out)
	}
	return out
}

// fileState is what must not change on the host.
type fileState struct {
	content string
	ino     uint64
	mode    os.FileMode
}

func stateOf(t *testing.T, p string) fileState {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatalf("%s is gone on the host: %v", p, err)
	}
	st := fileState{ino: fi.Sys().(*syscall.Stat_t).Ino, mode: fi.Mode()}
	if fi.Mode().IsRegular() {
		b, _ := os.ReadFile(p)
		st.content = string(b)
	}
	return st
}

// fileAttacks are every way a command reaches a file: %[1]s is the file, %[2]s a fresh name
// in the workspace, %[3]s the file's directory.
var fileAttacks = []struct{ name, command string }{
	{"read", `cat %[1]s`},
	{"read by fd", `exec 3<%[1]s && cat <&3`},
	{"list", `ls -la %[3]s; find %[3]s`},
	{"stat", `stat -c 'ino=%%i;size=%%s' %[1]s`},
	{"write", `echo pwned > %[1]s`},
	{"append", `echo pwned >> %[1]s`},
	{"truncate", `truncate -s 0 %[1]s`},
	{"delete", `rm -f %[1]s`},
	{"rename", `mv %[1]s %[1]s.moved`},
	{"rename directory", `mv %[3]s %[3]s.moved`},
	{"delete directory", `rm -rf %[3]s`},
	{"hard link", `ln %[1]s %[2]s && cat %[2]s && echo pwned >> %[2]s`},
	{"symlink", `ln -sf %[1]s %[2]s && cat %[2]s && echo pwned >> %[2]s`},
	{"chmod", `chmod 000 %[1]s`},
	{"copy", `cp %[1]s %[2]s && cat %[2]s`},
}

// batch is every file attack on p as one command, each in a subshell of its own after a
// line naming it, so one sandbox start serves the row and the output says which attack
// showed what. fresh names a new file in the workspace per attack.
func batch(p, ws string, n *int) (string, []string) {
	var b strings.Builder
	var fresh []string
	for _, a := range fileAttacks {
		*n++
		f := filepath.Join(ws, fmt.Sprintf("x%d", *n))
		fresh = append(fresh, f)
		fmt.Fprintf(&b, "echo '== %s'; ( %s ) 2>&1; ", a.name, fmt.Sprintf(a.command, p, f, filepath.Dir(p)))
	}
	return b.String(), fresh
}

// sectionWith names the attack whose section of out holds s.
func sectionWith(out, s string) string {
	i := strings.Index(out, s)
	if i < 0 {
		return ""
	}
	j := strings.LastIndex(out[:i], "== ")
	if j < 0 {
		return "(before the first attack)"
	}
	name, _, _ := strings.Cut(out[j+3:], "\n")
	return name
}

// Vector 5: the hidden files cannot be read, listed, stat'ed, changed, removed, renamed or
// linked by any command; vector 1's neighbours (.zuno, zuno.json[c], Zuno's configuration,
// .git) cannot be changed. Default and custom locations.
func TestSideDoorsShellAttackTable(t *testing.T) {
	for _, custom := range []bool{false, true} {
		t.Run(map[bool]string{false: "default locations", true: "custom locations"}[custom], func(t *testing.T) {
			z := layoutFiles(t, custom)
			sess := protectedSession(t, z, "")
			n := 0
			for p, secret := range z.hidden {
				before := stateOf(t, p)
				command, fresh := batch(p, z.ws, &n)
				out := attack(t, sess, z.ws, command)
				if a := sectionWith(out, secret); a != "" {
					t.Errorf("%s %s: the secret reached the command: %q", a, p, out)
				}
				if a := sectionWith(out, fmt.Sprintf("ino=%d;", before.ino)); a != "" {
					t.Errorf("%s %s: the host file's inode is visible: %q", a, p, out)
				}
				if after := stateOf(t, p); after != before {
					t.Errorf("%s: the host file changed: %+v -> %+v (%q)", p, before, after, out)
				}
				for _, f := range fresh {
					if fi, err := os.Lstat(f); err == nil && fi.Sys().(*syscall.Stat_t).Ino == before.ino {
						t.Errorf("%s: a hard link to the hidden file was made in the workspace", p)
					}
				}
				if _, err := os.Lstat(p + ".moved"); err == nil {
					t.Errorf("%s: renamed on the host", p)
				}
			}
			// The data directory shows nothing of what it holds.
			listing := attack(t, sess, z.ws, "ls -laR "+z.data+"; find "+z.data+"; du -a "+z.data)
			for _, name := range []string{"auth.json", "ses_other", "anchor.json", "zuno.db", "task.log"} {
				if strings.Contains(listing, name) {
					t.Errorf("listing the data directory shows %s: %q", name, listing)
				}
			}
			for _, p := range z.readOnly {
				before := stateOf(t, p)
				command, _ := batch(p, z.ws, &n)
				out := attack(t, sess, z.ws, command)
				if after := stateOf(t, p); after != before {
					t.Errorf("%s: the protected file changed: %+v -> %+v (%q)", p, before, after, out)
				}
				if _, err := os.Lstat(p + ".moved"); err == nil {
					t.Errorf("%s: renamed on the host", p)
				}
			}
			if n < 150 {
				t.Fatalf("only %d attacks ran", n)
			}
		})
	}
}

// The control of the table: the same layout without the protections (the native launcher)
// shows every secret, so the table above can fail.
func TestSideDoorsTableDetectsAnUnprotectedRun(t *testing.T) {
	z := layoutFiles(t, false)
	for p, secret := range z.hidden {
		res := runIn(t, adsandbox.Session{Launcher: adsandbox.Native{}}, z.ws, "cat "+p)
		if !strings.Contains(string(res.Output), secret) {
			t.Fatalf("unprotected cat %s did not show the secret: %q", p, res.Output)
		}
	}
}

// Vector 5 through /proc: Zuno's process (this test, holding the database open and
// ZUNO_ANCHOR_KEY in its environment) is not in the sandbox's pid namespace, so its fd, root
// and environ are out of reach, and nothing the command can see holds the key.
func TestSideDoorsProcOfTheRuntime(t *testing.T) {
	z := layoutFiles(t, false)
	key := "ANCHORKEY-" + strconv.Itoa(os.Getpid()) + "-c2VjcmV0"
	t.Setenv("ZUNO_ANCHOR_KEY", key)
	f, err := os.Open(z.own.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sess := protectedSession(t, z, "")
	pid := strconv.Itoa(os.Getpid())
	for _, command := range []string{
		"cat /proc/" + pid + "/environ",
		"ls -l /proc/" + pid + "/fd/ /proc/" + pid + "/root/",
		"cat /proc/" + pid + "/root" + z.data + "/auth.json",
		"cat /proc/" + pid + "/fd/" + strconv.Itoa(int(f.Fd())),
		"for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ; ls -l $p/fd/ $p/cwd $p/root; cat $p/fd/* 2>/dev/null; done",
		"env; cat /proc/self/environ /proc/1/environ",
	} {
		out := attack(t, sess, z.ws, command)
		for p, secret := range z.hidden {
			if strings.Contains(out, secret) {
				t.Errorf("%q: shows %s: %q", command, p, out)
			}
		}
		if strings.Contains(out, key) || strings.Contains(out, z.own.DB) {
			t.Errorf("%q: shows the key or the open database: %q", command, out)
		}
	}
}

// gitEnv runs git on the host as the user would, with no configuration of the machine's.
func gitEnv(base string) []string {
	return append(os.Environ(), "HOME="+base, "GIT_CONFIG_GLOBAL="+filepath.Join(base, "gitconfig"), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@example.com", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@example.com")
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = gitEnv(filepath.Dir(dir))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return string(out)
}

// gitPlants are the ways a command makes the user's next git command run its code (vector
// 1): %[1]s is the marker file the planted code creates on the host.
var gitPlants = []struct{ name, command string }{
	{"hooks/pre-commit", `printf '#!/bin/sh\ntouch %[1]s\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit`},
	{"core.hooksPath", `mkdir -p .h && printf '#!/bin/sh\ntouch %[1]s\n' > .h/pre-commit && chmod +x .h/pre-commit; git config core.hooksPath .h`},
	{"core.fsmonitor", `printf '#!/bin/sh\ntouch %[1]s\nexit 1\n' > fsm && chmod +x fsm; git config core.fsmonitor "$PWD/fsm"`},
	{"include in .git/config", `printf '[core]\n\tfsmonitor = touch %[1]s\n' > evil.cfg; printf '[include]\n\tpath = ../evil.cfg\n' >> .git/config`},
	{"hook beside a moved .git", `mv .git .git.old; mkdir -p .git && cp -r .git.old/. .git/ 2>/dev/null; printf '#!/bin/sh\ntouch %[1]s\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit`},
	{"a new .git", `rm -rf .git; git init -q . && printf '#!/bin/sh\ntouch %[1]s\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit`},
	{"info/attributes and a filter", `printf '* filter=x\n' > .git/info/attributes; git config filter.x.clean "touch %[1]s; cat"; printf '* filter=x\n' > .gitattributes`},
	{"the user's global config", `git config --global core.fsmonitor "touch %[1]s"`},
}

// userRunsGit is the user's next commands on the host, in the workspace.
func userRunsGit(t *testing.T, ws string) {
	t.Helper()
	for _, args := range [][]string{{"status"}, {"add", "-A"}, {"commit", "-qm", "next"}, {"status", "--porcelain"}} {
		cmd := exec.Command("git", append([]string{"-C", ws}, args...)...)
		cmd.Env = gitEnv(filepath.Dir(ws))
		cmd.Run() // a planted failure is not the question; the marker is
	}
}

// Vector 1: after each plant through the sandboxed shell, the user's git status, add and
// commit on the host run nothing the agent wrote. Each plant is first shown to work without
// the sandbox (the control), so a row that passes means the protection held.
func TestSideDoorsGitRunsNothingTheAgentWrote(t *testing.T) {
	requireBwrap(t)
	for _, plant := range gitPlants {
		t.Run(plant.name, func(t *testing.T) {
			for _, protected := range []bool{false, true} {
				z := layoutFiles(t, false)
				gitIn(t, z.ws, "commit", "-q", "--allow-empty", "-m", "first")
				marker := filepath.Join(z.base, "MARKER")
				sess := adsandbox.Session{Launcher: adsandbox.Native{}}
				if protected {
					sess = protectedSession(t, z, "")
				}
				res := runIn(t, sess, z.ws, fmt.Sprintf(plant.command, marker), gitEnv(z.base)...)
				userRunsGit(t, z.ws)
				_, err := os.Stat(marker)
				switch {
				case protected && err == nil:
					t.Errorf("the user's git ran code the agent planted (%q)", res.Output)
				case !protected && err != nil:
					t.Errorf("control: the plant does not work even unprotected, so the row proves nothing (%q)", res.Output)
				}
			}
		})
	}
}

// Vector 1 with a .git file (a worktree's or submodule's pointer): the file cannot be
// re-pointed at a directory of the agent's.
func TestSideDoorsGitFileCannotBeRepointed(t *testing.T) {
	z := layoutFiles(t, false)
	gitIn(t, z.ws, "commit", "-q", "--allow-empty", "-m", "first")
	real := filepath.Join(z.base, "repo.git")
	if err := os.Rename(filepath.Join(z.ws, ".git"), real); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(z.ws, ".git"), "gitdir: "+real+"\n")
	marker := filepath.Join(z.base, "MARKER")
	sess := protectedSession(t, z, "")
	res := runIn(t, sess, z.ws, fmt.Sprintf(`git init -q --bare evil.git && printf '#!/bin/sh\ntouch %[1]s\n' > evil.git/hooks/pre-commit && `+
		`chmod +x evil.git/hooks/pre-commit; echo "gitdir: $PWD/evil.git" > .git; rm -f .git; mv .git g2`, marker), gitEnv(z.base)...)
	if b, _ := os.ReadFile(filepath.Join(z.ws, ".git")); string(b) != "gitdir: "+real+"\n" {
		t.Errorf(".git was re-pointed: %q (%q)", b, res.Output)
	}
	userRunsGit(t, z.ws)
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the user's git ran code the agent planted (%q)", res.Output)
	}
}

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// gitPointed are repositories whose configuration or layout points git somewhere besides the
// work tree's .git (REVIEW25 findings 1, 2, 3 and 9): setup shapes the host's repository
// (as the user would), command is the agent's plant (%[1]s the marker), want the paths
// (relative to the base) the protections must list.
var gitPointed = []struct {
	name    string
	setup   func(t *testing.T, z *zunoFiles)
	command string
	want    []string
}{
	{"core.hooksPath into the work tree (finding 1)", func(t *testing.T, z *zunoFiles) {
		write(t, filepath.Join(z.ws, ".husky", "pre-commit"), "#!/bin/sh\nexit 0\n")
		os.Chmod(filepath.Join(z.ws, ".husky", "pre-commit"), 0o755)
		gitIn(t, z.ws, "config", "core.hooksPath", ".husky")
	}, `printf '#!/bin/sh\ntouch %[1]s\n' > .husky/pre-commit`, []string{"ws/.husky"}},
	{"core.hooksPath not made yet (finding 1)", func(t *testing.T, z *zunoFiles) {
		gitIn(t, z.ws, "config", "core.hooksPath", "tools/hooks")
	}, `mkdir -p tools/hooks && printf '#!/bin/sh\ntouch %[1]s\n' > tools/hooks/pre-commit && chmod +x tools/hooks/pre-commit`,
		[]string{"ws/tools/hooks"}},
	{"include.path into the work tree (finding 1)", func(t *testing.T, z *zunoFiles) {
		write(t, filepath.Join(z.ws, ".gitconfig.shared"), "[user]\n\tname = u\n")
		gitIn(t, z.ws, "config", "include.path", "../.gitconfig.shared")
	}, `printf '[core]\n\tfsmonitor = "touch %[1]s; false"\n' >> .gitconfig.shared`, []string{"ws/.gitconfig.shared"}},
	{"includeIf.*.path not made yet (finding 1)", func(t *testing.T, z *zunoFiles) {
		gitIn(t, z.ws, "config", "includeIf.onbranch:master.path", "../.gitconfig.branch")
		gitIn(t, z.ws, "config", "includeIf.onbranch:main.path", "../.gitconfig.branch")
	}, `printf '[core]\n\tfsmonitor = "touch %[1]s; false"\n' > .gitconfig.branch`, []string{"ws/.gitconfig.branch"}},
	{"separate git dir in the workspace, config (finding 2)", separateGitDir,
		`git config core.fsmonitor "touch %[1]s; false"`, []string{"ws/.bare"}},
	{"separate git dir in the workspace, hook (finding 2)", separateGitDir,
		`printf '#!/bin/sh\ntouch %[1]s\n' > .bare/hooks/pre-commit; chmod +x .bare/hooks/pre-commit`, []string{"ws/.bare"}},
	{"relative gitdir: in a .git file (finding 2)", func(t *testing.T, z *zunoFiles) {
		os.Rename(filepath.Join(z.ws, ".git"), filepath.Join(z.ws, "meta"))
		write(t, filepath.Join(z.ws, ".git"), "gitdir: meta\n")
	}, `git config core.fsmonitor "touch %[1]s; false"; printf '#!/bin/sh\ntouch %[1]s\n' > meta/hooks/pre-commit; chmod +x meta/hooks/pre-commit`,
		[]string{"ws/meta"}},
	{"submodule .git repointed (finding 3)", submodule,
		`cp -r .git/modules/sub evil && git config -f evil/config core.worktree ../sub && ` +
			`git config -f evil/config core.fsmonitor "touch %[1]s; false" && echo "gitdir: ../evil" > sub/.git`,
		[]string{"ws/sub/.git"}},
	{"a command the configuration names by a path (finding 1)", func(t *testing.T, z *zunoFiles) {
		write(t, filepath.Join(z.ws, "tools", "fsmon.sh"), "#!/bin/sh\nexit 1\n")
		os.Chmod(filepath.Join(z.ws, "tools", "fsmon.sh"), 0o755)
		gitIn(t, z.ws, "config", "core.fsmonitor", "tools/fsmon.sh")
	}, `printf '#!/bin/sh\ntouch %[1]s\nexit 1\n' > tools/fsmon.sh`, []string{"ws/tools/fsmon.sh"}},
	{"submodule not checked out, .git made (finding 3)", func(t *testing.T, z *zunoFiles) {
		submodule(t, z)
		os.Remove(filepath.Join(z.ws, "sub", ".git"))
		os.Remove(filepath.Join(z.ws, "sub", "f"))
	}, `cp -r .git/modules/sub evil && git config -f evil/config core.worktree ../sub && ` +
		`git config -f evil/config core.fsmonitor "touch %[1]s; false" && echo "gitdir: ../evil" > sub/.git`,
		[]string{"ws/sub/.git"}},
	{"nested repository the user works in (finding 3)", func(t *testing.T, z *zunoFiles) {
		gitIn(t, z.ws, "init", "-q", "vendor/lib")
		gitIn(t, filepath.Join(z.ws, "vendor", "lib"), "commit", "-q", "--allow-empty", "-m", "lib")
	}, `git -C vendor/lib config core.fsmonitor "touch %[1]s; false"; ` +
		`printf '#!/bin/sh\ntouch %[1]s\n' > vendor/lib/.git/hooks/pre-commit; chmod +x vendor/lib/.git/hooks/pre-commit`,
		[]string{"ws/vendor/lib/.git"}},
	{"workspace below a repository, git init (finding 9)", func(t *testing.T, z *zunoFiles) {
		os.RemoveAll(filepath.Join(z.ws, ".git"))
		gitIn(t, z.base, "init", "-q", ".")
		gitIn(t, z.base, "commit", "-q", "--allow-empty", "-m", "outer")
		z.own.Repository = z.base
	}, `git init -q . && git config core.fsmonitor "touch %[1]s; false"`, []string{".git"}},
	{"workspace not a repository, git init (finding 9)", func(t *testing.T, z *zunoFiles) {
		os.RemoveAll(filepath.Join(z.ws, ".git"))
	}, `git init -q . && git config core.fsmonitor "touch %[1]s; false"`, nil},
}

// separateGitDir is git init --separate-git-dir=.bare: .git is a file naming <ws>/.bare.
func separateGitDir(t *testing.T, z *zunoFiles) {
	os.RemoveAll(filepath.Join(z.ws, ".git"))
	gitIn(t, z.ws, "init", "-q", "--separate-git-dir="+filepath.Join(z.ws, ".bare"), ".")
}

// submodule adds a submodule sub (sub/.git: gitdir: ../.git/modules/sub).
func submodule(t *testing.T, z *zunoFiles) {
	src := filepath.Join(z.base, "subsrc")
	write(t, filepath.Join(src, "f"), "f\n")
	gitIn(t, src, "init", "-q", ".")
	gitIn(t, src, "add", "-A")
	gitIn(t, src, "commit", "-qm", "sub")
	gitIn(t, z.ws, "-c", "protocol.file.allow=always", "submodule", "-q", "add", src, "sub")
	gitIn(t, z.ws, "commit", "-qm", "with sub")
}

// Findings 1, 2, 3 and 9 through the shell: each plant first shown to run the agent's code
// unprotected (the control), then, confined, the user's git status, add and commit on the
// host run nothing, and the protections list the place with why.
func TestSideDoorsGitPointedElsewhereRunsNothing(t *testing.T) {
	requireBwrap(t)
	for _, row := range gitPointed {
		t.Run(row.name, func(t *testing.T) {
			for _, protected := range []bool{false, true} {
				z := layoutFiles(t, false)
				gitIn(t, z.ws, "commit", "-q", "--allow-empty", "-m", "first")
				row.setup(t, &z)
				marker := filepath.Join(z.base, "MARKER")
				sess := adsandbox.Session{Launcher: adsandbox.Native{}}
				if protected {
					sess = protectedSession(t, z, "")
					for _, w := range row.want {
						if !lists(sess.Protected, filepath.Join(z.base, w), z.ws) {
							t.Errorf("the protections do not list %s: %+v", w, sess.Protected)
						}
					}
				}
				res := runIn(t, sess, z.ws, fmt.Sprintf(row.command, marker), gitEnv(z.base)...)
				userRunsGit(t, z.ws)
				if lib := filepath.Join(z.ws, "vendor", "lib"); strings.Contains(row.command, "vendor/lib") {
					userRunsGit(t, lib)
				}
				_, err := os.Stat(marker)
				switch {
				case protected && err == nil:
					t.Errorf("the user's git ran code the agent planted (%q)", res.Output)
				case !protected && err != nil:
					t.Errorf("control: the plant does not work even unprotected, so the row proves nothing (%q)", res.Output)
				}
			}
		})
	}
}

// lists reports whether list protects p (a path listed, or one above it).
func lists(list []adsandbox.Protection, p, ws string) bool {
	real := p
	if r, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		real = filepath.Join(r, filepath.Base(p))
	}
	_, ok := sandbox.Guard(list, ws, filepath.ToSlash(real), true)
	return ok
}

// Finding 9's cover: where the workspace has no .git the sandbox leaves an empty .git
// directory on the host (its mount point), which git passes over: in a workspace below a
// repository the user's git still works on the enclosing one, and one that is no
// repository is still none.
func TestSideDoorsMissingGitLeavesAnEmptyDirectoryGitIgnores(t *testing.T) {
	requireBwrap(t)
	for _, enclosed := range []bool{true, false} {
		z := layoutFiles(t, false)
		os.RemoveAll(filepath.Join(z.ws, ".git"))
		if enclosed {
			gitIn(t, z.base, "init", "-q", ".")
			z.own.Repository = z.base
		}
		sess := protectedSession(t, z, "")
		out := attack(t, sess, z.ws, "git init -q . ; mkdir .git/hooks; touch .git/config; rmdir .git; mv .git g; ls -A .git | wc -l")
		if !strings.HasSuffix(out, "\n0\n") {
			t.Errorf("enclosed=%v: the agent changed the covered .git: %q", enclosed, out)
		}
		entries, err := os.ReadDir(filepath.Join(z.ws, ".git"))
		if err != nil || len(entries) != 0 {
			t.Errorf("enclosed=%v: the host's .git is not an empty directory: %v %v", enclosed, entries, err)
		}
		cmd := exec.Command("git", "-C", z.ws, "rev-parse", "--show-toplevel")
		cmd.Env = gitEnv(z.base)
		top, err := cmd.Output()
		switch {
		case enclosed && (err != nil || strings.TrimSpace(string(top)) != z.base):
			t.Errorf("git in the workspace no longer finds the enclosing repository: %q %v", top, err)
		case !enclosed && err == nil:
			t.Errorf("git takes the empty .git for a repository: %q", top)
		}
	}
}

// GitPaths on the places the end-to-end rows do not reach: a linked worktree (its .git file
// names <main>/.git/worktrees/<name>, whose commondir is the main .git), core.attributesFile,
// an include's own include, and a git directory outside the workspace. Each listed with why.
func TestGitPathsListsWhatGitReads(t *testing.T) {
	base := hostDir(t)
	main, ws := filepath.Join(base, "main"), filepath.Join(base, "wt")
	gitIn(t, base, "init", "-q", "main")
	gitIn(t, main, "commit", "-q", "--allow-empty", "-m", "first")
	gitIn(t, main, "worktree", "add", "-q", ws)
	gitIn(t, main, "config", "core.attributesFile", "attrs/global")
	write(t, filepath.Join(main, ".git", "one.cfg"), "[include]\n\tpath = two.cfg\n")
	write(t, filepath.Join(main, ".git", "two.cfg"), "[user]\n\tname = u\n")
	gitIn(t, main, "config", "include.path", "one.cfg")
	list := adsandbox.GitPaths(ws, "")
	got := map[string]string{}
	for _, g := range list {
		if g.Why == "" || !filepath.IsAbs(g.Path) {
			t.Errorf("%+v: no why, or not absolute", g)
		}
		got[g.Path] = g.Why
	}
	realMain, _ := filepath.EvalSymlinks(main)
	realWs, _ := filepath.EvalSymlinks(ws)
	for _, want := range []string{
		filepath.Join(realMain, ".git", "worktrees", "wt"), // gitdir:
		filepath.Join(realMain, ".git"),                    // commondir
		filepath.Join(realWs, "attrs", "global"),           // core.attributesFile, relative to the work tree
		filepath.Join(realMain, ".git", "one.cfg"),         // include.path
		filepath.Join(realMain, ".git", "two.cfg"),         // its include
	} {
		if _, ok := got[want]; !ok {
			t.Errorf("GitPaths does not list %s: %v", want, got)
		}
	}
}
