package risk_test

import (
	"testing"

	"github.com/zuno-run/zuno/domain/risk"
)

// Issue 25, vector 9: under danger-full-access each of these emptied HOME from a workspace at
// ~/proj, or was graded lower than what it does. The gate now knows the working directory
// (Env.Cwd) and Zuno's data directory (Env.Zuno). Every spelling of the issue is a row; the
// look-alikes below them must stay non-catastrophic.

const (
	project  = home + "/proj"
	zunoData = home + "/.local/share/zuno"
)

var workspaceEnv = risk.Env{Home: home, Cwd: project, Zuno: []string{zunoData}}

var homeAttacks = []row{
	// `..`-relative targets, resolved against the working directory.
	{name: "rm -rf ../* from ~/proj", command: `rm -rf ../*`, want: denied, program: "rm", target: home + "/*"},
	{name: "rm -rf .. from ~/proj", command: `rm -rf ..`, want: denied, target: home},
	{name: "rm -rf ../ from ~/proj", command: `rm -rf ../`, want: denied, target: home},
	{name: "rm -rf ../.ssh", command: `rm -rf ../.ssh`, want: denied, target: home + "/.ssh"},
	{name: "cd ..; rm -rf *", command: `cd ..; rm -rf *`, want: denied, target: home + "/*"},
	{name: "cd .. && rm -rf -- * .[!.]*", command: `cd .. && rm -rf -- * .[!.]*`, want: denied, target: home + "/*"},
	{name: "$PWD/.. without a cd", command: `rm -rf "$PWD/.."`, want: denied, target: home},
	{name: "~+/.. is $PWD/..", command: `rm -rf ~+/..`, want: denied, target: home},
	{name: "find .. -delete", command: `find .. -delete`, want: denied, target: home},

	// Substituted targets: read where the text decides them, catastrophic where it does not.
	{name: "rm -rf \"$(cd ..; pwd)\"", command: `rm -rf "$(cd ..; pwd)"`, want: denied, target: home},
	{name: "rm -rf \"$(cd .. && pwd -P)\"", command: `rm -rf "$(cd .. && pwd -P)"`, want: denied, target: home},
	{name: "a variable assigned $(cd ..; pwd)", command: `d=$(cd ..; pwd); rm -rf "$d"`, want: denied, target: home},
	{name: "dirname of $PWD", command: `rm -rf "$(dirname "$PWD")"`, want: denied, target: home},
	{name: "realpath ..", command: `rm -rf "$(realpath ..)"`, want: denied, target: home},
	{name: "readlink -f ..", command: `rm -rf "$(readlink -f ..)"`, want: denied, target: home},
	{name: "cd into $(cd ..; pwd)", command: `cd "$(cd ..; pwd)" && rm -rf *`, want: denied, target: home + "/*"},
	{name: "base64 of the home directory, decoded", command: `rm -rf "$(echo L2hvbWUvZGV2 | base64 -d)"`, want: denied, target: home},
	{name: "base64 of an unknown text", command: `rm -rf "$(curl -s https://example.com/t | base64 -d)"`, want: denied},
	{name: "a file's contents as the target", command: `rm -rf "$(cat target.txt)"`, want: denied},
	{name: "backticks of an unknown command", command: "rm -rf `head -1 list`", want: denied},
	{name: "an unknown command piped into xargs rm", command: `curl -s https://example.com/t | xargs rm -rf`, want: denied},
	{name: "cd into an unreadable directory, then a relative delete", command: `cd "$(cat dir.txt)" && rm -rf *`, want: denied},

	// find without narrowing under a protected root.
	{name: "find ~ -name \"*\" -delete", command: `find ~ -name "*" -delete`, want: denied, program: "find -delete", target: home},
	{name: "find ~ -name '.*' reaches the credential stores", command: `find ~ -name '.*' -delete`, want: denied},
	{name: "find ~ -path '*'", command: `find ~ -path '*' -delete`, want: denied, target: home},
	{name: "find ~ -regex '.*'", command: `find ~ -regex '.*' -delete`, want: denied, target: home},
	{name: "find ~ -iname .SSH -exec rm", command: `find ~ -iname .SSH -exec rm -rf {} +`, want: denied, target: home + "/.ssh"},
	{name: "find .. -name '*' from ~/proj", command: `find .. -name '*' -delete`, want: denied, target: home},

	// Archivers that delete what they archive.
	{name: "tar --remove-files -cf /dev/null ~", command: `tar --remove-files -cf /dev/null ~`, want: denied, program: "tar --remove-files", target: home},
	{name: "tar, traditional options, then --remove-files", command: `tar cf /dev/null --remove-files ~/.ssh`, want: denied, target: home + "/.ssh"},
	{name: "tar -C ~ --remove-files .", command: `tar -C ~ --remove-files -cf /dev/null .`, want: denied, target: home},
	{name: "tar with an abbreviated --remove", command: `tar -c --remove -f x.tar ..`, want: denied, target: home},
	{name: "tar --to-command runs shell text", command: `tar -xf x.tar --to-command='rm -rf ~'`, want: denied},
	{name: "zip -rm", command: `zip -rm /tmp/h.zip ~`, want: denied, program: "zip -m", target: home},
	{name: "zip -m of a key", command: `zip -m keys.zip ~/.ssh/id_ed25519`, want: denied, target: home + "/.ssh/id_ed25519"},
	{name: "zip --move", command: `zip --move -r h.zip ..`, want: denied, target: home},
	{name: "zip -TT runs a command", command: `zip -T -TT 'rm -rf ~;' x.zip a`, want: denied},
	{name: "7z -sdel", command: `7z a -sdel /tmp/h.7z ~`, want: denied, program: "7z -sdel", target: home},
	{name: "7za with -sdel after the files", command: `7za a h.7z ~/.aws -sdel`, want: denied, target: home + "/.aws"},

	// Working directories set by a wrapper.
	{name: "env -C ~ rm -rf -- *", command: `env -C ~ rm -rf -- *`, want: denied, target: home + "/*"},
	{name: "env --chdir=..", command: `env --chdir=.. rm -rf -- *`, want: denied, target: home + "/*"},
	{name: "sudo -D ~", command: `sudo -D ~ rm -rf *`, want: denied, target: home + "/*"},

	// git running configuration as shell text.
	{name: "git -c alias.x=\"!rm -rf ~\" x", command: `git -c alias.x="!rm -rf ~" x`, want: denied, program: "rm", target: home},
	{name: "git -c core.pager", command: `git -c core.pager='rm -rf ~' log`, want: denied, target: home},
	{name: "git -c core.sshCommand, any case", command: `git -c core.sshCommand="rm -rf ~" fetch`, want: denied, target: home},
	{name: "git config alias then call", command: `git config alias.x '!rm -rf ~' && git x`, want: denied, target: home},

	// Remote shells with a quoted command.
	{name: "ssh host 'rm -rf /'", command: `ssh host 'rm -rf /'`, want: denied, target: "/"},
	{name: "ssh with options, the remote home", command: `ssh -p 2222 -i key user@host "rm -rf ~"`, want: denied, target: home},
	{name: "ssh: a relative delete starts in the remote home", command: `ssh host 'rm -rf *'`, want: denied, target: home + "/*"},
	{name: "ssh -o ProxyCommand runs locally", command: `ssh -o ProxyCommand='rm -rf ~' host`, want: denied, target: home},
	{name: "sshpass then ssh", command: `sshpass -p pw ssh host 'rm -rf /etc'`, want: denied, target: "/etc"},
	{name: "mosh -- command", command: `mosh host -- rm -rf /`, want: denied, target: "/"},

	// Editors and interpreters given a command.
	{name: "vim -c '!rm -rf ~'", command: `vim -c '!rm -rf ~'`, want: denied, target: home},
	{name: "vim -c ':silent !…' -c q", command: `vim -c ':silent !rm -rf ~' -c q`, want: denied, target: home},
	{name: "vim +'r !…'", command: `vim +'r !rm -rf ~' +q`, want: denied, target: home},
	{name: "nvim call system()", command: `nvim --headless -c 'call system("rm -rf ~")' -c q`, want: denied, target: home},
	{name: "ex with a range filter", command: `ex -c '%!rm -rf ~' -c wq f`, want: denied, target: home},
	{name: "awk 'BEGIN{system(\"rm -rf ~\")}'", command: `awk 'BEGIN{system("rm -rf ~")}'`, want: denied, program: "rm", target: home},
	{name: "gawk system with ENVIRON[\"HOME\"]", command: `gawk 'BEGIN { system("rm -rf " ENVIRON["HOME"]) }'`, want: denied, target: home},
	{name: "awk print into a shell", command: `awk 'BEGIN{print "x" | "rm -rf ~"}'`, want: denied, target: home},
	{name: "awk system of a field", command: `awk '{system("rm -rf " $1)}' list`, want: denied},
	{name: "perl -e system", command: `perl -e 'system("rm -rf ~")'`, want: denied, target: home},
	{name: "perl -e backticks", command: "perl -e '`rm -rf ~`'", want: denied, target: home},
	{name: "perl rmtree $ENV{HOME}", command: `perl -MFile::Path -e 'rmtree($ENV{HOME})'`, want: denied, target: home},
	{name: "perl -pi on authorized_keys", command: `perl -pi -e 's/.*//' ~/.ssh/authorized_keys`, want: denied, program: "perl -i", target: home + "/.ssh/authorized_keys"},
	{name: "perl -i -pe on authorized_keys", command: `perl -i -pe 's/^/#/' ~/.ssh/authorized_keys`, want: denied},
	{name: "python -c os.system", command: `python3 -c 'import os; os.system("rm -rf ~")'`, want: denied, target: home},
	{name: "python -c shutil.rmtree(expanduser)", command: `python -c 'import shutil, os; shutil.rmtree(os.path.expanduser("~"))'`, want: denied, target: home},
	{name: "python -c subprocess with a list", command: `python3 -c 'import subprocess; subprocess.run(["rm", "-rf", "/"])'`, want: denied, target: "/"},
	{name: "ruby -e FileUtils.rm_rf(Dir.home)", command: `ruby -e 'require "fileutils"; FileUtils.rm_rf(Dir.home)'`, want: denied, target: home},
	{name: "node -e execSync", command: `node -e 'require("child_process").execSync("rm -rf ~")'`, want: denied, target: home},

	// Zuno's own data directory.
	{name: "rm -rf ~/.local/share/zuno", command: `rm -rf ~/.local/share/zuno`, want: denied, target: zunoData},
	{name: "the event log itself", command: `rm -f ~/.local/share/zuno/zuno.db`, want: denied, target: zunoData + "/zuno.db"},
	{name: "emptying the auth file", command: `: > ~/.local/share/zuno/auth.json`, want: denied},
	{name: "appending to the log's WAL", command: `echo x >> ~/.local/share/zuno/zuno.db-wal`, want: denied},
	{name: "overwriting the log", command: `cp /dev/null ~/.local/share/zuno/zuno.db`, want: denied},
	{name: "find -name zuno under ~/.local/share", command: `find ~/.local/share -name zuno -exec rm -rf {} +`, want: denied, target: zunoData},
	{name: "another session's artifacts", command: `rm -rf ../.local/share/zuno/artifacts/ses_other`, want: denied},

	// Look-alikes that stay non-catastrophic.
	{name: "rm -rf ./build", command: `rm -rf ./build`, want: asked},
	{name: "a sibling project", command: `rm -rf ../proj-old`, want: asked, target: "../proj-old"},
	{name: "back into the project", command: `rm -rf ../proj/build`, want: asked},
	{name: "cd .. then into another project", command: `cd ../other && rm -rf dist`, want: asked},
	{name: "find . -name '*.o' -delete", command: `find . -name '*.o' -delete`, want: asked},
	{name: "find . -name '*' -delete inside the project", command: `find . -name '*' -delete`, want: asked},
	{name: "find ~ -name '*.pyc' -delete", command: `find ~ -name '*.pyc' -delete`, want: asked},
	{name: "tar -cf x.tar src", command: `tar -cf x.tar src`, want: harmless},
	{name: "tar xzf deps.tgz -C build", command: `tar xzf deps.tgz -C build`, want: harmless},
	{name: "tar --remove-files of project logs", command: `tar --remove-files -czf logs.tgz logs`, want: asked},
	{name: "zip -r out.zip src", command: `zip -r out.zip src`, want: harmless},
	{name: "zip -m of build objects", command: `zip -m objs.zip build/a.o build/b.o`, want: asked},
	{name: "7z a out.7z src", command: `7z a out.7z src`, want: harmless},
	{name: "7z -sdel of a build directory", command: `7z a -sdel out.7z build`, want: asked},
	{name: "rm -rf a mktemp directory", command: `rm -rf "$(mktemp -d)"`, want: asked},
	{name: "a dated temporary directory", command: `rm -rf "/tmp/build-$(date +%s)"`, want: asked},
	{name: "rm of what find prints, narrowed", command: `rm -f $(find . -name '*.orig')`, want: asked},
	{name: "ls piped into xargs rm", command: `ls | xargs rm -f`, want: asked},
	{name: "find piped into xargs rm", command: `find . -name '*.tmp' | xargs rm -f`, want: asked},
	{name: "git ls-files into rm", command: `rm -f $(git ls-files --deleted)`, want: asked},
	{name: "$(pwd)/build", command: `rm -rf "$(pwd)/build"`, want: asked},
	{name: "docker rm of what docker prints: containers, not paths", command: `docker rm -f $(docker ps -aq)`, want: harmless},
	{name: "rm of a basename: one name, no climbing", command: `rm -f "$(basename "$f")"`, want: asked},
	{name: "node rmSync with an options object", command: `node -e 'require("fs").rmSync("dist", {recursive: true, force: true})'`, want: asked},
	{name: "python shutil.rmtree with ignore_errors", command: `python3 -c 'import shutil; shutil.rmtree("build", ignore_errors=True)'`, want: asked},
	{name: "a list of targets in a file is unreadable: name them", command: `cat files.txt | xargs rm -f`, want: denied},
	{name: "a tool's own answer is unreadable: name the path", command: `rm -rf "$(go env GOCACHE)"`, want: denied},
	{name: "ssh removing a remote cache", command: `ssh host 'rm -rf /tmp/cache'`, want: asked},
	{name: "ssh uptime", command: `ssh host uptime`, want: harmless},
	{name: "perl -i.bak keeps the original", command: `perl -i.bak -pe 's/a/b/' ~/.ssh/config`, want: harmless},
	{name: "perl -ne prints", command: `perl -ne 'print if /TODO/' main.go`, want: harmless},
	{name: "awk prints a column", command: `awk '{print $1}' access.log`, want: harmless},
	{name: "awk -F with a program", command: `awk -F: '{print $1}' /etc/passwd`, want: harmless},
	{name: "python -c prints", command: `python3 -c 'print(1)'`, want: harmless},
	{name: "vim -c with Ex edits and wq!", command: `vim -c 'set nu' -c '%s/a/b/g' -c 'wq!' main.go`, want: harmless},
	{name: "git -c with an ordinary key", command: `git -c color.ui=always log --oneline`, want: harmless},
	{name: "git -c alias of a subcommand", command: `git -c alias.st=status st`, want: harmless},
	{name: "env -C build make", command: `env -C build make`, want: harmless},
	{name: "cd .. && ls", command: `cd .. && ls`, want: harmless},
	{name: "echo $(pwd)", command: `echo "$(cd ..; pwd)"`, want: harmless},
}

