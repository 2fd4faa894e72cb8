package risk_test

import (
	"testing"

	"github.com/zuno-run/zuno/domain/risk"
)

// The second attacker review of issue 25 (the RISK GATE section): under danger-full-access,
// with a scratch HOME and the workspace at ~/proj, each spelling below emptied HOME or wrote
// into ~/.ssh while the gate graded it below catastrophic. The gate now models each
// mechanism (docs/risk.md): a deleter fed targets it cannot read (a file, a descriptor, what
// a command prints), a path through an open descriptor, git clean in a directory that is the
// home or above it, the deleters trash, gio and rimraf, interpreter code that builds the name
// of what it calls or writes and moves files, and Zuno's data directory spelled through
// $XDG_DATA_HOME. Each row is one spelling in the three modes; the look-alikes after them
// (node -e and perl -e printing the home directory above all) must keep their level.

var reviewBAttacks = []row{
	// Indirection through a file: a deleter fed its targets from a file, a descriptor or the
	// shell's redirected standard input cannot have them read, so it is refused.
	{name: "xargs rm fed from a file on standard input", command: `echo $HOME > L; xargs rm -rf < L`, want: denied, program: "rm", target: "…"},
	{name: "xargs -a FILE", command: `echo $HOME > L; xargs -a L rm -rf`, want: denied, program: "rm"},
	{name: "xargs with 0< FILE", command: `xargs rm -rf 0< L`, want: denied},
	{name: "xargs reading a duplicated descriptor", command: `exec 3<L; xargs rm -rf <&3`, want: denied},
	{name: "exec < FILE redirects every later command's input", command: `exec < L; xargs rm -rf`, want: denied},
	{name: "exec 0<FILE, then a read loop", command: `exec 0<L; while read d; do rm -rf "$d"; done`, want: denied},
	{name: "readarray from a file", command: `readarray -t a < L; rm -rf "${a[@]}"`, want: denied},
	{name: "parallel -a FILE", command: `parallel -a L rm -rf`, want: denied},
	{name: "parallel :::: FILE", command: `parallel rm -rf :::: L`, want: denied},
	{name: "find -files0-from FILE -delete", command: `find -files0-from L -delete`, want: denied, program: "find -delete"},
	{name: "zip -m -@ names from a file", command: `zip -m -@ x.zip < L`, want: denied},
	{name: "rsync --files-from with --remove-source-files", command: `rsync -a --remove-source-files --files-from=L ./ /backup/`, want: denied},

	// File descriptors: a path through /dev/fd/N or /dev/stdin is whatever the descriptor is
	// open on, which the gate cannot read.
	{name: "rm -rf through /dev/fd/3", command: `exec 3<~; rm -rf /dev/fd/3/`, want: denied, program: "rm", target: "…"},
	{name: "rm -rf through /dev/stdin", command: `rm -rf /dev/stdin/ < ~`, want: denied, program: "rm"},
	{name: "rm -rf of what /dev/fd/0 holds", command: `rm -rf /dev/fd/0/* < ~`, want: denied},
	{name: "rm -rf below /dev/stderr", command: `rm -rf /dev/stderr/.ssh 2<~`, want: denied},
	{name: "cd into /dev/fd/3, then a relative delete", command: `exec 3<~; cd /dev/fd/3 && rm -rf -- * .[!.]*`, want: denied},
	{name: "find through /dev/fd/3", command: `find /dev/fd/3/ -delete 3<~`, want: denied},
	{name: "a link to /dev/fd/3, then through it", command: `ln -s /dev/fd/3 h; rm -rf h/ 3<~`, want: denied},
	{name: "a file's contents as $(< FILE)", command: `rm -rf $(< L)`, want: denied},
	{name: "tar --remove-files -T - from a file", command: `tar --remove-files -cf x.tar -T - < L`, want: denied},
	{name: "find -H through /dev/fd/3 as a start", command: `find -H /dev/fd/3 -delete 3<~`, want: denied},
	{name: "find -L through /dev/stdin as a start", command: `find -L /dev/stdin -delete < ~`, want: denied},
	{name: "a block reading a file", command: `{ xargs rm -rf; } < L`, want: denied},
	{name: "realpath of /dev/fd/3", command: `exec 3<~; rm -rf "$(realpath /dev/fd/3)"`, want: denied},
	{name: "pwd -P after cd /dev/fd/3", command: `exec 3<~; rm -rf "$(cd /dev/fd/3 && pwd -P)"`, want: denied},
	{name: "sh -c reading a file on its standard input", command: `sh -c 'xargs rm -rf' < L`, want: denied},
	{name: "a function reading a file on its standard input", command: `f() { xargs rm -rf; }; f < L`, want: denied},
	{name: "eval reading a file on its standard input", command: `eval 'xargs rm -rf' < L`, want: denied},
	{name: "python's system() reading a file on its standard input", command: `python3 -c 'import os; os.system("xargs rm -rf")' < L`, want: denied},
	{name: "through /proc/self/fd", command: `rm -rf /proc/self/fd/3/ 3<~`, want: denied},

	// git as a deleter: git clean in a directory that is the home directory or above it.
	{name: "git init in ~, then git clean -ffdx", command: `cd ~ && git init && git clean -ffdx`, want: denied, program: "git clean", target: home},
	{name: "git -C .. clean -ffdx from ~/proj", command: `git -C .. clean -ffdx`, want: denied, program: "git clean", target: home},
	{name: "git -C ~ clean -fd", command: `git -C ~ clean -fd`, want: denied, target: home},
	{name: "git -C nested: -C .. -C ..", command: `git -C .. -C .. clean -f`, want: denied, target: "/home"},
	{name: "git --work-tree=$HOME clean -fx", command: `git --work-tree="$HOME" --git-dir=.git clean -fx`, want: denied, target: home},
	{name: "git clean in a subshell that cd'd up", command: `(cd .. && git clean -fdx)`, want: denied, target: home},
	{name: "env -C ~ git clean", command: `env -C ~ git clean -fdx`, want: denied, target: home},
	{name: "git clean without -f when requireForce is off", command: `git -c clean.requireForce=false -C .. clean -dx`, want: denied, target: home},
	{name: "git clean when GIT_CONFIG_KEY_0 turns requireForce off", command: `cd ~ && GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=clean.requireForce GIT_CONFIG_VALUE_0=false git clean -dx`, want: denied, target: home},
	{name: "git config clean.requireForce false, then git clean", command: `cd .. && git config clean.requireForce false && git clean -dx`, want: denied, target: home},
	{name: "git clean -i (interactive) in ~", command: `cd ~ && git clean -id <<< c`, want: denied},
	{name: "git clean with a pathspec in ~", command: `cd ~ && git clean -fdx -- .ssh`, want: denied, target: home + "/.ssh"},
	{name: "a git alias of clean", command: `git -c alias.c='clean -fdx' -C .. c`, want: denied, program: "git clean", target: home},
	{name: "git clean in $GIT_WORK_TREE", command: `GIT_WORK_TREE=.. git clean -fdx`, want: denied, target: home},
	{name: "git rm of everything tracked in ~", command: `cd ~ && git init -q && git add -A && git commit -qm x && git rm -rq .`, want: denied, program: "git rm", target: home},
	{name: "git rm with pathspecs from a file", command: `git rm -r --pathspec-from-file=L`, want: denied},
	{name: "git stash -u in ~ moves its files away", command: `cd ~ && git init -q && git commit -q --allow-empty -m x && git stash -u`, want: denied, program: "git stash -u", target: home},
	{name: "git -C .. stash --all", command: `git -C .. stash --all`, want: denied},
	{name: "git clean in an unreadable directory", command: `git -C "$(cat d)" clean -fdx`, want: denied},

	// Glob output fed to a deleter: what echo prints of a glob is every name it matches.
	{name: "echo ~/* piped into xargs rm", command: `echo ~/* | xargs rm -rf`, want: denied, program: "rm", target: home + "/*"},
	{name: "printf of ~/.* piped into xargs rm", command: `printf '%s\n' ~/.* | xargs rm -rf`, want: denied, target: home + "/*"},
	{name: "echo ../* piped into xargs rm", command: `echo ../* | xargs rm -rf`, want: denied, target: home + "/*"},
	{name: "echo ~/* as a substitution", command: `rm -rf $(echo ~/*)`, want: denied, target: home + "/*"},
	{name: "a for loop over ~/*", command: `for f in ~/*; do rm -rf "$f"; done`, want: denied},

	// Other deleters: trash, gio and rimraf.
	{name: "gio trash ~", command: `gio trash ~`, want: denied, program: "gio trash", target: home},
	{name: "gio remove ~", command: `gio remove ~`, want: denied, program: "gio remove", target: home},
	{name: "gio trash of a file:// URI", command: `gio trash "file://$HOME"`, want: denied, target: home},
	{name: "gio remove -f through an option", command: `gio remove -f ~/.ssh`, want: denied, target: home + "/.ssh"},
	{name: "gio move of the credentials", command: `gio move ~/.ssh /tmp/x`, want: denied, target: home + "/.ssh"},
	{name: "trash-put ~", command: `trash-put ~`, want: denied, program: "trash-put", target: home},
	{name: "trash ..", command: `trash ..`, want: denied, target: home},
	{name: "rimraf ~", command: `rimraf ~`, want: denied, program: "rimraf", target: home},
	{name: "npx rimraf ~", command: `npx rimraf ~`, want: denied, program: "rimraf", target: home},
	{name: "npx --yes rimraf ..", command: `npx --yes rimraf ..`, want: denied, target: home},
	{name: "pnpm dlx rimraf ~", command: `pnpm dlx rimraf ~`, want: denied},
	{name: "rimraf of an unreadable target", command: `rimraf "$(cat t)"`, want: denied},

	// Interpreters: names built at run time, writes through open(), moves.
	{name: "python getattr with a concatenated name", command: `python3 -c 'import shutil; getattr(shutil,"rm"+"tree")("..")'`, want: denied, program: "python3", target: home},
	{name: "python getattr, single quotes", command: `python3 -c "import shutil; getattr(shutil,'rm'+'tree')('..')"`, want: denied, target: home},
	{name: "python getattr with a computed name", command: `python3 -c 'import shutil; m = "rm" + "tree"; getattr(shutil, m)(".")'`, want: denied, program: "python3"},
	{name: "python getattr with a name from input", command: `python3 -c 'import os; getattr(os, input())("x")'`, want: denied},
	{name: "python exec of a concatenated program", command: `python3 -c 'exec("import shutil; shutil.rmt"+"ree(\"..\")")'`, want: denied, target: home},
	{name: "python exec of code it reads", command: `python3 -c 'exec(input())'`, want: denied},
	{name: "python __import__ of a computed module", command: `python3 -c 'm = "sh" + "util"; __import__(m).rmtree(".")'`, want: denied},
	{name: "python subprocess under another name", command: `python3 -c 'import subprocess as s; s.run(["rm","-rf",".."])'`, want: denied, target: home},
	{name: "python run imported from subprocess", command: `python3 -c 'from subprocess import run; run(["rm","-rf",".."])'`, want: denied, target: home},
	{name: "python call from subprocess import *", command: `python3 -c 'from subprocess import *; call("rm -rf ..", shell=True)'`, want: denied, target: home},
	{name: "python open(…, \"w\") on authorized_keys", command: `python3 -c 'open("../.ssh/authorized_keys","w")'`, want: denied, program: "python3", target: home + "/.ssh/authorized_keys"},
	{name: "python open(…, \"w\").write", command: `python3 -c 'open("../.ssh/authorized_keys","w").write("ssh-ed25519 AAAA k")'`, want: denied, target: home + "/.ssh/authorized_keys"},
	{name: "python open with mode=", command: `python3 -c 'open(mode="w", file="../.ssh/config")'`, want: denied},
	{name: "python Path.write_text", command: `python3 -c 'import pathlib; pathlib.Path("../.ssh/authorized_keys").write_text("k")'`, want: denied},
	{name: "python os.rename of ~/.ssh", command: `python3 -c 'import os; os.rename(os.path.expanduser("~/.ssh"), "/tmp/x")'`, want: denied, program: "python3", target: home + "/.ssh"},
	{name: "python shutil.move of ../.ssh", command: `python3 -c 'import shutil; shutil.move("../.ssh", "/tmp/x")'`, want: denied, target: home + "/.ssh"},
	{name: "python os.replace onto authorized_keys", command: `python3 -c 'import os; os.replace("k", os.path.expanduser("~/.ssh/authorized_keys"))'`, want: denied},
	{name: "node fs[…] with a concatenated name", command: `node -e 'require("fs")["rm"+"Sync"]("..", {recursive: true})'`, want: denied, target: home},
	{name: "node fs[k] with a computed name", command: `node -e 'const fs=require("fs"); const k=process.argv[1]; fs[k](".",{recursive:true})' rmSync`, want: denied},
	{name: "node writeFileSync onto authorized_keys", command: `node -e 'require("fs").writeFileSync(require("os").homedir()+"/.ssh/authorized_keys", "k")'`, want: denied, target: home + "/.ssh/authorized_keys"},
	{name: "node renameSync of ~/.ssh", command: `node -e 'require("fs").renameSync(require("os").homedir()+"/.ssh", "/tmp/x")'`, want: denied},
	{name: "node eval of a concatenated program", command: `node -e 'eval("require(\"fs\").rmS"+"ync(\"..\",{recursive:true})")'`, want: denied},
	{name: "perl open for writing", command: `perl -e 'open(my $f, ">", "../.ssh/authorized_keys")'`, want: denied, target: home + "/.ssh/authorized_keys"},
	{name: "perl two-argument open for writing", command: `perl -e 'open(F, ">../.ssh/authorized_keys")'`, want: denied},
	{name: "perl rename of ~/.ssh", command: `perl -e 'rename("$ENV{HOME}/.ssh", "/tmp/x")'`, want: denied},
	{name: "perl eval of a string", command: `perl -e 'eval "sys"."tem(q(rm -rf ~))"'`, want: denied},
	{name: "perl call through a symbolic reference", command: `perl -e 'my $f = "CORE::GLOBAL::un"."link"; &$f("../.ssh/id")'`, want: denied},
	{name: "ruby File.write onto authorized_keys", command: `ruby -e 'File.write(Dir.home + "/.ssh/authorized_keys", "k")'`, want: denied},
	{name: "ruby send with a concatenated name", command: `ruby -e 'require "fileutils"; FileUtils.send("rm_" + "rf", "..")'`, want: denied, target: home},
	{name: "php file_put_contents onto authorized_keys", command: `php -r 'file_put_contents(getenv("HOME") . "/.ssh/authorized_keys", "k");'`, want: denied},

	{name: "python chdir to os.pardir, then rmtree(\".\")", command: `python3 -c 'import os,shutil; os.chdir(os.pardir); shutil.rmtree(".")'`, want: denied, target: home},
	{name: "python chdir to a computed directory, then a relative delete", command: `python3 -c 'import os,shutil,sys; os.chdir(sys.argv[1]); shutil.rmtree("x")' d`, want: denied},
	{name: "node chdir .., then a relative delete", command: `node -e 'process.chdir(".."); require("fs").rmSync("x", {recursive: true})'`, want: denied},
	{name: "perl chdir with no argument goes home", command: `perl -e 'chdir; unlink glob("*")'`, want: denied},
	{name: "node rimraf by require", command: `node -e 'require("rimraf").sync("..")'`, want: denied, target: home},

	// Code that names a protected location or a .. path must be proven harmless: every call
	// one the gate knows to read or print.
	{name: "node: a function found by a reflective search, called on ..", command: `node -e 'Object.values(require("fs")).find(f => f.name.startsWith("rmS"))("..", {recursive: true})'`, want: denied, program: "node"},
	{name: "node: filter(…)[0] called on process.cwd()/..", command: `node -e 'Object.values(require("fs")).filter(f => f.name.startsWith("rmS"))[0](process.cwd() + "/..", {recursive: true})'`, want: denied},
	{name: "node: a computed call on dirname(process.cwd()), naming nothing", command: `node -e 'const p = require("path"); Object.values(require("fs")).filter(f => f.name.startsWith("rmS"))[0](p.dirname(process.cwd()), {recursive: true})'`, want: denied},
	{name: "node: the comma trick (0, fs.rmSync)(…)", command: `node -e 'const fs = require("fs"); (0, fs.rmSync)(require("path").dirname(process.cwd()), {recursive: true})'`, want: denied},
	{name: "python: a function got by a literal name from vars(), called", command: `python3 -c 'import shutil, os; vars(shutil).get("rm" + "tree")(os.path.dirname(os.getcwd()))'`, want: denied},
	{name: "node: a .. path joined to __dirname, a computed call", command: `node -e 'const t = require("path").join(__dirname, ".."); Object.values(require("fs")).filter(f => f.name.startsWith("rmS"))[0](t, {recursive: true})'`, want: denied},
	{name: "python: a comprehension's function called on ~", command: `python3 -c 'import shutil; [f for n, f in vars(shutil).items() if n.endswith("tree")][0](__import__("os").path.expanduser("~"))'`, want: denied},
	{name: "ruby remove_entry without parentheses", command: `ruby -e 'require "fileutils"; FileUtils.remove_entry Dir.home'`, want: denied, target: home},
	{name: "perl through a code reference", command: `perl -e 'my $f = \&CORE::unlink; $f->("$ENV{HOME}/.ssh/id")'`, want: denied},
	{name: "an unknown library given the home directory", command: `python3 -c 'import sys, somelib; somelib.clean(sys.argv[1])' ~`, want: denied, target: home},

	// Zuno's own data directory spelled through the environment.
	{name: "rm -rf $XDG_DATA_HOME/zuno", command: `rm -rf "$XDG_DATA_HOME/zuno"`, want: denied, program: "rm", target: zunoData},
	{name: "rm -rf ${XDG_DATA_HOME:-…}/zuno", command: `rm -rf "${XDG_DATA_HOME:-$HOME/.local/share}/zuno"`, want: denied, target: zunoData},
	{name: "rm -rf $XDG_DATA_HOME", command: `rm -rf "$XDG_DATA_HOME"`, want: denied},
	{name: "sqlite3 on $XDG_DATA_HOME/zuno/zuno.db", command: `sqlite3 "$XDG_DATA_HOME/zuno/zuno.db" 'delete from event_log'`, want: denied},
	{name: "a redirect into $XDG_DATA_HOME/zuno", command: `echo '{}' > "$XDG_DATA_HOME/zuno/auth.json"`, want: denied},
	{name: "python rmtree of environ XDG_DATA_HOME", command: `python3 -c 'import os,shutil; shutil.rmtree(os.environ["XDG_DATA_HOME"] + "/zuno")'`, want: denied, target: zunoData},
	{name: "python rmtree of os.path.join(XDG_DATA_HOME, zuno)", command: `python3 -c 'import os,shutil; shutil.rmtree(os.path.join(os.environ["XDG_DATA_HOME"], "zuno"))'`, want: denied},
	{name: "node rmSync of process.env.XDG_DATA_HOME", command: `node -e 'require("fs").rmSync(process.env.XDG_DATA_HOME + "/zuno", {recursive: true})'`, want: denied},
	{name: "rm -rf $XDG_CONFIG_HOME", command: `rm -rf "$XDG_CONFIG_HOME"`, want: denied},
	{name: "rm -rf $XDG_STATE_HOME/..", command: `rm -rf "$XDG_STATE_HOME/.."`, want: denied},

	// False positives of the first round, and look-alikes that keep their level.
	{name: "node -e printing the home directory", command: `node -e 'console.log(require("os").homedir())'`, want: harmless},
	{name: "node -p printing the home directory", command: `node -p 'require("os").homedir()'`, want: harmless},
	{name: "node -e printing HOME", command: `node -e 'console.log("home:", process.env.HOME)'`, want: harmless},
	{name: "node -e resolving ..", command: `node -e 'console.log(require("path").resolve(".."))'`, want: harmless},
	{name: "perl -e printing HOME", command: `perl -e 'print $ENV{HOME}'`, want: harmless},
	{name: "perl -le printing HOME in a string", command: `perl -le 'print "home is $ENV{HOME}"'`, want: harmless},
	{name: "perl eval block", command: `perl -e 'eval { die "x\n" }; print "ok $ENV{HOME}\n"'`, want: harmless},
	{name: "python printing expanduser", command: `python3 -c 'import os; print(os.path.expanduser("~"), os.getcwd())'`, want: harmless},
	{name: "python getattr of a literal attribute", command: `python3 -c 'import sys; print(getattr(sys, "version"))'`, want: harmless},
	{name: "python reading ../notes.txt", command: `python3 -c 'print(open("../notes.txt").read())'`, want: harmless},
	{name: "python counting the home's entries", command: `python3 -c 'import os; print(len(os.listdir(os.path.expanduser("~"))))'`, want: harmless},
	{name: "python joining a path under the home", command: `python3 -c 'import os; print(os.path.join(os.path.expanduser("~"), ".cache"))'`, want: harmless},
	{name: "python abspath of ..", command: `python3 -c 'import os; print(os.path.abspath(".."))'`, want: harmless},
	{name: "node listing the home", command: `node -e 'console.log(require("fs").readdirSync(require("os").homedir()).length)'`, want: harmless},
	{name: "node: an async function called at once", command: `node -e '(async () => { console.log(require("os").homedir()) })()'`, want: harmless},
	{name: "node with its own function", command: `node -e 'function f(x) { return x + "/" } console.log(f(require("os").homedir()))'`, want: harmless},
	{name: "node reading ~/.npmrc", command: `node -e 'console.log(require("fs").readFileSync(require("os").homedir() + "/.npmrc", "utf8").length)'`, want: harmless},
	{name: "perl listing the home", command: `perl -e 'opendir(my $d, $ENV{HOME}) or die; print join("\n", readdir($d))'`, want: harmless},
	{name: "ruby listing the home", command: `ruby -e 'Dir.children(Dir.home).each { |c| puts c }'`, want: harmless},
	{name: "lua printing HOME", command: `lua -e 'print(os.getenv("HOME"))'`, want: harmless},
	{name: "php printing HOME", command: `php -r 'echo getenv("HOME");'`, want: harmless},
	{name: "an unknown library on a workspace file", command: `python3 -c 'import yaml; print(yaml.safe_load(open("config.yml")))'`, want: harmless},
	{name: "python listing the parent after a chdir", command: `python3 -c 'import os; os.chdir(".."); print(os.listdir("."))'`, want: harmless},
	{name: "python re.compile of a variable", command: `python3 -c 'import re,sys; print(re.compile(sys.argv[1]).pattern)' x`, want: harmless},
	{name: "python eval of a literal", command: `python3 -c 'print(eval("1+2"))'`, want: harmless},
	{name: "a git alias of status", command: `git -c alias.s='status -sb' -C .. s`, want: harmless},
	{name: "python writing a workspace file", command: `python3 -c 'open("out.txt", "w").write("x")'`, want: harmless},
	{name: "python moving a workspace file", command: `python3 -c 'import shutil; shutil.move("a.txt", "b.txt")'`, want: harmless},
	{name: "ruby reading the home's .bashrc", command: `ruby -e 'puts File.read(Dir.home + "/.bashrc")'`, want: harmless},
	{name: "node reading a key by literal member", command: `node -e 'const o = {a: 1}; console.log(o["a"])'`, want: harmless},
	{name: "xargs with input from /dev/null", command: `xargs rm -f < /dev/null`, want: asked},
	{name: "xargs grep of listed files", command: `xargs grep TODO < files.txt`, want: harmless},
	{name: "python script with input from a file", command: `python3 script.py < input.txt`, want: harmless},
	{name: "bash running a script on its standard input", command: `bash < install.sh`, want: harmless},
	{name: "writing to /dev/stderr", command: `echo oops > /dev/stderr`, want: harmless},
	{name: "diff of two process substitutions", command: `diff <(sort a) <(sort b)`, want: harmless},
	{name: "git clean in the workspace", command: `git clean -fdx`, want: asked},
	{name: "git clean of a build directory", command: `git clean -fdx build/`, want: asked},
	{name: "git clean -n from .. is a dry run", command: `git -C .. clean -ndx`, want: harmless},
	{name: "git rm --cached from ..", command: `git -C .. rm -r --cached .`, want: harmless},
	{name: "git rm of a workspace file", command: `git rm old.go`, want: asked},
	{name: "python subprocess under another name, listing", command: `python3 -c 'import subprocess as s; s.run(["ls", "-la"])'`, want: harmless},
	{name: "find -L of a directory", command: `find -L . -name '*.o' -delete`, want: asked},
	{name: "git stash -u in the workspace", command: `git stash -u`, want: harmless},
	{name: "sh -c reading /dev/null", command: `sh -c 'xargs rm -f' < /dev/null`, want: asked},
	{name: "git -C .. status", command: `git -C .. status`, want: harmless},
	{name: "echo *.o into xargs rm", command: `echo *.o | xargs rm -f`, want: asked},
	{name: "echo build/* into xargs rm", command: `echo build/* | xargs rm -rf`, want: asked},
	{name: "gio trash of a build directory", command: `gio trash build`, want: asked},
	{name: "gio list of the home", command: `gio list ~`, want: harmless},
	{name: "rimraf of dist", command: `rimraf dist`, want: asked},
	{name: "npx rimraf dist", command: `npx rimraf dist`, want: harmless},
	{name: "ls of $XDG_DATA_HOME/zuno", command: `ls "$XDG_DATA_HOME/zuno"`, want: harmless},
	{name: "XDG_DATA_HOME the text assigns", command: `XDG_DATA_HOME=/tmp/x; rm -rf "$XDG_DATA_HOME/zuno"`, want: asked},
}

