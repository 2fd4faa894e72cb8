package sandbox_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/sandbox"
	"github.com/zuno-run/zuno/domain/settings"
)

var own = sandbox.Locations{DataDir: "/home/u/.local/share/zuno", DB: "/srv/zuno/events.db",
	Config: []string{"/home/u/.config/zuno", "/etc/zuno"}}

func protections(t *testing.T, configured string) []sandbox.Protection {
	t.Helper()
	var layers []settings.Raw
	if configured != "" {
		layers = []settings.Raw{{Layer: settings.Project, Source: "zuno.json", JSON: json.RawMessage(configured)}}
	}
	cfg, err := sandbox.Merge(layers)
	if err != nil {
		t.Fatal(err)
	}
	return sandbox.Protections(cfg, own)
}

// Issue 25, "Protected by default": .git, .zuno, the project zuno.json[c] and Zuno's data and
// configuration directories, without configuration; the data, database and WAL hidden; the
// configured paths join the list; each with why.
func TestProtectionsByDefault(t *testing.T) {
	list := protections(t, `{"protectedPaths": ["secrets"]}`)
	want := map[string]struct {
		hidden bool
		source string
	}{
		".git": {false, sandbox.SourceDefault}, ".zuno": {false, sandbox.SourceDefault},
		"zuno.json": {false, sandbox.SourceDefault}, "zuno.jsonc": {false, sandbox.SourceDefault},
		own.DataDir: {true, sandbox.SourceData}, own.DB: {true, sandbox.SourceData}, own.DB + "-wal": {true, sandbox.SourceData},
		own.DB + "-shm": {true, sandbox.SourceData}, own.DB + "-journal": {true, sandbox.SourceData},
		// The trusted configuration may hold keys (options.apiKey): hidden, not just read-only.
		"/home/u/.config/zuno": {true, sandbox.SourceData}, "/etc/zuno": {true, sandbox.SourceData},
		// The runtime's /proc (its environ holds its keys): hidden from the file tools.
		"/proc":   {true, sandbox.SourceDefault},
		"/dev/fd": {true, sandbox.SourceDefault}, "/dev/stdin": {true, sandbox.SourceDefault},
		"/dev/stdout": {true, sandbox.SourceDefault}, "/dev/stderr": {true, sandbox.SourceDefault},
		"secrets": {false, sandbox.SourceConfig},
	}
	if len(list) != len(want) {
		t.Fatalf("got %d protections, want %d: %+v", len(list), len(want), list)
	}
	for _, p := range list {
		w, ok := want[p.Path]
		if !ok || w.hidden != p.Hidden || w.source != p.Source || p.Why == "" {
			t.Errorf("%+v: want %+v (listed: %v)", p, w, ok)
		}
	}
	if got := list[len(list)-1].Why; !strings.Contains(got, "project layer") {
		t.Errorf("a configured path does not name its layer: %q", got)
	}
	if got := sandbox.Protections(sandbox.Config{}, sandbox.Locations{}); len(got) != 9 || got[4].Path != sandbox.ProcRoot {
		t.Errorf("without locations the defaults are the four workspace paths, /proc and its /dev links: %+v", got)
	}
}

