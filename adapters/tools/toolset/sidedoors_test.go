package toolset

// Issue 25 ("Side doors"), vectors 1, 2, 5 and 7 through the file tools: the protected paths
// the shell's sandbox mounts (sandbox.Protections) are refused by read, write and apply_patch
// too, whatever the spelling, even where the permission gate granted the directory
// (external_directory); report_write still publishes; the user's read-only mode refuses every
// tool that writes. Real files, real git.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	adsandbox "github.com/zuno-run/zuno/adapters/sandbox"
	"github.com/zuno-run/zuno/domain/sandbox"
	"github.com/zuno-run/zuno/domain/settings"
	"github.com/zuno-run/zuno/domain/tools"
)

// sideDoors is a workspace (a git repository) and Zuno's files beside it, outside /tmp.
type sideDoors struct {
	base, ws, data, db, cfgDir, marker string
	set                                *Set
}

func newSideDoors(t *testing.T, configured string, readOnly bool) sideDoors {
	t.Helper()
	base, err := os.MkdirTemp("/var/tmp", "zuno-toolset-sidedoors-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	z := sideDoors{base: base, ws: filepath.Join(base, "ws"), data: filepath.Join(base, "share", "zuno"),
		db: filepath.Join(base, "srv", "events.db"), cfgDir: filepath.Join(base, "config", "zuno"), marker: filepath.Join(base, "MARKER")}
	for rel, content := range map[string]string{
		"share/zuno/auth.json": "SECRET-auth", "share/zuno/anchor.json": "SECRET-anchor",
		"share/zuno/artifacts/ses_other/c1-shell.out": "SECRET-artifact", "share/zuno/bg/ses_other/task.log": "SECRET-bg",
		"srv/events.db": "SECRET-db", "srv/events.db-wal": "SECRET-wal", "srv/events.db-shm": "SECRET-shm",
		"config/zuno/zuno.json": "{}", "ws/zuno.json": "{}", "ws/zuno.jsonc": "{}", "ws/.zuno/zuno.json": "{}",
		"ws/notes.txt": "notes\n", "ws/secrets/key": "k\n",
	} {
		put(t, base, rel, content)
	}
	hostGit(t, z.ws, "init", "-q", ".")
	hostGit(t, z.ws, "add", "-A")
	hostGit(t, z.ws, "commit", "-qm", "first")
	var layers []settings.Raw
	if configured != "" {
		layers = []settings.Raw{{Layer: settings.Global, Source: "test", JSON: json.RawMessage(configured)}}
	}
	cfg, err := sandbox.Merge(layers)
	if err != nil {
		t.Fatal(err)
	}
	own := sandbox.Locations{DataDir: z.data, DB: z.db, Config: []string{z.cfgDir}}
	z.set, err = New(Config{Root: z.ws, ArtifactDir: filepath.Join(z.data, "artifacts", testSession), SessionID: testSession,
		Protected: sandbox.Protections(cfg, own), ReadOnly: readOnly})
	if err != nil {
		t.Fatal(err)
	}
	return z
}

func hostGit(t *testing.T, ws string, args ...string) {
	t.Helper()
	if out, err := userGit(ws, args...).CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
}

// userGit is git as the user runs it on the host, with no configuration of the machine's.
func userGit(ws string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", append([]string{"-C", ws}, args...)...)
	base := filepath.Dir(ws)
	cmd.Env = append(os.Environ(), "HOME="+base, "GIT_CONFIG_GLOBAL="+filepath.Join(base, "gitconfig"), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@example.com", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@example.com")
	return cmd
}

// callIn is one validated call with an external_directory grant for external ("" for none):
// the gate admitted it, so only the tool's own door stands.
func callIn(t *testing.T, s *Set, name, external, args string) tools.Result {
	t.Helper()
	tl := toolNamed(t, s, name)
	parsed, err := tl.Validate(json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s %s: Validate: %v", name, args, err)
	}
	return tl.Execute(context.Background(), tools.Invocation{SessionID: testSession, CallID: fmt.Sprintf("c%d", callSeq.Add(1)),
		Parsed: parsed, ExternalRoot: external})
}