func TestWorkingDirectoryAndHome(t *testing.T) {
	assessRows(t, homeAttacks, workspaceEnv)
}

// Zuno's data directory where XDG_DATA_HOME puts it: the directory, what is in it and the
// directories above it.
func TestZunoDataDirectoryAnywhere(t *testing.T) {
	env := risk.Env{Home: home, Cwd: project, Zuno: []string{"/srv/data/zuno"}}
	for _, c := range []string{`rm -rf /srv/data/zuno`, `rm -rf /srv/data`, `rm /srv/data/zuno/auth.json`, `shred -u /srv/data/zuno/zuno.db`} {
		if v := risk.Assess(c, env); v.Level != risk.Catastrophic {
			t.Errorf("%q: %+v, want catastrophic", c, v)
		}
	}
	if v := risk.Assess(`rm -rf /srv/data-old`, env); v.Level != risk.Destructive {
		t.Errorf("a sibling of the data directory: %+v, want destructive", v)
	}
}

// Without a working directory (Env.Cwd empty) relative paths stay ordinary, as before.
func TestUnknownWorkingDirectory(t *testing.T) {
	if v := risk.Assess(`rm -rf ../*`, risk.Env{Home: home}); v.Level != risk.Destructive {
		t.Errorf("rm -rf ../* with no working directory: %+v, want destructive", v)
	}
}

