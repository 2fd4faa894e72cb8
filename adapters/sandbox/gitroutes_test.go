package sandbox_test

// Issue 25, item 1 ("every file git executes or reads configuration from"), the second
// review's GIT and CONFIG (C1) findings, on the real bubblewrap and the real git: the
// user's configuration names a file in the work tree that git runs (a), a hook runs a hook
// manager or a script of the work tree (b), a link inside .git, .git itself or an include
// target is a link (c). Each row is first shown to run the agent's code when unprotected
// (the control), then, confined, the user's next git commands on the host run nothing the
// agent wrote, and the protections (the one list both doors enforce) list the place.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	adsandbox "github.com/zuno-run/zuno/adapters/sandbox"
)

// script writes an executable file.
func script(t *testing.T, p, body string) {
	t.Helper()
	write(t, p, body)
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// userGit is the user's git command on the host, in dir, with stdin (its failure is not the
// question; the marker is).
func userGit(ws, stdin string, args ...string) {
	cmd := exec.Command("git", append([]string{"-C", ws}, args...)...)
	cmd.Env = gitEnv(filepath.Dir(ws))
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Run()
}

// A row of the table: setup shapes the user's repository, command is the agent's plant in
// the sandboxed shell (%[1]s the marker its code would create), user the git commands the
// user then runs on the host besides status, add and commit, want the paths (relative to
// the workspace) the protections must list. The user's commands run before status, add and
// commit (git diff shows what the commit would take).
type gitRoute struct {
	name    string
	setup   func(t *testing.T, ws string)
	command string
	user    [][]string
	want    []string
}

// fsmonitorRow: core.fsmonitor set to value, scripts/fsmon.sh made when made is true.
func fsmonitorRow(value string, made bool) func(t *testing.T, ws string) {
	return func(t *testing.T, ws string) {
		if made {
			script(t, filepath.Join(ws, "scripts", "fsmon.sh"), "#!/bin/sh\nexit 1\n")
		}
		gitIn(t, ws, "config", "core.fsmonitor", value)
	}
}

const plantFsmon = `mkdir -p scripts; printf 'touch %[1]s\nexit 1\n' > scripts/fsmon.sh`

// committed writes files and commits them, as the user's repository had them.
func committed(t *testing.T, ws string, files map[string]string) {
	for p, body := range files {
		script(t, filepath.Join(ws, p), body)
	}
	gitIn(t, ws, "add", "-A")
	gitIn(t, ws, "commit", "-qm", "files")
}

// (a) configuration values git runs through a shell or an interpreter, naming a file.
var commandRoutes = []gitRoute{
	{"core.fsmonitor = sh scripts/fsmon.sh", fsmonitorRow("sh scripts/fsmon.sh", true), plantFsmon, nil,
		[]string{"scripts/fsmon.sh"}},
	{"core.fsmonitor = sh \"$(git rev-parse --show-toplevel)/scripts/fsmon.sh\"",
		fsmonitorRow(`sh "$(git rev-parse --show-toplevel)/scripts/fsmon.sh"`, true), plantFsmon, nil, []string{"scripts/fsmon.sh"}},
	{"core.fsmonitor naming a script not made yet", fsmonitorRow("sh scripts/fsmon.sh", false), plantFsmon, nil,
		[]string{"scripts/fsmon.sh"}},
	{"core.fsmonitor = bash -c 'python3 scripts/fsmon.py'", func(t *testing.T, ws string) {
		write(t, filepath.Join(ws, "scripts", "fsmon.py"), "import sys\nsys.exit(1)\n")
		gitIn(t, ws, "config", "core.fsmonitor", `bash -c 'python3 scripts/fsmon.py'`)
	}, `printf 'open("%[1]s", "w")\nimport sys\nsys.exit(1)\n' > scripts/fsmon.py`, nil, []string{"scripts/fsmon.py"}},
	{"core.fsmonitor that no parser of ours reads (conservative)", fsmonitorRow("sh scripts/fsmon.sh || echo $((1+))", true),
		plantFsmon, nil, []string{"scripts/fsmon.sh"}},
	{"alias.x = !sh tools/x.sh", func(t *testing.T, ws string) {
		script(t, filepath.Join(ws, "tools", "x.sh"), "#!/bin/sh\ntrue\n")
		gitIn(t, ws, "config", "alias.x", "!sh tools/x.sh")
	}, `printf 'touch %[1]s\n' > tools/x.sh`, [][]string{{"x"}}, []string{"tools/x.sh"}},
	{"alias.st = -c core.fsmonitor=… status (git's own options)", func(t *testing.T, ws string) {
		script(t, filepath.Join(ws, "tools", "fsm.sh"), "#!/bin/sh\nexit 1\n")
		gitIn(t, ws, "config", "alias.st", `-c core.fsmonitor="sh tools/fsm.sh" status`)
	}, `printf 'touch %[1]s\nexit 1\n' > tools/fsm.sh`, [][]string{{"st"}}, []string{"tools/fsm.sh"}},
	{"filter.x.clean = sh tools/clean.sh", func(t *testing.T, ws string) {
		committed(t, ws, map[string]string{"a.txt": "a\n", ".gitattributes": "*.txt filter=x\n", "tools/clean.sh": "#!/bin/sh\ncat\n"})
		gitIn(t, ws, "config", "filter.x.clean", "sh tools/clean.sh")
	}, `printf 'touch %[1]s\ncat\n' > tools/clean.sh; echo b >> a.txt`, nil, []string{"tools/clean.sh"}},
	{"diff.x.textconv = sh tools/conv.sh", func(t *testing.T, ws string) {
		committed(t, ws, map[string]string{"a.bin": "a\n", ".gitattributes": "*.bin diff=x\n", "tools/conv.sh": "#!/bin/sh\ncat \"$1\"\n"})
		gitIn(t, ws, "config", "diff.x.textconv", "sh tools/conv.sh")
	}, `printf 'touch %[1]s\ncat "$1"\n' > tools/conv.sh; echo b >> a.bin`, [][]string{{"diff"}, {"log", "-p", "-1"}},
		[]string{"tools/conv.sh"}},
	{"diff.external = sh tools/diff.sh", func(t *testing.T, ws string) {
		committed(t, ws, map[string]string{"a.txt": "a\n", "tools/diff.sh": "#!/bin/sh\ntrue\n"})
		gitIn(t, ws, "config", "diff.external", "sh tools/diff.sh")
	}, `printf 'touch %[1]s\n' > tools/diff.sh; echo b >> a.txt`, [][]string{{"diff"}}, []string{"tools/diff.sh"}},
	{"core.editor = sh tools/edit.sh", func(t *testing.T, ws string) {
		script(t, filepath.Join(ws, "tools", "edit.sh"), "#!/bin/sh\necho msg > \"$1\"\n")
		gitIn(t, ws, "config", "core.editor", "sh tools/edit.sh")
	}, `printf 'touch %[1]s\necho msg > "$1"\n' > tools/edit.sh`, [][]string{{"commit", "-q", "--allow-empty"}}, []string{"tools/edit.sh"}},
	{"core.sshCommand = ssh -F tools/ssh_config", func(t *testing.T, ws string) {
		write(t, filepath.Join(ws, "tools", "ssh_config"), "Host *\n  BatchMode yes\n")
		gitIn(t, ws, "config", "core.sshCommand", "ssh -F tools/ssh_config")
		gitIn(t, ws, "remote", "add", "origin", "ssh://example.invalid/x.git")
	}, `printf 'Host *\n  ProxyCommand touch %[1]s\n' > tools/ssh_config`, [][]string{{"fetch", "-q", "origin"}},
		[]string{"tools/ssh_config"}},
	{"credential.helper = !sh tools/cred.sh", func(t *testing.T, ws string) {
		script(t, filepath.Join(ws, "tools", "cred.sh"), "#!/bin/sh\ntrue\n")
		gitIn(t, ws, "config", "credential.helper", "!sh tools/cred.sh")
	}, `printf 'touch %[1]s\n' > tools/cred.sh`, [][]string{{"credential", "fill"}}, []string{"tools/cred.sh"}},
	{"remote.origin.url = ext::sh tools/remote.sh", func(t *testing.T, ws string) {
		script(t, filepath.Join(ws, "tools", "remote.sh"), "#!/bin/sh\nexit 1\n")
		gitIn(t, ws, "config", "protocol.ext.allow", "always")
		gitIn(t, ws, "remote", "add", "origin", "ext::sh tools/remote.sh %S")
	}, `printf 'touch %[1]s\nexit 1\n' > tools/remote.sh`, [][]string{{"fetch", "-q", "origin"}}, []string{"tools/remote.sh"}},
	{"init.templateDir (the user's global configuration) in the workspace", func(t *testing.T, ws string) {
		os.MkdirAll(filepath.Join(ws, "tmpl", "hooks"), 0o755)
		write(t, filepath.Join(filepath.Dir(ws), "gitconfig"), "[init]\n\ttemplateDir = "+filepath.Join(ws, "tmpl")+"\n")
	}, `printf '#!/bin/sh\ntouch %[1]s\n' > tmpl/hooks/pre-commit; chmod +x tmpl/hooks/pre-commit`,
		[][]string{{"-C", "..", "init", "-q", "other"}, {"-C", "../other", "commit", "-q", "--allow-empty", "-m", "x"}}, []string{"tmpl"}},
	{"gpg.program = tools/gpg.sh (run without a shell)", func(t *testing.T, ws string) {
		script(t, filepath.Join(ws, "tools", "gpg.sh"), "#!/bin/sh\nexit 1\n")
		gitIn(t, ws, "config", "gpg.program", "tools/gpg.sh")
		gitIn(t, ws, "config", "commit.gpgSign", "true")
	}, `printf '#!/bin/sh\ntouch %[1]s\nexit 1\n' > tools/gpg.sh`, nil, []string{"tools/gpg.sh"}},
}

// A husky v9 runner as husky installs it (.husky/_/h), and its stubs.
const (
	huskyRunner = "#!/usr/bin/env sh\nn=$(basename \"$0\")\ns=$(dirname \"$(dirname \"$0\")\")/$n\n[ ! -f \"$s\" ] && exit 0\nsh -e \"$s\" \"$@\"\n"
	huskyStub   = "#!/usr/bin/env sh\n. \"$(dirname \"$0\")/h\"\n"
	// preCommitHook stands for the hook pre-commit installs (its first lines as pre-commit
	// writes them); python -m pre_commit is replaced by what it does with a local hook: run
	// each entry of the configuration.
	preCommitHook = "#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n" +
		"ARGS=(hook-impl --config=.pre-commit-config.yaml --hook-type=pre-commit)\n" +
		"sed -n 's/^ *entry: *//p' .pre-commit-config.yaml | while read -r e; do sh -c \"$e\" || exit 1; done\n"
	preCommitConfig = "repos:\n  - repo: local\n    hooks:\n      - id: check\n        name: check\n        entry: scripts/check.sh\n        language: script\n"
	// lefthookHook stands for lefthook's hook (lefthook run "pre-commit"): the run: commands
	// of lefthook.yml and lefthook-local.yml.
	lefthookHook = "#!/bin/sh\n# lefthook: lefthook run \"pre-commit\"\n" +
		"for f in lefthook.yml lefthook-local.yml; do [ -f \"$f\" ] && sed -n 's/^ *run: *//p' \"$f\" | while read -r c; do sh -c \"$c\"; done; done\nexit 0\n"
	lefthookConfig = "pre-commit:\n  commands:\n    lint:\n      run: sh scripts/lint.sh\n"
)

// overcommitHook stands for overcommit's hook: the command lists of .overcommit.yml.
const overcommitHook = "#!/bin/sh\n# overcommit: runs the hooks of .overcommit.yml\n" +
	"sed -n \"s/^ *command: *\\[ *'\\([^']*\\)'.*/\\1/p\" .overcommit.yml | while read -r c; do sh \"$c\"; done\nexit 0\n"

func preCommitSetup(t *testing.T, ws string) {
	script(t, filepath.Join(ws, ".git", "hooks", "pre-commit"), preCommitHook)
	write(t, filepath.Join(ws, ".pre-commit-config.yaml"), preCommitConfig)
	script(t, filepath.Join(ws, "scripts", "check.sh"), "#!/bin/sh\nexit 0\n")
}

func lefthookSetup(t *testing.T, ws string) {
	script(t, filepath.Join(ws, ".git", "hooks", "pre-commit"), lefthookHook)
	write(t, filepath.Join(ws, "lefthook.yml"), lefthookConfig)
	script(t, filepath.Join(ws, "scripts", "lint.sh"), "#!/bin/sh\nexit 0\n")
}

// (b) hooks and hook managers.
var hookRoutes = []gitRoute{
	{"husky v9: core.hooksPath = .husky/_, the hook in .husky", func(t *testing.T, ws string) {
		script(t, filepath.Join(ws, ".husky", "_", "h"), huskyRunner)
		script(t, filepath.Join(ws, ".husky", "_", "pre-commit"), huskyStub)
		write(t, filepath.Join(ws, ".husky", "pre-commit"), "exit 0\n")
		gitIn(t, ws, "config", "core.hooksPath", ".husky/_")
	}, `printf 'touch %[1]s\n' > .husky/pre-commit`, nil, []string{".husky", ".husky/pre-commit"}},
	{"husky v9: the hook not made yet", func(t *testing.T, ws string) {
		script(t, filepath.Join(ws, ".husky", "_", "h"), huskyRunner)
		script(t, filepath.Join(ws, ".husky", "_", "pre-commit"), huskyStub)
		gitIn(t, ws, "config", "core.hooksPath", ".husky/_")
	}, `printf 'touch %[1]s\n' > .husky/pre-commit`, nil, []string{".husky/pre-commit"}},
	{"core.hooksPath with a hook that links into the work tree", func(t *testing.T, ws string) {
		script(t, filepath.Join(ws, "scripts", "pc.sh"), "#!/bin/sh\nexit 0\n")
		os.MkdirAll(filepath.Join(ws, "githooks"), 0o755)
		symlink(t, "../scripts/pc.sh", filepath.Join(ws, "githooks", "pre-commit"))
		gitIn(t, ws, "config", "core.hooksPath", "githooks")
	}, `printf '#!/bin/sh\ntouch %[1]s\n' > scripts/pc.sh`, nil, []string{"scripts/pc.sh"}},
	{".git/hooks/pre-commit a link into the work tree", func(t *testing.T, ws string) {
		script(t, filepath.Join(ws, "scripts", "pc.sh"), "#!/bin/sh\nexit 0\n")
		symlink(t, "../../scripts/pc.sh", filepath.Join(ws, ".git", "hooks", "pre-commit"))
	}, `printf '#!/bin/sh\ntouch %[1]s\n' > scripts/pc.sh`, nil, []string{"scripts/pc.sh"}},
	{"a hook that runs a script of the work tree", func(t *testing.T, ws string) {
		script(t, filepath.Join(ws, ".git", "hooks", "pre-commit"), "#!/bin/sh\nexec sh ./scripts/pre-commit.sh \"$@\"\n")
		script(t, filepath.Join(ws, "scripts", "pre-commit.sh"), "#!/bin/sh\nexit 0\n")
	}, `printf 'touch %[1]s\n' > scripts/pre-commit.sh`, nil, []string{"scripts/pre-commit.sh"}},
	{"pre-commit: a local hook added to .pre-commit-config.yaml", preCommitSetup,
		`printf '      - id: x\n        name: x\n        entry: touch %[1]s\n        language: system\n' >> .pre-commit-config.yaml`, nil,
		[]string{".pre-commit-config.yaml"}},
	{"pre-commit: the script a local hook runs", preCommitSetup, `printf 'touch %[1]s\n' > scripts/check.sh`, nil,
		[]string{"scripts/check.sh"}},
	{"overcommit: the script a command list runs", func(t *testing.T, ws string) {
		script(t, filepath.Join(ws, ".git", "hooks", "pre-commit"), overcommitHook)
		write(t, filepath.Join(ws, ".overcommit.yml"), "PreCommit:\n  Check:\n    enabled: true\n    command: ['scripts/oc.sh', '--fix']\n")
		script(t, filepath.Join(ws, "scripts", "oc.sh"), "#!/bin/sh\nexit 0\n")
	}, `printf 'touch %[1]s\n' > scripts/oc.sh`, nil, []string{".overcommit.yml", "scripts/oc.sh"}},
	{"lefthook: lefthook-local.yml made", lefthookSetup,
		`printf 'pre-commit:\n  commands:\n    x:\n      run: touch %[1]s\n' > lefthook-local.yml`, nil, []string{"lefthook-local.yml"}},
	{"lefthook: lefthook.yml changed", lefthookSetup,
		`printf '    x:\n      run: touch %[1]s\n' >> lefthook.yml`, nil, []string{"lefthook.yml"}},
	{"lefthook: the script a command runs", lefthookSetup, `printf 'touch %[1]s\n' > scripts/lint.sh`, nil,
		[]string{"scripts/lint.sh"}},
}

// dotGitLink makes the workspace's .git a link to meta, a directory beside it.
func dotGitLink(t *testing.T, ws string) {
	if err := os.Rename(filepath.Join(ws, ".git"), filepath.Join(ws, "meta")); err != nil {
		t.Fatal(err)
	}
	symlink(t, "meta", filepath.Join(ws, ".git"))
}

// evilRepo is the agent's repository with a hook, made by the command (%[1]s the marker).
const evilRepo = `git init -q --bare evil.git && git --git-dir=evil.git config core.bare false && ` +
	`printf '#!/bin/sh\ntouch %[1]s\n' > evil.git/hooks/pre-commit && chmod +x evil.git/hooks/pre-commit; `

func includeLink(t *testing.T, ws string) {
	write(t, filepath.Join(ws, "conf", "real.cfg"), "[user]\n\tname = u\n")
	symlink(t, "conf/real.cfg", filepath.Join(ws, "shared.cfg"))
	gitIn(t, ws, "config", "include.path", "../shared.cfg")
}

// (c) links.
var linkRoutes = []gitRoute{
	{".git/hooks a link to ../githooks", func(t *testing.T, ws string) {
		os.MkdirAll(filepath.Join(ws, "githooks"), 0o755)
		os.RemoveAll(filepath.Join(ws, ".git", "hooks"))
		symlink(t, "../githooks", filepath.Join(ws, ".git", "hooks"))
	}, `printf '#!/bin/sh\ntouch %[1]s\n' > githooks/pre-commit; chmod +x githooks/pre-commit`, nil, []string{"githooks"}},
	{".git/config a link to ../gitcfg", func(t *testing.T, ws string) {
		if err := os.Rename(filepath.Join(ws, ".git", "config"), filepath.Join(ws, "gitcfg")); err != nil {
			t.Fatal(err)
		}
		symlink(t, "../gitcfg", filepath.Join(ws, ".git", "config"))
	}, `printf '[core]\n\tfsmonitor = "touch %[1]s; false"\n' >> gitcfg`, nil, []string{"gitcfg"}},
	{".git a link into the workspace: what it points to", dotGitLink,
		`printf '#!/bin/sh\ntouch %[1]s\n' > meta/hooks/pre-commit; chmod +x meta/hooks/pre-commit; git config core.fsmonitor "touch %[1]s; false"`,
		nil, []string{"meta", ".git"}},
	{".git a link: re-pointed", dotGitLink, evilRepo + `rm -f .git; ln -sfn evil.git .git; mv .git g2 && ln -s evil.git .git`,
		nil, []string{".git"}},
	{".git a link outside the workspace: re-pointed", func(t *testing.T, ws string) {
		outside := filepath.Join(filepath.Dir(ws), "repo.git")
		if err := os.Rename(filepath.Join(ws, ".git"), outside); err != nil {
			t.Fatal(err)
		}
		symlink(t, outside, filepath.Join(ws, ".git"))
	}, evilRepo + `rm -f .git; ln -sfn evil.git .git`, nil, []string{".git"}},
	{"include.path target a link: what it points to", includeLink,
		`printf '[core]\n\tfsmonitor = "touch %[1]s; false"\n' >> conf/real.cfg`, nil, []string{"shared.cfg", "conf/real.cfg"}},
	{"include.path target a link: re-pointed", includeLink,
		`printf '[core]\n\tfsmonitor = "touch %[1]s; false"\n' > evil.cfg; ln -sfn evil.cfg shared.cfg; rm -f shared.cfg; ln -s evil.cfg shared.cfg`,
		nil, []string{"shared.cfg"}},
}

func TestGitRoutesRunNothingTheAgentWrote(t *testing.T) {
	requireBwrap(t)
	for table, rows := range map[string][]gitRoute{"commands": commandRoutes, "hooks": hookRoutes, "links": linkRoutes} {
		for _, row := range rows {
			t.Run(table+"/"+row.name, func(t *testing.T) { runGitRoute(t, row) })
		}
	}
}

// runGitRoute runs one row: unprotected (the control), then confined.
func runGitRoute(t *testing.T, row gitRoute) {
	for _, protected := range []bool{false, true} {
		z := layoutFiles(t, false)
		// Zuno runs as the user: its look at git reads the user's global configuration.
		t.Setenv("HOME", z.base)
		t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(z.base, "gitconfig"))
		t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
		gitIn(t, z.ws, "commit", "-q", "--allow-empty", "-m", "first")
		row.setup(t, z.ws)
		marker := filepath.Join(z.base, "MARKER")
		sess := adsandbox.Session{Launcher: adsandbox.Native{}}
		if protected {
			sess = protectedSession(t, z, "")
			for _, w := range row.want {
				if !listsSpelled(sess.Protected, filepath.Join(z.ws, w), z.ws) {
					t.Errorf("the protections do not list %s: %s", w, describe(sess.Protected))
				}
			}
		}
		res := runIn(t, sess, z.ws, fmt.Sprintf(row.command, marker), gitEnv(z.base)...)
		for _, args := range append(row.user, []string{"status"}, []string{"add", "-A"}, []string{"commit", "-qm", "next"}) {
			userGit(z.ws, "protocol=https\nhost=example.com\n\n", args...)
		}
		_, err := os.Stat(marker)
		switch {
		case protected && err == nil:
			t.Errorf("the user's git ran code the agent planted (%q)", res.Output)
		case !protected && err != nil:
			t.Errorf("control: the plant does not work even unprotected, so the row proves nothing (%q)", res.Output)
		}
	}
}

