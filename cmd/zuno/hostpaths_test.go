package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A test may read nothing outside its own work directory: a fixture that names a host path
// passes only on the machine that has it (old_log.txtar once named /tmp/b5, which only the
// machine that recorded it had, and failed on every other). This scan reads every testscript
// and fixture for absolute paths and allows only the system's own directories, which every
// machine the tests run on has. A recorded log may name the paths of the machine that
// recorded it: the script declares each one in a comment, "# recorded path: P (why)", and
// must not need it.

// systemDirs are the top-level directories a Debian machine has before anything runs: a
// path under them is the machine's, not a previous run's.
var systemDirs = []string{"bin", "dev", "etc", "lib", "lib64", "proc", "sbin", "sys", "usr"}

// hostPath finds an absolute path starting at a word boundary. It is not preceded by what
// makes it part of something else: a name or variable ($WORK/x, ${X}/x, ~/x, a script's own
// placeholder @WORK@/x that it replaces with $WORK), a URL (host:port/x),
// a path (a/b), a command substitution ($(…)/x), or a regular expression (\S+/x, .*/x).
var hostPath = regexp.MustCompile(`(?:^|[^\w.$}~@/)+*?\\:-])(/[\w.-]+(?:/[\w.-]+)*)`)

// quotedVar is a variable closed by a quote right before a path ("$HOME"/.ssh, '$WORK'/x).
var quotedVar = regexp.MustCompile(`(\$\{?\w+\}?)\\?["']`)

// appended is a string appended in code to an expression (homedir()+"/.ssh", env.X + \"/zuno\"):
// the path is relative to what it is appended to (a host path appended to a string is not
// found: no fixture spells one so).
var appended = regexp.MustCompile(`\+\s*\\?["']`)

// apiRoot is an HTTP API's version root (/v1/chat/completions): a URL path, not a file.
var apiRoot = regexp.MustCompile(`^v[0-9]+$`)

// chatCommand is one of zuno chat's slash commands standing alone (/agent, /resume: docs/tui.md),
// which the chat's scripts and screens type and show: a command, not a file.
var chatCommand = regexp.MustCompile(`^/(agent|goal|help|model|new|quit|resume)$`)

// declared is a script's "# recorded path: P" line.
var declared = regexp.MustCompile(`(?m)^# recorded path: (/\S+)`)

// hostPaths returns the absolute paths in text that are neither under a system directory nor
// under a declared recorded path. Comment lines of a script are prose, not read.
func hostPaths(text string) []string {
	allowed := []string{}
	for _, m := range declared.FindAllStringSubmatch(text, -1) {
		allowed = append(allowed, m[1])
	}
	var found []string
	for line := range strings.Lines(text) {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		line = appended.ReplaceAllString(quotedVar.ReplaceAllString(line, "$1"), "+")
		for _, m := range hostPath.FindAllStringSubmatch(line, -1) {
			p := m[1]
			top := strings.SplitN(strings.TrimPrefix(p, "/"), "/", 2)[0]
			if slices.Contains(systemDirs, top) || apiRoot.MatchString(top) || chatCommand.MatchString(p) || slices.ContainsFunc(allowed, func(a string) bool {
				return p == a || strings.HasPrefix(p, a+"/")
			}) {
				continue
			}
			found = append(found, p)
		}
	}
	return found
}

func TestHostPathsScan(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"a recorded workspace", `{"directory":"/tmp/b5/old/ws"}`, []string{"/tmp/b5/old/ws"}},
		{"a placeholder the script replaces", `"path": "@WORK@/ws/notes.txt"`, nil},
		{"a chat command alone", "type /resume then /agent plan", nil},
		{"a chat command's name as a directory", "cat /resume/x", []string{"/resume/x"}},
		{"declared", "# recorded path: /tmp/b5 (recorded elsewhere)\n" + `{"directory":"/tmp/b5/old/ws"}`, nil},
		{"declared elsewhere is not this", "# recorded path: /tmp/b5\n" + `cat /tmp/b55/x`, []string{"/tmp/b55/x"}},
		{"a home directory", "exec cat /home/ci/.config/zuno/zuno.json", []string{"/home/ci/.config/zuno/zuno.json"}},
		{"a command's argument", "exec zuno run --dir /var/tmp/x", []string{"/var/tmp/x"}},
		{"root's home", `"path": "/root/.ssh/id_rsa"`, []string{"/root/.ssh/id_rsa"}},
		{"the system", "exec sh -c 'cat /etc/passwd; /usr/bin/env; ls /dev/null /proc/self'", nil},
		{"under $WORK", "exec zuno run --dir $WORK/ws\nstdout '\"globalDir\": \"'$WORK'/cfg/zuno\"'", nil},
		{"a URL path", "POST http://127.0.0.1:8080/v1/chat", nil},
		{"a regular expression", `stdout 'scripted:\S+/s\.json'` + "\nstdout '.*/linked'", nil},
		{"a relative path", "cp a/b/c d/e", nil},
		{"a substitution", `"$(cd $WORK/.. && pwd)/review-outside"`, nil},
		{"a comment", "# a write to /tmp never reaches the host", nil},
		{"a quoted variable", `rm -rf "$HOME"/.ssh \"$HOME\"/.ssh '$WORK'/x`, nil},
		{"an HTTP request line", "grep 'POST /v1/chat/completions' requests", nil},
		{"a quoted host path", `cat "/tmp/x"`, []string{"/tmp/x"}},
		{"a string appended in code", `node -e 'f(os.homedir()+"/.ssh/k"); g(process.env.X + \"/zuno\")'`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hostPaths(tc.text); !slices.Equal(got, tc.want) {
				t.Fatalf("hostPaths = %q, want %q", got, tc.want)
			}
		})
	}
}

// fixtureExts are the files tests read as fixtures; fuzz corpora (testdata/fuzz) are inputs,
// not paths, and recorded HTTP exchanges name URL paths.
var fixtureExts = []string{".txtar", ".json", ".jsonl", ".sh", ".md", ".patch", ".txt"}

func TestFixturesNameNoHostPaths(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	scanned := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "fuzz" || strings.HasPrefix(d.Name(), ".zuno")) {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, p)
		inFixtures := strings.Contains(rel, "testdata"+string(filepath.Separator)) || strings.Contains(rel, "demodata"+string(filepath.Separator))
		if d.IsDir() || !inFixtures || d.Name() == "README.md" || !slices.Contains(fixtureExts, filepath.Ext(p)) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		scanned++
		for _, hp := range hostPaths(string(b)) {
			t.Errorf("%s names %s, a path outside the test's work directory: use $WORK (or t.TempDir()), or, for a path a recorded log holds, declare it with \"# recorded path: %s (why)\" and make the test pass without it", rel, hp, hp)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 50 {
		t.Fatalf("scanned %d fixtures; the walk missed the testdata directories", scanned)
	}
}