func TestGuard(t *testing.T) {
	list := protections(t, `{"protectedPaths": ["secrets", "/abs/keep"]}`)
	const ws = "/w/proj"
	rows := []struct {
		path        string
		write, read bool // protected for a write; hidden from a read
	}{
		{ws + "/.git", true, false},
		{ws + "/.git/hooks/pre-commit", true, false},
		{ws + "/.git/config", true, false},
		{ws + "/.GIT/hooks/pre-commit", true, false},
		{ws + "/.Git/CONFIG", true, false},
		{ws + "/.zuno/zuno.json", true, false},
		{ws + "/.zuno/reports/r.md", true, false},
		{ws + "/zuno.json", true, false},
		{ws + "/ZUNO.JSONC", true, false},
		{ws + "/secrets/key", true, false},
		{"/abs/keep/x", true, false},
		{own.DataDir, true, true},
		{own.DataDir + "/auth.json", true, true},
		{own.DataDir + "/artifacts/ses_x/c1-shell.out", true, true},
		{own.DB, true, true},
		{own.DB + "-wal", true, true},
		{own.DB + "-shm", true, true},
		{"/home/u/.config/zuno/zuno.json", true, true},
		{"/etc/zuno/policy.json", true, true},
		{"/proc/self/environ", true, true},
		{"/proc/4242/environ", true, true},
		{"/proc/4242/fd/7", true, true},
		{"/proc", true, true},
		{"/procx/y", false, false},
		{"/dev/fd/3", true, true},
		{"/dev/stdin", true, true},
		{"/dev/null", false, false},
		{"/dev/fdx", false, false},
		// Not protected: neighbours and prefixes.
		{ws, false, false},
		{ws + "/.gitignore", false, false},
		{ws + "/.github/workflows/x.yml", false, false},
		{ws + "/.gitx/hooks", false, false},
		{ws + "/git/hooks", false, false},
		{ws + "/sub/zuno.json", false, false},
		{ws + "/zuno.json5", false, false},
		{ws + "/.zunox", false, false},
		{"/home/u/.local/share/zuno2/x", false, false},
		{"/home/u/.local/share", false, false},
		{own.DB + "-other", false, false},
		{"/srv/zuno/other.db", false, false},
	}
	for _, r := range rows {
		if _, got := sandbox.Guard(list, ws, r.path, true); got != r.write {
			t.Errorf("write %s: protected %v, want %v", r.path, got, r.write)
		}
		if _, got := sandbox.Guard(list, ws, r.path, false); got != r.read {
			t.Errorf("read %s: hidden %v, want %v", r.path, got, r.read)
		}
	}
}

// The refusal is typed, names the path and where it lies, says why and what to do.
func TestProtectedRefusal(t *testing.T) {
	list := protections(t, "")
	p, _ := sandbox.Guard(list, "/w", "/w/.git/hooks/pre-commit", true)
	e := p.Refusal(".git/hooks/pre-commit", true)
	if domain.CodeOf(e) != sandbox.CodeProtectedPath || e.Field != "path" {
		t.Fatalf("%v", e)
	}
	for _, s := range []string{".git/hooks/pre-commit", "lies under .git", "hooks", "changed"} {
		if !strings.Contains(e.Error(), s) {
			t.Errorf("%q does not say %q", e.Error(), s)
		}
	}
	p, _ = sandbox.Guard(list, "/w", own.DataDir+"/auth.json", false)
	if e := p.Refusal(own.DataDir+"/auth.json", false).Error(); !strings.Contains(e, "auth file") || !strings.Contains(e, "cannot be read") {
		t.Errorf("%q", e)
	}
}