// snapshot is every file under dir with its content: what no refused call may change.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			b, _ := os.ReadFile(p)
			out[p] = string(b)
		}
		return nil
	})
	return out
}

func hook(marker string) string { return "#!/bin/sh\ntouch " + marker + "\n" }

// Every row is a call the file tools must refuse with protected_path, changing nothing.
func TestSideDoorsFileToolsRefuseProtectedPaths(t *testing.T) {
	z := newSideDoors(t, `{"protectedPaths": [".git/hooks", "zuno.json", ".zuno", "secrets"]}`, false)
	// What the sandboxed shell could have left in the workspace: links into protected paths.
	for link, target := range map[string]string{"cfg-link": ".git/config", "hooks-link": ".git/hooks/pre-commit",
		"auth-link": filepath.Join(z.data, "auth.json"), "db-link": z.db, "zuno-link": "zuno.json"} {
		if err := os.Symlink(target, filepath.Join(z.ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	patch := func(body string) string { return args("patch", "*** Begin Patch\n"+body+"*** End Patch\n") }
	external := func(p string) string { return filepath.Dir(p) + "/*" }
	// Reads first, of the files later rows update (so a refusal is the protection, not read_required).
	for _, p := range []string{".git/config", "zuno.json", "notes.txt"} {
		want(t, callIn(t, z.set, tools.NameRead, "", args("path", p)), tools.OutcomeCompleted, "")
	}
	before := snapshot(t, z.base)
	rows := []struct{ name, tool, external, args string }{
		// Vector 1 and 2: .git, through write and apply_patch, every spelling.
		{"write hook", tools.NameWrite, "", args("path", ".git/hooks/pre-commit", "content", hook(z.marker))},
		{"write config", tools.NameWrite, "", args("path", ".git/config", "content", "[core]\n\tfsmonitor = touch "+z.marker+"\n")},
		{"write info/attributes", tools.NameWrite, "", args("path", ".git/info/attributes", "content", "* filter=x\n")},
		{"write HEAD", tools.NameWrite, "", args("path", ".git/HEAD", "content", "ref: refs/heads/evil\n")},
		{"write a new file in .git", tools.NameWrite, "", args("path", ".git/commondir", "content", "../evil\n")},
		{"write .GIT (case)", tools.NameWrite, "", args("path", ".GIT/hooks/pre-commit", "content", hook(z.marker))},
		{"write ./.git", tools.NameWrite, "", args("path", "./.git/hooks/pre-commit", "content", hook(z.marker))},
		{"write x/../.git", tools.NameWrite, "", args("path", "notes/../.git/hooks/pre-commit", "content", hook(z.marker))},
		{"write absolute", tools.NameWrite, "", args("path", filepath.Join(z.ws, ".git", "hooks", "pre-commit"), "content", hook(z.marker))},
		{"write through a link", tools.NameWrite, "", args("path", "cfg-link", "content", "[core]\n\thooksPath = /x\n")},
		{"write through a link to a hook", tools.NameWrite, "", args("path", "hooks-link", "content", hook(z.marker))},
		{"patch add hook", tools.NameApplyPatch, "", patch("*** Add File: .git/hooks/post-commit\n+#!/bin/sh\n+touch " + z.marker + "\n")},
		{"patch update config", tools.NameApplyPatch, "", patch("*** Update File: .git/config\n@@\n+[core]\n+\thooksPath = .h\n")},
		{"patch move into hooks", tools.NameApplyPatch, "", patch("*** Update File: notes.txt\n*** Move to: .git/hooks/pre-commit\n@@\n-notes\n+#!/bin/sh\n")},
		{"patch one good file and a hook", tools.NameApplyPatch, "", patch("*** Add File: fine.txt\n+ok\n*** Add File: .git/hooks/pre-push\n+x\n")},
		// Zuno's project configuration.
		{"write .zuno/zuno.json", tools.NameWrite, "", args("path", ".zuno/zuno.json", "content", `{"permission":{"mode":"allow_all"}}`)},
		{"write .zuno/reports", tools.NameWrite, "", args("path", ".zuno/reports/forged.md", "content", "forged")},
		{"write zuno.json", tools.NameWrite, "", args("path", "zuno.json", "content", `{}`)},
		{"write zuno.jsonc", tools.NameWrite, "", args("path", "zuno.jsonc", "content", `{}`)},
		{"write through a link to zuno.json", tools.NameWrite, "", args("path", "zuno-link", "content", `{}`)},
		{"patch delete zuno.json", tools.NameApplyPatch, "", patch("*** Delete File: zuno.json\n")},
		{"write a configured path", tools.NameWrite, "", args("path", "secrets/key", "content", "x")},
		// Zuno's data, log and configuration, even with the directory granted.
		{"write the global config", tools.NameWrite, external(filepath.Join(z.cfgDir, "zuno.json")), args("path", filepath.Join(z.cfgDir, "zuno.json"), "content", `{}`)},
		{"write the auth file", tools.NameWrite, external(filepath.Join(z.data, "auth.json")), args("path", filepath.Join(z.data, "auth.json"), "content", `{}`)},
		{"write the database", tools.NameWrite, external(z.db), args("path", z.db, "content", "")},
		{"write the WAL", tools.NameWrite, external(z.db), args("path", z.db+"-wal", "content", "")},
		{"write a new file in the data dir", tools.NameWrite, external(filepath.Join(z.data, "x")), args("path", filepath.Join(z.data, "x"), "content", "x")},
		{"write through a link to the auth file", tools.NameWrite, external(filepath.Join(z.data, "auth.json")), args("path", "auth-link", "content", "x")},
		// Hidden: not even read (vector 5).
		{"read the auth file", tools.NameRead, external(filepath.Join(z.data, "auth.json")), args("path", filepath.Join(z.data, "auth.json"))},
		{"read the database", tools.NameRead, external(z.db), args("path", z.db)},
		{"read the WAL", tools.NameRead, external(z.db), args("path", z.db+"-wal")},
		{"read the shm", tools.NameRead, external(z.db), args("path", z.db+"-shm")},
		{"read another session's artifact", tools.NameRead, external(filepath.Join(z.data, "artifacts", "ses_other", "x")), args("path", filepath.Join(z.data, "artifacts", "ses_other", "c1-shell.out"))},
		{"read another session's bg output", tools.NameRead, external(filepath.Join(z.data, "bg", "ses_other", "x")), args("path", filepath.Join(z.data, "bg", "ses_other", "task.log"))},
		{"read an anchor kept with the data", tools.NameRead, external(filepath.Join(z.data, "x")), args("path", filepath.Join(z.data, "anchor.json"))},
		{"list the data dir", tools.NameRead, external(filepath.Join(z.base, "share", "x")), args("path", z.data)},
		{"read through a link to the auth file", tools.NameRead, external(filepath.Join(z.data, "auth.json")), args("path", "auth-link")},
		{"read through a link to the database", tools.NameRead, external(z.db), args("path", "db-link")},
	}
	for _, r := range rows {
		res := callIn(t, z.set, r.tool, r.external, r.args)
		if res.Outcome != tools.OutcomeError || res.ErrorCode != sandbox.CodeProtectedPath {
			t.Errorf("%s: got %s/%q, want error/%s: %s", r.name, res.Outcome, res.ErrorCode, sandbox.CodeProtectedPath, res.Output)
			continue
		}
		if strings.Contains(res.Output, "SECRET") || !strings.Contains(res.Output, "protected") {
			t.Errorf("%s: the refusal %q shows a secret or does not say why", r.name, res.Output)
		}
	}
	if after := snapshot(t, z.base); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("a refused call changed files:\nbefore %v\nafter  %v", before, after)
	}
	// The user's next git commands run nothing the agent wrote.
	for _, a := range [][]string{{"status"}, {"add", "-A"}, {"commit", "-qm", "next"}, {"status", "--porcelain"}} {
		userGit(z.ws, a...).Run()
	}
	if _, err := os.Stat(z.marker); err == nil {
		t.Error("the user's git ran code the agent wrote through the file tools")
	}
}

// What stays allowed: reading .git and the project configuration (protected, not hidden),
// writing anywhere else, and report_write's publication under .zuno/reports (seeds 004:
// read-only investigating agents publish without opening .zuno to writes).
func TestSideDoorsFileToolsKeepTheRest(t *testing.T) {
	z := newSideDoors(t, "", false)
	for _, p := range []string{".git/config", ".git/HEAD", "zuno.json", ".zuno/zuno.json", "."} {
		want(t, callIn(t, z.set, tools.NameRead, "", args("path", p)), tools.OutcomeCompleted, "")
	}
	want(t, callIn(t, z.set, tools.NameWrite, "", args("path", "src/main.go", "content", "package main\n")), tools.OutcomeCompleted, "")
	want(t, callIn(t, z.set, tools.NameWrite, "", args("path", ".gitignore", "content", "x\n")), tools.OutcomeCompleted, "")
	want(t, callIn(t, z.set, tools.NameWrite, "", args("path", "git/hooks/not-git", "content", "x\n")), tools.OutcomeCompleted, "")
	res := callIn(t, z.set, tools.NameReportWrite, "", args("name", "audit.md", "content", "# Audit\n"))
	want(t, res, tools.OutcomeCompleted, "")
	if m, _ := filepath.Glob(filepath.Join(z.ws, ".zuno", "reports", "*audit.md")); len(m) != 1 {
		t.Errorf("report_write did not publish under .zuno/reports: %v", m)
	}
}

// Vector 7: under the user's read-only sandbox mode, every tool that writes is refused with
// a typed refusal naming the mode, and nothing is created; reading still works.
func TestSideDoorsReadOnlyModeRefusesEveryWriter(t *testing.T) {
	z := newSideDoors(t, "", true)
	before := snapshot(t, z.base)
	for _, r := range []struct{ tool, args string }{
		{tools.NameWrite, args("path", "new.txt", "content", "x")},
		{tools.NameApplyPatch, args("patch", "*** Begin Patch\n*** Add File: new.txt\n+x\n*** End Patch\n")},
		{tools.NameReportWrite, args("name", "audit.md", "content", "# Audit\n")},
	} {
		res := callIn(t, z.set, r.tool, "", r.args)
		if res.Outcome != tools.OutcomeError || res.ErrorCode != sandbox.CodeReadOnlyMode || !strings.Contains(res.Output, sandbox.ModeReadOnly) {
			t.Errorf("%s: got %s/%q: %s", r.tool, res.Outcome, res.ErrorCode, res.Output)
		}
	}
	if after := snapshot(t, z.base); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("a refused write changed files")
	}
	want(t, callIn(t, z.set, tools.NameRead, "", args("path", "notes.txt")), tools.OutcomeCompleted, "")
}

// Vector 1 through the file tools, end to end with the user's git: each plant is made by
// write or apply_patch, then the user runs git status, add and commit on the host. Without
// the protections (the control) each plant runs the agent's code; with them none does.
func TestSideDoorsFileToolsGitRunsNothingTheAgentWrote(t *testing.T) {
	plants := []struct{ name, tool, read, args string }{
		{"write .git/config with core.fsmonitor", tools.NameWrite, ".git/config", ""},
		{"apply_patch .git/config with core.fsmonitor", tools.NameApplyPatch, ".git/config", ""},
		{"write over the user's executable hook", tools.NameWrite, ".git/hooks/pre-commit", ""},
	}
	for _, p := range plants {
		t.Run(p.name, func(t *testing.T) {
			for _, protected := range []bool{false, true} {
				z := newSideDoors(t, "", false)
				put(t, z.ws, ".git/hooks/pre-commit", "#!/bin/sh\nexit 0\n")
				if err := os.Chmod(filepath.Join(z.ws, ".git", "hooks", "pre-commit"), 0o755); err != nil {
					t.Fatal(err)
				}
				if !protected {
					z.set.ws.Protected = nil
				}
				want(t, callIn(t, z.set, tools.NameRead, "", args("path", p.read)), tools.OutcomeCompleted, "")
				cfg := get(t, z.ws, ".git/config")
				fsm := "[core]\n\tfsmonitor = touch " + z.marker + "; false\n"
				a := args("path", p.read, "content", hook(z.marker))
				switch {
				case p.tool == tools.NameApplyPatch:
					a = args("patch", "*** Begin Patch\n*** Update File: .git/config\n@@\n"+prefixed(cfg, " ")+prefixed(fsm, "+")+"*** End Patch\n")
				case p.read == ".git/config":
					a = args("path", p.read, "content", cfg+fsm)
				}
				res := callIn(t, z.set, p.tool, "", a)
				for _, g := range [][]string{{"status"}, {"add", "-A"}, {"commit", "-qm", "next"}, {"status", "--porcelain"}} {
					userGit(z.ws, g...).Run()
				}
				_, err := os.Stat(z.marker)
				switch {
				case protected && (err == nil || res.ErrorCode != sandbox.CodeProtectedPath):
					t.Errorf("protected: %s/%q, marker made: %v (%s)", res.Outcome, res.ErrorCode, err == nil, res.Output)
				case !protected && err != nil:
					t.Errorf("control: the plant (%s/%q) did not run, so the row proves nothing: %s", res.Outcome, res.ErrorCode, res.Output)
				}
			}
		})
	}
}

// prefixed puts prefix before every line of s.
func prefixed(s, prefix string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString(prefix + l)
		}
	}
	return b.String()
}