// Everyday commands stay safe when the gate knows the working directory: reading from `..`,
// archiving, remote commands and interpreters that delete nothing.
func TestEverydayCommandsInAWorkspaceAreSafe(t *testing.T) {
	for _, c := range []string{
		`cd .. && ls && cd proj`,
		`ls ../other && cat ../other/README.md`,
		`tar -czf ../backup.tgz . && zip -qr out.zip dist`,
		`7z x deps.7z -obuild`,
		`echo "$(pwd)" "$(dirname "$PWD")"`,
		`ssh build-host 'cd app && make test'`,
		`git -c user.name=bot -c user.email=bot@example.com commit -m wip`,
		`python3 -m pytest -q && python3 -c 'import sys; print(sys.version)'`,
		`perl -ne 'print if /TODO/' src/*.go`,
		`awk -F, '{s+=$2} END {print s}' data.csv`,
		`vim -es -c '%s/foo/bar/g' -c 'wq' main.go`,
		`node -e 'console.log(process.version)'`,
		`env -C build cmake ..`,
		`find . -name '*.go' -newer go.mod`,
	} {
		if v := risk.Assess(c, workspaceEnv); v.Level != risk.Safe {
			t.Errorf("%q: %+v, want safe", c, v)
		}
	}
}

// More spellings through editors and interpreters, read as the language runs them.
func TestInterpreterSpellings(t *testing.T) {
	for _, c := range []string{
		`vim -c 'exe "!rm -rf ~"'`,
		`python3 -c 'import os; os.system("rm -rf $HOME")'`,
		`python3 -c "import os; os.remove(os.path.expanduser('~/.ssh/id_ed25519'))"`,
		`python3 -c 'import subprocess; subprocess.run("rm -rf ~", shell=True)'`,
		`python3 -c "__import__('os').system('rm -rf ~')"`,
		`perl -e 'system "rm", "-rf", $ENV{HOME}'`,
		`perl -e 'unlink glob("~/.ssh/*")'`,
		`node -e 'require("child_process").spawnSync("rm", ["-rf", require("os").homedir()])'`,
		`ruby -e 'system("rm -rf ~")'`,
		`php -r 'shell_exec("rm -rf ~");'`,
		`awk 'BEGIN{"rm -rf ~" | getline x}'`,
	} {
		if v := risk.Assess(c, workspaceEnv); v.Level != risk.Catastrophic {
			t.Errorf("%q: %+v, want catastrophic", c, v)
		}
	}
	for _, c := range []string{
		`python3 -c 'import re; print(re.compile("x").match("x"))'`,
		`node -e 'console.log(/a/.exec("a"))'`,
		`python3 -c 'exec("print(1)")'`,
	} {
		if v := risk.Assess(c, workspaceEnv); v.Level != risk.Safe {
			t.Errorf("%q: %+v, want safe", c, v)
		}
	}
}