func TestReviewBAttacks(t *testing.T) {
	assessRows(t, reviewBAttacks, workspaceEnv)
}

// Zuno's data directory under a custom XDG_DATA_HOME: $XDG_DATA_HOME in the text is the
// directory above it, the environment the shell inherits from Zuno.
func TestXDGDataHomeElsewhere(t *testing.T) {
	env := risk.Env{Home: home, Cwd: project, Zuno: []string{"/srv/data/zuno", "/srv/data/zuno/zuno.db"}}
	assessRows(t, []row{
		{name: "rm -rf $XDG_DATA_HOME/zuno", command: `rm -rf "$XDG_DATA_HOME/zuno"`, want: denied, target: "/srv/data/zuno"},
		{name: "rm -rf $XDG_DATA_HOME/zuno/auth.json", command: `rm -f $XDG_DATA_HOME/zuno/auth.json`, want: denied},
		{name: "the default spelling is still the user configuration", command: `rm -rf ~/.local/share`, want: denied},
		{name: "another directory under it", command: `rm -rf "$XDG_DATA_HOME/other"`, want: asked},
	}, env)
}

// Code given protected locations as its arguments (sys.argv, process.argv, @ARGV): the gate
// does not follow which call gets which argument.
func TestCodeGivenProtectedArguments(t *testing.T) {
	assessRows(t, []row{
		{name: "python open(sys.argv[1], \"w\") given authorized_keys", command: `python3 -c 'import sys; open(sys.argv[1], "w").write("k")' ~/.ssh/authorized_keys`, want: denied, target: home + "/.ssh/authorized_keys"},
		{name: "perl unlink @ARGV given a key", command: `perl -e 'unlink @ARGV' ~/.ssh/id_ed25519`, want: denied, target: home + "/.ssh/id_ed25519"},
		{name: "node rename of process.argv given ~/.ssh", command: `node -e 'const [a, b] = process.argv.slice(1); require("fs").renameSync(a, b)' ~/.ssh /tmp/x`, want: denied},
		{name: "ruby FileUtils.rm_rf ARGV given ~", command: `ruby -e 'require "fileutils"; FileUtils.rm_rf(ARGV)' ~`, want: denied},
		{name: "python printing its argument, the home", command: `python3 -c 'import sys; print(sys.argv[1])' ~`, want: harmless},
		{name: "python writing its argument, a workspace file", command: `python3 -c 'import sys; open(sys.argv[1], "w").write("k")' out.txt`, want: harmless},
	}, workspaceEnv)
}