// A workspace below its repository's root: the enclosing .git and the project configuration
// are refused as the workspace's own are, even with the directory granted.
func TestSideDoorsFileToolsEnclosingRepository(t *testing.T) {
	z := newSideDoors(t, "", false)
	sub := filepath.Join(z.ws, "sub")
	put(t, sub, "main.go", "package main\n")
	s, err := New(Config{Root: sub, ArtifactDir: filepath.Join(z.base, "a"), SessionID: testSession,
		Protected: sandbox.Protections(sandbox.Config{}, sandbox.Locations{Repository: z.ws})})
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, z.base)
	for _, p := range []string{filepath.Join(z.ws, ".git", "hooks", "pre-commit"), filepath.Join(z.ws, "zuno.json"), filepath.Join(z.ws, ".zuno", "x.json")} {
		res := callIn(t, s, tools.NameWrite, filepath.Dir(p)+"/*", args("path", p, "content", hook(z.marker)))
		if res.ErrorCode != sandbox.CodeProtectedPath {
			t.Errorf("%s: %s/%q: %s", p, res.Outcome, res.ErrorCode, res.Output)
		}
	}
	if after := snapshot(t, z.base); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Error("a refused call changed files")
	}
	want(t, callIn(t, s, tools.NameWrite, "", args("path", "new.go", "content", "package main\n")), tools.OutcomeCompleted, "")
}