func TestInterpreterQuotedParenthesis(t *testing.T) {
	if v := risk.Assess(`perl -e 'system("echo a) ; rm -rf ~")'`, workspaceEnv); v.Level != risk.Catastrophic {
		t.Errorf("a ) inside the string: %+v", v)
	}
}

// Routes around the rows above that the table of attacks grew by while they were written.
func TestMoreRoutesAroundTheHome(t *testing.T) {
	for _, c := range []string{
		`rsync -a --remove-source-files ~/ /backup/`,
		`GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!rm -rf ~' git x`,
		`(cd .. && rm -rf *)`,
		`rm -rf "$(cd ..; echo "$PWD")"`,
		`pushd .. && rm -rf -- *`,
		`find ~/ -mindepth 1 -delete`,
		`truncate -s 0 "$(cat victim.txt)"`,
	} {
		if v := risk.Assess(c, workspaceEnv); v.Level != risk.Catastrophic {
			t.Errorf("%q: %+v, want catastrophic", c, v)
		}
	}
	for _, c := range []string{
		`(cd /; ls); rm -rf build`, // a subshell's cd does not move what follows
		`rsync -a --remove-source-files out/ /backup/`,
	} {
		if v := risk.Assess(c, workspaceEnv); v.Level != risk.Destructive {
			t.Errorf("%q: %+v, want destructive", c, v)
		}
	}
}