// listsSpelled reports whether list protects p as the file tools check it: the path as
// spelled (its directory resolved, a final link kept), and where it leads.
func listsSpelled(list []adsandbox.Protection, p, ws string) bool {
	real := p
	if r, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		real = filepath.Join(r, filepath.Base(p))
	}
	rws, _ := filepath.EvalSymlinks(ws)
	return lists(list, real, rws)
}

func describe(list []adsandbox.Protection) string {
	var b strings.Builder
	for _, p := range list {
		fmt.Fprintf(&b, "\n  %s (%s)", p.Path, p.Source)
	}
	return b.String()
}

// A workspace that holds the home directory (the user works in ~): the user's git
// configuration files that do not exist yet cannot be made, since every git of the user
// would read them. Each plant first shown to run unprotected.
func TestGitUserConfigNotMadeYetInTheWorkspace(t *testing.T) {
	requireBwrap(t)
	for _, plant := range []string{
		`mkdir -p .config/git && printf '[core]\n\tfsmonitor = "touch %[1]s; false"\n' > .config/git/config`,
		`printf '[core]\n\tfsmonitor = "touch %[1]s; false"\n' > .gitconfig`,
	} {
		for _, protected := range []bool{false, true} {
			base := hostDir(t)
			home := filepath.Join(base, "home")
			userEnv := []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@example.com",
				"GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@example.com", "PATH=" + os.Getenv("PATH")}
			hostGit := func(args ...string) {
				cmd := exec.Command("git", args...)
				cmd.Env = userEnv
				cmd.Run()
			}
			hostGit("init", "-q", filepath.Join(home, "proj"))
			t.Setenv("HOME", home)
			t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			for _, v := range []string{"XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL"} {
				t.Setenv(v, "")
				os.Unsetenv(v)
			}
			sess := adsandbox.Session{Launcher: adsandbox.Native{}}
			if protected {
				sess = protectedSession(t, zunoFiles{base: base, ws: home}, "")
			}
			marker := filepath.Join(base, "MARKER")
			res := runIn(t, sess, home, fmt.Sprintf(plant, marker), userEnv...)
			hostGit("-C", filepath.Join(home, "proj"), "status")
			_, err := os.Stat(marker)
			switch {
			case protected && err == nil:
				t.Errorf("%s: the user's git ran code the agent planted (%q)", plant, res.Output)
			case !protected && err != nil:
				t.Errorf("%s: control: the plant does not work even unprotected (%q)", plant, res.Output)
			}
		}
	}
}