// REVIEW25 findings 1, 2, 3 and 9 through the file tools: the places a repository's layout
// and configuration point git at (adsandbox.GitPaths, in the one list) are refused by write
// as .git is. Each row first shown to run the agent's code without the protections (the
// control); then refused, and the user's git status, add and commit run nothing.
func TestSideDoorsFileToolsGitPointedElsewhere(t *testing.T) {
	type file struct{ path, content string }
	fsm := func(z sideDoors) string { return "[core]\n\tfsmonitor = \"touch " + z.marker + "; false\"\n" }
	rows := []struct {
		name  string
		setup func(t *testing.T, z sideDoors) (repository string)
		plant func(z sideDoors) []file
	}{
		{"core.hooksPath into the work tree (finding 1)", func(t *testing.T, z sideDoors) string {
			put(t, z.ws, ".husky/pre-commit", "#!/bin/sh\nexit 0\n")
			os.Chmod(filepath.Join(z.ws, ".husky", "pre-commit"), 0o755)
			hostGit(t, z.ws, "config", "core.hooksPath", ".husky")
			return ""
		}, func(z sideDoors) []file { return []file{{".husky/pre-commit", hook(z.marker)}} }},
		{"include.path into the work tree (finding 1)", func(t *testing.T, z sideDoors) string {
			put(t, z.ws, ".gitconfig.shared", "[user]\n\tname = u\n")
			hostGit(t, z.ws, "config", "include.path", "../.gitconfig.shared")
			return ""
		}, func(z sideDoors) []file { return []file{{".gitconfig.shared", fsm(z)}} }},
		{"includeIf.*.path not made yet (finding 1)", func(t *testing.T, z sideDoors) string {
			hostGit(t, z.ws, "config", "includeIf.onbranch:master.path", "../.gitconfig.branch")
			hostGit(t, z.ws, "config", "includeIf.onbranch:main.path", "../.gitconfig.branch")
			return ""
		}, func(z sideDoors) []file { return []file{{".gitconfig.branch", fsm(z)}} }},
		{"separate git dir in the workspace (finding 2)", func(t *testing.T, z sideDoors) string {
			os.RemoveAll(filepath.Join(z.ws, ".git"))
			hostGit(t, z.ws, "init", "-q", "--separate-git-dir="+filepath.Join(z.ws, ".bare"), ".")
			return ""
		}, func(z sideDoors) []file {
			return []file{{".bare/config", "[core]\n\trepositoryformatversion = 0\n\tbare = false\n" + fsm(z)}}
		}},
		{"submodule .git repointed (finding 3)", func(t *testing.T, z sideDoors) string {
			src := filepath.Join(z.base, "subsrc")
			put(t, src, "f", "f\n")
			hostGit(t, src, "init", "-q", ".")
			hostGit(t, src, "add", "-A")
			hostGit(t, src, "commit", "-qm", "sub")
			hostGit(t, z.ws, "-c", "protocol.file.allow=always", "submodule", "-q", "add", src, "sub")
			hostGit(t, z.ws, "commit", "-qm", "with sub")
			// What a sandboxed shell may leave outside the protected paths: a copy of the
			// submodule's git directory running the agent's fsmonitor.
			if out, err := exec.Command("cp", "-r", filepath.Join(z.ws, ".git", "modules", "sub"), filepath.Join(z.ws, "evil")).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v %s", err, out)
			}
			hostGit(t, z.ws, "config", "-f", "evil/config", "core.worktree", "../sub")
			hostGit(t, z.ws, "config", "-f", "evil/config", "core.fsmonitor", "touch "+z.marker+"; false")
			return ""
		}, func(z sideDoors) []file { return []file{{"sub/.git", "gitdir: ../evil\n"}} }},
		{"workspace below a repository, a .git made by write (finding 9)", func(t *testing.T, z sideDoors) string {
			os.RemoveAll(filepath.Join(z.ws, ".git"))
			hostGit(t, z.base, "init", "-q", ".")
			return z.base
		}, func(z sideDoors) []file {
			return []file{{".git/HEAD", "ref: refs/heads/main\n"}, {".git/objects/info/x", ""}, {".git/refs/heads/x", ""},
				{".git/config", "[core]\n\trepositoryformatversion = 0\n" + fsm(z)}}
		}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			for _, protected := range []bool{false, true} {
				z := newSideDoors(t, "", false)
				repository := r.setup(t, z)
				var list []sandbox.Protection
				if protected {
					list = sandbox.Protections(sandbox.Config{}, sandbox.Locations{Repository: repository,
						Git: adsandbox.GitPaths(z.ws, repository)})
				}
				s, err := New(Config{Root: z.ws, ArtifactDir: filepath.Join(z.base, "a"), SessionID: testSession, Protected: list})
				if err != nil {
					t.Fatal(err)
				}
				var refused []string
				for _, f := range r.plant(z) {
					if _, err := os.Lstat(filepath.Join(z.ws, f.path)); err == nil {
						callIn(t, s, tools.NameRead, "", args("path", f.path))
					}
					res := callIn(t, s, tools.NameWrite, "", args("path", f.path, "content", f.content))
					if res.ErrorCode == sandbox.CodeProtectedPath {
						refused = append(refused, f.path)
					} else if protected && res.Outcome != tools.OutcomeCompleted {
						t.Logf("write %s: %s/%q", f.path, res.Outcome, res.ErrorCode)
					}
				}
				for _, g := range [][]string{{"status"}, {"add", "-A"}, {"commit", "-qm", "next"}, {"status", "--porcelain"}} {
					userGit(z.ws, g...).Run()
				}
				_, err = os.Stat(z.marker)
				switch {
				case protected && (err == nil || len(refused) == 0):
					t.Errorf("protected: refused %v, marker made: %v", refused, err == nil)
				case !protected && err != nil:
					t.Errorf("control: the plant did not run, so the row proves nothing (refused %v)", refused)
				}
			}
		})
	}
}