// Issue 25, "The log outside the agent's reach": a database or data directory inside the
// workspace, or a workspace inside them, is refused with why and where to put it.
func TestOutsideWorkspace(t *testing.T) {
	rows := []struct {
		ws      string
		own     sandbox.Locations
		refused string // what the message names; "" when allowed
	}{
		{"/w/proj", sandbox.Locations{DB: "/w/proj/.zuno/audit.db"}, "event database"},
		{"/w/proj", sandbox.Locations{DB: "/w/proj/zuno.db"}, "event database"},
		{"/w/proj", sandbox.Locations{DB: "/W/PROJ/zuno.db"}, "event database"},
		{"/w/proj", sandbox.Locations{DataDir: "/w/proj/data/zuno"}, "data directory"},
		{"/w/proj", sandbox.Locations{DataDir: "/w/proj"}, "data directory"},
		{"/home/u/.local/share/zuno/x", sandbox.Locations{DataDir: "/home/u/.local/share/zuno"}, "data directory"},
		{"/", sandbox.Locations{DB: "/srv/zuno.db"}, "event database"},
		{"/w/proj", sandbox.Locations{DB: "/w/proj2/zuno.db", DataDir: "/w/proj-data"}, ""},
		{"/w/proj", sandbox.Locations{DB: "/w/zuno.db", DataDir: "/w/data"}, ""},
		{"/w/proj", sandbox.Locations{}, ""},
		{"/w/proj", sandbox.Locations{Anchor: "/w/proj/.zuno/anchor.json"}, "anchor"},
		{"/w/proj", sandbox.Locations{Anchor: "/w/anchor.json"}, ""},
		{"/w/proj", sandbox.Locations{Anchor: "/w/proj2/anchor.json"}, ""},
	}
	for _, r := range rows {
		err := r.own.OutsideWorkspace(r.ws)
		switch {
		case r.refused == "" && err != nil:
			t.Errorf("%s %+v: refused: %v", r.ws, r.own, err)
		case r.refused != "" && (domain.CodeOf(err) != sandbox.CodeLogInWorkspace || !strings.Contains(err.Error(), r.refused) ||
			!strings.Contains(err.Error(), "outside")):
			t.Errorf("%s %+v: got %v, want %s naming %s and where to put it", r.ws, r.own, err, sandbox.CodeLogInWorkspace, r.refused)
		}
	}
}

// Where the shell runs natively, the start-of-turn notice says which protections the OS does
// not enforce; a confined run says nothing.
func TestUnenforcedNotice(t *testing.T) {
	list := protections(t, "")
	if n := sandbox.UnenforcedNotice(sandbox.Resolution{ResolutionKind: sandbox.KindConfined}, list); n != "" {
		t.Errorf("confined: %q", n)
	}
	for _, k := range []sandbox.Kind{sandbox.KindTrustedNative, sandbox.KindPlatformNative, sandbox.KindFallback, sandbox.KindFullAccess} {
		n := sandbox.UnenforcedNotice(sandbox.Resolution{ResolutionKind: k}, list)
		for _, s := range []string{string(k), ".git", "zuno.json", own.DataDir, own.DB + "-wal", "file tools"} {
			if !strings.Contains(n, s) {
				t.Errorf("%s: %q does not name %q", k, n, s)
			}
		}
	}
}

// FuzzGuard: the matcher agrees with an independent one (filepath.Rel on lower-cased clean
// paths), and a path's case never changes the answer.
func FuzzGuard(f *testing.F) {
	for _, s := range []string{".git/hooks/x", ".GIT", "zuno.json", "../w/.git", "/home/u/.local/share/zuno/auth.json", "/srv/zuno/events.db-wal", "a/../.zuno/x", ".gitx"} {
		f.Add(s)
	}
	list := sandbox.Protections(sandbox.Config{}, own)
	f.Fuzz(func(t *testing.T, p string) {
		if strings.ContainsRune(p, 0) {
			return
		}
		abs := filepath.ToSlash(filepath.Clean(filepath.Join("/w", p)))
		if filepath.IsAbs(p) {
			abs = filepath.ToSlash(filepath.Clean(p))
		}
		_, got := sandbox.Guard(list, "/w", abs, true)
		want := false
		for _, pr := range list {
			rel, err := filepath.Rel(strings.ToLower(pr.Abs("/w")), strings.ToLower(abs))
			if err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
				want = true
			}
		}
		if got != want {
			t.Fatalf("Guard(%q) = %v, independent matcher %v", abs, got, want)
		}
		if _, upper := sandbox.Guard(list, "/w", strings.ToUpper(abs), true); upper != got && strings.ToLower(strings.ToUpper(abs)) == strings.ToLower(abs) {
			t.Fatalf("case changes the answer for %q", abs)
		}
	})
}