func TestPrintedGlobsAndForcedWrites(t *testing.T) {
	if v := risk.Assess(`rm -rf "$(ls -d ~/*)"`, workspaceEnv); v.Level != risk.Catastrophic {
		t.Errorf("the names ls -d prints from ~/*: %+v", v)
	}
	if v := risk.Assess(`vim -c 'w! /tmp/copy' -c q main.go`, workspaceEnv); v.Level != risk.Safe {
		t.Errorf(":w! is a forced write, not a shell: %+v", v)
	}
}

// Variations of each route: spellings of cd, find feeding rm, tar's long options, ssh's --,
// the editors' and interpreters' option clusters, perl's q(), Zuno's data by glob or move.
func TestVariationsOfEachRoute(t *testing.T) {
	for _, c := range []string{
		`rm -rf ${PWD%/*}`,
		`rm -rf "${PWD%/proj}"`,
		`p=$PWD; rm -rf "${p%/*}"`,
		`rm -rf "$(cd ../; pwd)/"`,
		`cd ../ ; rm -rf ./*`,
		`cd -P .. && rm -rf *`,
		`cd "$HOME/proj/.." && rm -rf *`,
		`rm -rf "$(cd -- ..; pwd)"`,
		`rm -rf "$(cd .. >/dev/null 2>&1 && pwd)"`,
		`rm -rf "$(builtin cd ..; pwd)"`,
		`rm -rf "$(command cd ..; pwd)"`,
		`find ~ -name '*' -print0 | xargs -0 rm -rf`,
		`find ~ -maxdepth 1 | xargs rm -rf`,
		`rm -rf $(find ~ -maxdepth 1)`,
		`tar -c --remove-files -f /dev/null -C .. proj ../.ssh`,
		`tar --create --file=/dev/null --remove-files ~`,
		`7z a -sdel -- x.7z ~`,
		`zip -r -m x.zip ~/.ssh`,
		`ssh host -- rm -rf /`,
		`ssh -t host 'sudo rm -rf /'`,
		`vim -c ':!rm -rf ~'`,
		`view -c '!rm -rf ~'`,
		`awk 'BEGIN{system("rm -rf ~")}' /dev/null`,
		`awk -v x=1 'BEGIN { system("rm -rf ~") }'`,
		`python3 -c "import os;os.system('rm -rf ~')"`,
		`python3 -Sc 'import os; os.system("rm -rf ~")'`,
		`perl -le 'system("rm -rf ~")'`,
		`perl -MFile::Path=remove_tree -e 'remove_tree($ENV{"HOME"})'`,
		`git -c 'alias.x=!sh -c "rm -rf ~"' x`,
		`git -c core.fsmonitor='rm -rf ~' status`,
		`env --chdir ~ rm -rf -- *`,
		`env -i -C ~ sh -c 'rm -rf *'`,
		`env -C ~ find . -delete`,
		`sudo --chdir="$HOME" rm -rf *`, `perl -l0e "system(q(rm -rf ~))"`,
		`rm -rf ~/.local/share/zuno/`,
		`rm -rf ~/.local/share/zun*`,
		`mv ~/.local/share/zuno /tmp/x`,
		`shred -u ~/.local/share/zuno/auth.json`,
	} {
		if v := risk.Assess(c, workspaceEnv); v.Level != risk.Catastrophic {
			t.Errorf("%q: %+v, want catastrophic", c, v)
		}
	}
}
