package sandbox

import (
	"path/filepath"
	"strings"
	"testing"
)

// The parsers of what a repository (the agent's to shape) says: never a panic, every path
// they return absolute and clean, so a protection is never relative to somewhere else, and
// no command line (a configuration value, a hook, a hook manager's command) names a path
// that is none or the work tree itself.
func FuzzGitPathsParsers(f *testing.F) {
	for _, s := range []string{
		"gitdir: ../.git/modules/sub\n", "gitdir: /abs/dir", "gitdir:", "gitdir:   \n", "nothing",
		"file:.git/config\x00core.hookspath\n.husky\x00file:/x/y\x00include.path\n../a\x00",
		"command line:\x00core.fsmonitor\ntrue\x00", "file:\x00k\x00", "\x00\x00\x00", " ", "!/bin/sh -c x", "\"./x y\" a",
		"sh -c 'bash -c \"python3 -m tools.x\"'", "-c core.fsmonitor='sh x.sh' -C sub --exec-path=bin status", "env A=b:c timeout 5 node ./x.js",
		". \"$(dirname \"$0\")/h\"", "if [ -x a ]; then ./a; fi <in", "$(", "ARGS=(hook-impl --config=.pre-commit-config.yaml)",
		"    command: ['scripts/oc.sh', '--fix']", "run: |", "- entry: \"scripts/x.sh\"", "[", "[]", "['",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		const root = "/ws"
		if p := parseGitFile(b, root); p != "" && (!filepath.IsAbs(p) || filepath.Clean(p) != p) {
			t.Fatalf("parseGitFile(%q) = %q: not absolute and clean", b, p)
		}
		for _, e := range parseConfigList(b, root) {
			if !filepath.IsAbs(e.origin) || filepath.Clean(e.origin) != e.origin || e.key != strings.ToLower(e.key) {
				t.Fatalf("parseConfigList(%q): %+v", b, e)
			}
		}
		if m := commandKey.FindStringSubmatch(string(b)); m != nil {
			namesOf(flowList(unquote(m[3])))
		}
		for _, names := range []commandNames{namesOf(string(b)), gitArgsNames(string(b))} {
			for _, n := range names.paths {
				if n.path == "" || n.path == "." || n.path == "/" || strings.ContainsRune(n.path, 0) {
					t.Fatalf("%q names %+v: a path that is none, or the work tree itself", b, n)
				}
			}
		}
	})
}