// A workspace below the root of its repository: git there reads the enclosing .git, and the
// project configuration lives beside it, so they are protected as the workspace's own are.
func TestProtectionsOfTheEnclosingRepository(t *testing.T) {
	list := sandbox.Protections(sandbox.Config{}, sandbox.Locations{Repository: "/proj"})
	for p, want := range map[string]bool{"/proj/.git/hooks/pre-commit": true, "/proj/.git/config": true, "/proj/zuno.json": true,
		"/proj/.zuno/zuno.json": true, "/proj/sub/.git": true, "/proj/src/main.go": false, "/proj/sub/main.go": false} {
		if _, got := sandbox.Guard(list, "/proj/sub", p, true); got != want {
			t.Errorf("%s: protected %v, want %v", p, got, want)
		}
	}
}

// Git's places the host found (Locations.Git) join the one list with source git, their
// cover and why, and the guard refuses a write below each; the workspace's .git asks to be
// covered when missing (docs/sandbox.md, "Covered when missing").
func TestProtectionsOfGitsPlaces(t *testing.T) {
	list := sandbox.Protections(sandbox.Config{}, sandbox.Locations{Git: []sandbox.GitPath{
		{Path: "/ws/.husky", Cover: sandbox.CoverDir, Why: "git runs the hooks there"},
		{Path: "/ws/.bare", Why: "the git directory /ws/.git points to"},
		{Path: "", Why: "ignored"},
	}})
	found := 0
	for _, p := range list {
		switch {
		case p.Path == ".git" && p.Cover != sandbox.CoverDir:
			t.Errorf(".git is not covered when missing: %+v", p)
		case p.Source == sandbox.SourceGit:
			found++
			if p.Why == "" || p.Hidden {
				t.Errorf("%+v: no why, or hidden", p)
			}
		}
	}
	if found != 2 {
		t.Errorf("%d git places listed, want 2: %+v", found, list)
	}
	for p, want := range map[string]bool{"/ws/.husky/pre-commit": true, "/ws/.bare/config": true, "/ws/.bare": true,
		"/ws/.huskyx": false, "/ws/src/main.go": false} {
		if _, got := sandbox.Guard(list, "/ws", p, true); got != want {
			t.Errorf("%s: protected %v, want %v", p, got, want)
		}
		if _, got := sandbox.Guard(list, "/ws", p, false); got {
			t.Errorf("%s: hidden from reads", p)
		}
	}
}

// REVIEW25b C1: the trusted layers' places are protected whether they exist or not, and a
// missing one is covered as what it is (docs/sandbox.md, "A trusted layer that does not
// exist yet"): the global directory by a directory, a --config/ZUNO_CONFIG file by a file.
func TestProtectionsOfTrustedLayersNotMadeYet(t *testing.T) {
	list := sandbox.Protections(sandbox.Config{}, sandbox.Locations{Config: []string{"/ws/.config/zuno"},
		ConfigFiles: []string{"/ws/trusted.json"}})
	want := map[string]string{"/ws/.config/zuno": sandbox.CoverDir, "/ws/trusted.json": sandbox.CoverFile}
	for _, p := range list {
		if cover, ok := want[p.Path]; ok {
			if !p.Hidden || p.Source != sandbox.SourceData || p.Cover != cover || !strings.Contains(p.Why, "trusted configuration") {
				t.Errorf("%+v: want hidden, data, covered by %s, why naming the trusted configuration", p, cover)
			}
			delete(want, p.Path)
		}
	}
	if len(want) != 0 {
		t.Errorf("not listed: %v", want)
	}
	if _, ok := sandbox.Guard(list, "/ws", "/ws/trusted.json", true); !ok {
		t.Errorf("the file tools' guard lets the missing trusted file be written")
	}
	if _, ok := sandbox.Guard(list, "/ws", "/ws/.config/zuno/zuno.json", true); !ok {
		t.Errorf("the file tools' guard lets a file be made in the missing global directory")
	}
}
