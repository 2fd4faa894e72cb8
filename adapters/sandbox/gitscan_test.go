package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	adsandbox "github.com/zuno-run/zuno/adapters/sandbox"
	"github.com/zuno-run/zuno/domain/sandbox"
)

// scanRepo is a repository under /var/tmp with the user's configuration set, resolved.
func scanRepo(t *testing.T, config ...[2]string) string {
	t.Helper()
	base := hostDir(t)
	ws := filepath.Join(base, "ws")
	gitIn(t, base, "init", "-q", "ws")
	for _, kv := range config {
		gitIn(t, ws, "config", kv[0], kv[1])
	}
	real, err := filepath.EvalSymlinks(ws)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// The keys whose command no end-to-end row can make git run without a terminal, a merge or
// a rebase (core.pager, sequence.editor, merge drivers, ...): each names a script of the
// work tree, and ScanGit lists it with the key and the file that set it.
func TestScanGitListsWhatEveryCommandKeyNames(t *testing.T) {
	keys := []string{"core.pager", "sequence.editor", "merge.x.driver", "filter.x.process", "filter.x.smudge", "diff.x.command",
		"mergetool.x.cmd", "difftool.x.cmd", "pager.log", "gpg.ssh.program", "core.askPass", "interactive.diffFilter",
		"credential.https://example.com.helper", "submodule.s.update", "uploadpack.packObjectsHook"}
	var config [][2]string
	for i, k := range keys {
		config = append(config, [2]string{k, fmt.Sprintf("sh tools/k%d.sh %%O %%A", i)})
	}
	ws := scanRepo(t, config...)
	for i := range keys {
		script(t, filepath.Join(ws, "tools", fmt.Sprintf("k%d.sh", i)), "#!/bin/sh\n")
	}
	got := map[string]string{}
	for _, g := range adsandbox.GitPaths(ws, "") {
		got[g.Path] = g.Why
	}
	for i, k := range keys {
		p := filepath.Join(ws, "tools", fmt.Sprintf("k%d.sh", i))
		why, ok := got[p]
		switch {
		case !ok:
			t.Errorf("%s names %s, which is not listed", k, p)
		case !strings.Contains(why, strings.ToLower(k)) || !strings.Contains(why, ".git/config"):
			t.Errorf("%s: why does not name the key and its file: %q", k, why)
		}
	}
}

// A value no parser of ours reads is protected conservatively, and debug sandbox (the
// session's GitNotes) says so; the work tree itself is never protected whole, whatever a
// value names.
func TestScanGitSaysWhatItReadConservatively(t *testing.T) {
	ws := scanRepo(t, [2]string{"core.fsmonitor", "sh tools/f.sh || echo $((1+))"}, [2]string{"alias.b", "!cd . && make -C .. all"},
		[2]string{"core.editor", "vim " + "WS"}, [2]string{"alias.up", "!sh ../../x.sh"})
	gitIn(t, ws, "config", "core.editor", "vim "+ws)
	script(t, filepath.Join(ws, "tools", "f.sh"), "#!/bin/sh\n")
	scan := adsandbox.ScanGit(ws, "")
	listed := false
	for _, g := range scan.Paths {
		if g.Path == filepath.Join(ws, "tools", "f.sh") {
			listed = true
		}
		if strings.HasPrefix(ws+"/", g.Path+"/") {
			t.Errorf("%s is protected whole: %s (%s)", ws, g.Path, g.Why)
		}
	}
	if !listed {
		t.Errorf("tools/f.sh is not listed: %+v", scan.Paths)
	}
	if len(scan.Notes) != 1 || !strings.Contains(scan.Notes[0], "core.fsmonitor") || !strings.Contains(scan.Notes[0], "conservatively") &&
		!strings.Contains(scan.Notes[0], "protected instead") {
		t.Errorf("the notes do not say core.fsmonitor was read conservatively: %q", scan.Notes)
	}
	sess, _ := adsandbox.Assemble(context.Background(), mergeGlobal(t, ""), adsandbox.Request{Workspace: ws, Platform: "linux"},
		adsandbox.Probe{})
	if strings.Join(sess.GitNotes, "\n") != strings.Join(scan.Notes, "\n") || sess.GitWarning != "" {
		t.Errorf("the session does not carry the notes (and nothing was cut short): %q %q", sess.GitNotes, sess.GitWarning)
	}
}

// A workspace larger than the walk: the look for nested repositories stops at its bound and
// says so, at start (GitWarning) and in debug sandbox (GitNotes), never silently. Breadth
// first, it has found the repository near the top (zzz/lib) before the large tree spent the
// bound; the one deep inside that tree it has not.
func TestScanGitWarnsWhereTheWalkStops(t *testing.T) {
	ws := scanRepo(t)
	for i := 0; i < 20001; i++ {
		if err := os.MkdirAll(filepath.Join(ws, "bulk", fmt.Sprintf("d%05d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, ws, "init", "-q", "zzz/lib")
	gitIn(t, ws, "init", "-q", "bulk/d20000/deep/lib")
	scan := adsandbox.ScanGit(ws, "")
	if len(scan.Warnings) != 1 || !strings.Contains(scan.Warnings[0], "more than 20000 directories") {
		t.Fatalf("no warning names the bound: %q", scan.Warnings)
	}
	found := map[string]bool{}
	for _, g := range scan.Paths {
		found[g.Path] = true
	}
	if !found[filepath.Join(ws, "zzz", "lib", ".git")] {
		t.Errorf("the repository near the top was not found before the bound")
	}
	if found[filepath.Join(ws, "bulk", "d20000", "deep", "lib", ".git")] {
		t.Errorf("the repository past the bound was scanned after all (the test's premise is wrong)")
	}
	sess, _ := adsandbox.Assemble(context.Background(), mergeGlobal(t, ""), adsandbox.Request{Workspace: ws, Platform: "linux"},
		adsandbox.Probe{})
	if !strings.Contains(sess.GitWarning, "20000") || !strings.Contains(strings.Join(sess.GitNotes, "\n"), "20000") {
		t.Errorf("the session does not say it: %q %q", sess.GitWarning, sess.GitNotes)
	}
}

// C1: a trusted configuration file that does not exist yet (ZUNO_CONFIG naming a file in the
// workspace), and a global configuration directory inside it: the shell cannot make either
// (an empty read-only file or directory covers them) and the file tools' list refuses them.
func TestSideDoorsMissingTrustedConfigInWorkspace(t *testing.T) {
	z := layoutFiles(t, false)
	file := filepath.Join(z.ws, "trusted.json")
	dir := filepath.Join(z.ws, "home", ".config", "zuno")
	z.own.ConfigFiles = []string{file}
	z.own.Config = append(z.own.Config, dir)
	sess := protectedSession(t, z, "")
	for _, p := range []string{file, dir, filepath.Join(dir, "zuno.json")} {
		if !lists(sess.Protected, p, z.ws) {
			t.Errorf("%s is not in the one list", p)
		}
	}
	out := attack(t, sess, z.ws, `echo '{"permission":{"mode":"allow_all"}}' > trusted.json; rm -f trusted.json; mv trusted.json t2; `+
		`echo '{}' >> trusted.json; mkdir -p home/.config/zuno; echo '{"permission":{"mode":"allow_all"}}' > home/.config/zuno/zuno.json; `+
		`ls -la home/.config/zuno; cat trusted.json; true`)
	if b, err := os.ReadFile(file); err == nil && len(b) > 0 {
		t.Errorf("the agent wrote the trusted configuration file: %q (%q)", b, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "zuno.json")); err == nil {
		t.Errorf("the agent made a global configuration file (%q)", out)
	}
	// Control: unprotected, the same command writes it.
	z2 := layoutFiles(t, false)
	runIn(t, adsandbox.Session{Launcher: adsandbox.Native{}}, z2.ws, `echo '{}' > trusted.json`)
	if _, err := os.Stat(filepath.Join(z2.ws, "trusted.json")); err != nil {
		t.Fatalf("control: the command does not write even unprotected: %v", err)
	}
}

// What the freeze of a protected link's directory costs, and what it keeps: with .git a
// link, the workspace root's entries stay in place (no new one, none removed, renamed or
// re-pointed), while every file and directory in it still takes writes.
func TestProtectedLinkFreezesItsDirectory(t *testing.T) {
	z := layoutFiles(t, false)
	write(t, filepath.Join(z.ws, "src", "a.go"), "package a\n")
	write(t, filepath.Join(z.ws, "README"), "r\n")
	if err := os.Rename(filepath.Join(z.ws, ".git"), filepath.Join(z.base, "repo.git")); err != nil {
		t.Fatal(err)
	}
	symlink(t, filepath.Join(z.base, "repo.git"), filepath.Join(z.ws, ".git"))
	sess := protectedSession(t, z, "")
	out := attack(t, sess, z.ws, `echo b >> src/a.go && echo ok1; echo new > src/b.go && echo ok2; echo r2 > README && echo ok3; `+
		`mkdir -p src/deep/er && echo ok4; rm -f .git; mv .git g; ln -sfn /tmp .git; touch newtop; mv src src2; true`)
	for _, ok := range []string{"ok1", "ok2", "ok3", "ok4"} {
		if !strings.Contains(out, ok+"\n") {
			t.Errorf("a write inside the workspace failed (%s): %q", ok, out)
		}
	}
	if target, err := os.Readlink(filepath.Join(z.ws, ".git")); err != nil || target != filepath.Join(z.base, "repo.git") {
		t.Errorf(".git was removed or re-pointed: %q %v (%q)", target, err, out)
	}
	for _, p := range []string{"newtop", "g", "src2"} {
		if _, err := os.Lstat(filepath.Join(z.ws, p)); err == nil {
			t.Errorf("%s was made at the top of the frozen workspace (%q)", p, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(z.ws, "src", "b.go")); string(b) != "new\n" {
		t.Errorf("src/b.go was not written: %q", b)
	}
	for _, p := range sess.Protected {
		if p.Source == sandbox.SourceGit && p.Path == filepath.ToSlash(filepath.Join(z.ws, ".git")) && !strings.Contains(p.Why, "symbolic link") {
			t.Errorf("the link's why does not say it is one: %q", p.Why)
		}
	}
}

// What the look cannot read it says (debug sandbox): a configuration git cannot parse, a
// hook that is a program.
func TestScanGitSaysWhatItCannotRead(t *testing.T) {
	ws := scanRepo(t)
	f, err := os.OpenFile(filepath.Join(ws, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("[broken\n")
	f.Close()
	write(t, filepath.Join(ws, ".git", "hooks", "pre-commit"), "\x7fELF\x00\x00binary")
	notes := strings.Join(adsandbox.ScanGit(ws, "").Notes, "\n")
	for _, want := range []string{"git could not read the configuration", "pre-commit is a program"} {
		if !strings.Contains(notes, want) {
			t.Errorf("the notes do not say %q: %q", want, notes)
		}
	}
}

// url.<base>.insteadOf spells its command in the key: an ext:: base is a command line git
// runs to reach the remote (review 25c), and what it names is protected like a value's.
func TestScanGitReadsACommandInAnInsteadOfKey(t *testing.T) {
	ws := scanRepo(t, [2]string{"url.ext::sh tools/ins.sh .insteadOf", "https://example.invalid/"},
		[2]string{"url.ext::sh tools/push.sh .pushInsteadOf", "https://example.invalid/p"},
		[2]string{"url.ext::sh Tools/Up.sh .insteadOf", "https://example.invalid/u"})
	script(t, filepath.Join(ws, "tools", "ins.sh"), "#!/bin/sh\n")
	script(t, filepath.Join(ws, "Tools", "Up.sh"), "#!/bin/sh\n")
	got := map[string]string{}
	for _, g := range adsandbox.GitPaths(ws, "") {
		got[g.Path] = g.Why
	}
	// The subsection keeps its case (git compares it with case): Tools/Up.sh, not tools/up.sh.
	for _, p := range []string{filepath.Join(ws, "tools", "ins.sh"), filepath.Join(ws, "tools", "push.sh"), filepath.Join(ws, "Tools", "Up.sh")} {
		if why, ok := got[p]; !ok || !strings.Contains(why, "insteadof") {
			t.Errorf("%s is not listed as what an insteadOf key runs: %q (%v)", p, why, ok)
		}
	}
}

// A protected file with another name (a hard link made before the session) is said at start:
// the read-only mount protects the name, and the other name still writes the file.
func TestScanGitWarnsOfAHardLinkedScript(t *testing.T) {
	ws := scanRepo(t, [2]string{"core.fsmonitor", "sh scripts/fsmon.sh"})
	script(t, filepath.Join(ws, "scripts", "fsmon.sh"), "#!/bin/sh\n")
	if err := os.Link(filepath.Join(ws, "scripts", "fsmon.sh"), filepath.Join(ws, "notes.sh")); err != nil {
		t.Fatal(err)
	}
	scan := adsandbox.ScanGit(ws, "")
	found := false
	for _, w := range scan.Warnings {
		found = found || (strings.Contains(w, "fsmon.sh") && strings.Contains(w, "2 hard links"))
	}
	if !found {
		t.Fatalf("no warning of the second name: %q", scan.Warnings)
	}
	// Without the second name, nothing is said.
	os.Remove(filepath.Join(ws, "notes.sh"))
	for _, w := range adsandbox.ScanGit(ws, "").Warnings {
		if strings.Contains(w, "hard links") {
			t.Fatalf("a warning with one name: %q", w)
		}
	}
}

// A hook in another language is read for the names it spells, and the look says that what it
// imports from the work tree is not read (a limit, docs/sandbox.md).
func TestScanGitSaysWhichHooksAreNotShell(t *testing.T) {
	for _, tc := range []struct{ shebang, want string }{
		{"#!/usr/bin/env python3", "is a python3 script"},
		{"#!/usr/bin/env -S node --no-warnings", "is a node script"},
		{"#!/usr/bin/ruby -w", "is a ruby script"},
		{"#!/bin/bash -e", ""},
		{"#!/usr/bin/env sh", ""},
		{"", ""},
	} {
		ws := scanRepo(t)
		write(t, filepath.Join(ws, ".git", "hooks", "pre-commit"), tc.shebang+"\nimport tools.check\n")
		notes := strings.Join(adsandbox.ScanGit(ws, "").Notes, "\n")
		if tc.want == "" && strings.Contains(notes, "script: what it imports") || tc.want != "" && !strings.Contains(notes, tc.want) {
			t.Errorf("%q: notes %q, want %q", tc.shebang, notes, tc.want)
		}
	}
}
