package sandbox

import (
	"slices"
	"strings"
	"testing"
)

// What a command line git runs names (docs/sandbox.md, "What a command names"): one row per
// spelling. must are the paths protected even before they exist (the program, the script),
// may the ones protected when they exist.
func TestNamesOf(t *testing.T) {
	for _, row := range []struct {
		value       string
		must, may   []string
		not         []string // never named
		unread      bool
		gitArgsOnly bool
	}{
		{value: "sh scripts/x.sh", must: []string{"scripts/x.sh"}},
		// A cd or pushd moves what later relative paths name (review 25c): both the line's
		// own directory and the one moved to are read.
		{value: "cd tools && sh fsmon.sh", must: []string{"tools/fsmon.sh"}, may: []string{"fsmon.sh"}},
		{value: "(cd sub; sh pc.sh)", must: []string{"sub/pc.sh"}},
		{value: "pushd tools >/dev/null; sh e.sh; popd", must: []string{"tools/e.sh"}},
		{value: "cd a && cd b && sh x.sh", must: []string{"a/b/x.sh", "a/x.sh"}, may: []string{"x.sh"}},
		{value: `cd "$DIR" && sh x.sh`, must: []string{"x.sh"}, unread: true},
		// A glob runs whatever matches: the directory it matches in, whole.
		{value: `for f in tools/hooks.d/*.sh; do sh "$f"; done`, must: []string{"tools/hooks.d"}},
		{value: `sh scripts/pre-*.sh`, must: []string{"scripts"}},
		{value: `sh *.sh`, unread: true},
		// ${VAR:-default} names its default, as it does for the user's git.
		{value: `sh "${TOOLS:-tools}/e.sh"`, must: []string{"tools/e.sh"}},
		{value: `sh "${TOOLS-tools}/e.sh"`, must: []string{"tools/e.sh"}},
		// Review 25e: text run by eval and trap, env -C, a cd in a function defined before it,
		// a cd whose directory is known only by its tail, a cd that may fail, options of
		// wrappers that take a value, brace lists.
		{value: `eval "sh tools/x.sh"`, must: []string{"tools/x.sh"}},
		{value: `trap 'sh tools/x.sh' EXIT`, must: []string{"tools/x.sh"}},
		{value: `env -C tools sh x.sh`, must: []string{"tools/x.sh"}},
		{value: `env --chdir=tools sh x.sh`, must: []string{"tools/x.sh"}},
		{value: `env -vS 'sh tools/x.sh'`, must: []string{"tools/x.sh"}},
		{value: "run() { sh x.sh; }\ncd tools\nrun", must: []string{"tools/x.sh", "x.sh"}},
		{value: `cd "$(git rev-parse --show-toplevel)/tools" && sh check.sh`, must: []string{"tools/check.sh", "check.sh"}},
		{value: `cd tools 2>/dev/null; sh check.sh`, must: []string{"tools/check.sh", "check.sh"}},
		{value: `timeout -s KILL 5 sh tools/x.sh`, must: []string{"tools/x.sh"}},
		{value: `env -u HOME sh tools/x.sh`, must: []string{"tools/x.sh"}},
		{value: `setsid sh tools/x.sh`, must: []string{"tools/x.sh"}},
		{value: `for f in tools/{a,b}.sh; do sh "$f"; done`, may: []string{"tools/a.sh", "tools/b.sh"}},
		{value: `sh t*/x.sh`, may: []string{"t*/x.sh"}, unread: true},
		// env -S splits its string into a command line (review 25c).
		{value: `env -S "sh tools/envs.sh"`, must: []string{"tools/envs.sh"}},
		{value: `env --split-string="sh tools/envs.sh" x`, must: []string{"tools/envs.sh"}},
		{value: "!sh tools/x.sh arg", must: []string{"tools/x.sh"}, may: []string{"arg"}},
		{value: "scripts/fsmon.sh", must: []string{"scripts/fsmon.sh"}},
		{value: "./run --flag", must: []string{"./run"}},
		{value: `"./x y" a`, must: nil, may: []string{"./x y", "a"}},
		{value: `bash -c 'python3 tools/p.py'`, must: []string{"tools/p.py"}},
		{value: `sh -ec "node ./lint.js"`, must: []string{"./lint.js"}},
		{value: `sh -o pipefail tools/s.sh`, must: []string{"tools/s.sh"}},
		{value: `python3 -m tools.check`, may: []string{"tools.check", "tools/check.py", "tools/check"}},
		{value: `python3 -c 'import x' y.py`, may: []string{"y.py"}},
		{value: `perl -I lib tools/p.pl`, must: []string{"tools/p.pl"}, may: []string{"lib"}},
		{value: `env A=1 timeout 5 nice -n 3 ruby x.rb`, must: []string{"x.rb"}},
		{value: `env PATH=tools/bin:/usr/bin fsmon`, may: []string{"tools/bin", "fsmon"}},
		{value: `export PATH="scripts/bin:node_modules/.bin:$PATH"; lint-staged`, may: []string{"scripts/bin", "lint-staged"},
			not: []string{"node_modules/.bin"}},
		{value: `PATH=bin:$PATH fsmon`, may: []string{"bin", "fsmon"}},
		{value: `. ./env.sh && make`, must: []string{"./env.sh"}},
		{value: `source hooks/common`, must: []string{"hooks/common"}},
		{value: `sh "$(git rev-parse --show-toplevel)/scripts/x.sh"`, must: []string{"/scripts/x.sh"}},
		{value: `. "$(dirname "$0")/h"`, must: []string{"/h"}},
		{value: `difft --color=always`, may: []string{"always"}},
		{value: `store --file=.creds`, may: []string{".creds"}},
		{value: `git -c core.fsmonitor='sh tools/f.sh' status`, must: []string{"tools/f.sh"}},
		{value: `cat < input.txt`, may: []string{"input.txt"}},
		{value: `ssh -F tools/ssh_config`, may: []string{"tools/ssh_config"}},
		{value: `ARGS=(hook-impl --config=.pre-commit-config.yaml --hook-type=pre-commit)`, may: []string{".pre-commit-config.yaml"}},
		{value: `sh tools/f.sh || echo $((1+))`, must: []string{"tools/f.sh"}, unread: true},
		{value: `-c core.fsmonitor="sh tools/f.sh" -C sub --exec-path=bin --git-dir=g status x.txt`, gitArgsOnly: true,
			must: []string{"tools/f.sh", "sub/.git", "bin", "g"}},
		{value: `log --oneline src`, gitArgsOnly: true},
	} {
		names := namesOf(row.value)
		if row.gitArgsOnly {
			names = gitArgsNames(row.value)
		}
		var must, may []string
		for _, p := range names.paths {
			if p.must {
				must = append(must, p.path)
			} else {
				may = append(may, p.path)
			}
		}
		for _, w := range row.must {
			if !slices.Contains(must, w) {
				t.Errorf("%q: %s is not protected before it exists: must %q, may %q", row.value, w, must, may)
			}
		}
		for _, w := range row.may {
			if !slices.Contains(may, w) && !slices.Contains(must, w) {
				t.Errorf("%q: %s is not named: must %q, may %q", row.value, w, must, may)
			}
		}
		for _, w := range row.not {
			if slices.Contains(may, w) || slices.Contains(must, w) {
				t.Errorf("%q: %s is named: must %q, may %q", row.value, w, must, may)
			}
		}
		if row.must == nil && len(must) > 0 && !row.unread {
			t.Errorf("%q: %q would be covered before it exists, though nothing runs it", row.value, must)
		}
		if (len(names.unread) > 0) != row.unread {
			t.Errorf("%q: unread %q, want unread %v", row.value, names.unread, row.unread)
		}
		if row.gitArgsOnly && strings.Contains(row.value, "src") && len(names.paths) > 0 {
			t.Errorf("%q: a git alias's subcommand arguments are not git's places: %+v", row.value, names.paths)
		}
	}
}

// Keys git runs as commands, and keys it does not (git config's documentation).
func TestRunsCommand(t *testing.T) {
	for _, k := range []string{"core.fsmonitor", "core.editor", "core.pager", "core.sshcommand", "sequence.editor", "diff.x.textconv",
		"diff.x.command", "merge.x.driver", "filter.x.clean", "filter.x.smudge", "filter.x.process", "alias.x", "credential.helper",
		"credential.https://x.helper", "gpg.program", "gpg.ssh.program", "gpg.x509.program", "mergetool.x.cmd", "difftool.x.path",
		"pager.log", "core.askpass", "diff.external", "interactive.difffilter", "submodule.s.update", "remote.o.uploadpack",
		"gpg.ssh.defaultkeycommand", "sendemail.sendmailcmd", "core.gitproxy", "hook.lint.command"} {
		if !runsCommand(k) {
			t.Errorf("%s: git runs it, but it is not read as a command", k)
		}
	}
	for _, k := range []string{"user.name", "core.autocrlf", "remote.o.url", "branch.main.merge", "include.path"} {
		if runsCommand(k) {
			t.Errorf("%s: read as a command, but git does not run it", k)
		}
	}
}
