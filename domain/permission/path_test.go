package permission_test

import (
	"testing"

	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/settings"
)

// TestPathSpellings: the table of routes around a path rule. Every rule matches the path as
// given and its normalised spelling; a deny also matches the ..-resolved path, and an absolute
// deny the workspace-relative tail (and the other way round); an allow is never widened.
func TestPathSpellings(t *testing.T) {
	// askAll makes every unmatched read ask, so that a rule that does not match is visible.
	const askAll = `{"rules":{"*":"ask",`
	rows := []struct {
		name, rules, tool, resource string
		workspace                   string
		want                        permission.Action
	}{
		// Normalised spellings match allow and deny alike.
		{"./ prefix matches", askAll + `"read":{"src/main.rs":"allow"}}}`, "read", "./src/main.rs", ws, permission.Allow},
		{"doubled separator matches", askAll + `"read":{"src/main.rs":"allow"}}}`, "read", "src//main.rs", ws, permission.Allow},
		{"backslashes match", askAll + `"read":{"src/main.rs":"allow"}}}`, "read", `src\main.rs`, ws, permission.Allow},
		{"inner . segment matches", askAll + `"edit":{"src/main.rs":"deny"}}}`, "write", "src/./main.rs", ws, permission.Deny},
		{"a backslash pattern matches a slash path", askAll + `"read":{"src\\main.rs":"allow"}}}`, "read", "src/main.rs", ws, permission.Allow},
		// .. is resolved for deny only.
		{"deny covers the ..-resolved path", askAll + `"read":{"secrets/*":"deny"}}}`, "read", "src/../secrets/key", ws, permission.Deny},
		{"deny covers ..-resolved backslashes", askAll + `"read":{"secrets/*":"deny"}}}`, "read", `src\..\secrets\key`, ws, permission.Deny},
		{"allow does not follow ..", askAll + `"read":{"secrets/*":"allow"}}}`, "read", "src/../secrets/key", ws, permission.Ask},
		// Absolute and relative: deny reaches both ways, allow neither.
		{"relative deny covers the absolute path's tail", askAll + `"read":{"secrets/*":"deny"}}}`, "read", ws + "/secrets/key", ws, permission.Deny},
		{"absolute deny covers a relative path", askAll + `"read":{"` + ws + `/secrets/*":"deny"}}}`, "read", "secrets/key", ws, permission.Deny},
		{"absolute deny covers a ..-relative path", askAll + `"read":{"` + ws + `/secrets/*":"deny"}}}`, "read", "a/../secrets/key", ws, permission.Deny},
		{"relative allow does not cover the absolute path", askAll + `"read":{"src/main.rs":"allow"}}}`, "read", ws + "/src/main.rs", ws, permission.Ask},
		{"absolute allow does not cover a relative path", askAll + `"read":{"` + ws + `/src/main.rs":"allow"}}}`, "read", "src/main.rs", ws, permission.Ask},
		{"* crosses separators: */src/* covers the absolute path", askAll + `"read":{"*/src/*":"allow"}}}`, "read", ws + "/src/a/b.rs", ws, permission.Allow},
		{"~ expands to home", askAll + `"read":{"~/proj/*":"allow"}}}`, "read", ws + "/a.rs", ws, permission.Allow},
		{"$HOME expands to home", askAll + `"edit":{"$HOME/proj/*":"allow"}}}`, "apply_patch", ws + "/a.rs", ws, permission.Allow},
		// lsp names its file relative to the workspace, or absolute when not nested: one deny covers both.
		{"lsp deny, relative layout", askAll + `"lsp":{"secrets.rs":"deny"}}}`, "lsp", "secrets.rs", ws, permission.Deny},
		{"lsp deny, absolute layout", askAll + `"lsp":{"secrets.rs":"deny"}}}`, "lsp", ws + "/secrets.rs", ws, permission.Deny},
		{"list is a path key", askAll + `"list":{"secrets":"deny"}}}`, "list", "./secrets/", ws, permission.Deny},
		// Windows spellings.
		{"windows: relative deny covers the absolute tail", askAll + `"read":{"secrets/*":"deny"}}}`, "read", `C:\ws\secrets\key`, `C:\ws`, permission.Deny},
		{"windows: absolute deny covers a relative path", askAll + `"read":{"C:/ws/secrets/*":"deny"}}}`, "read", `secrets\key`, `C:\ws`, permission.Deny},
		// Shell commands are not paths: no normalisation.
		{"shell is matched as written", askAll + `"shell":{"cat ./x":"deny"}}}`, "shell", "cat x", ws, permission.Ask},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			p, err := permission.Resolve(list(at(settings.Global, r.rules)), nil)
			if err != nil {
				t.Fatal(err)
			}
			d := p.Decide(permission.Request{Tool: r.tool, Resource: r.resource, Workspace: r.workspace, Home: home})
			if d.Checks[0].Action != r.want {
				t.Fatalf("%s %q = %s, want %s (%s)", r.tool, r.resource, d.Checks[0].Action, r.want, d.Checks[0].Reason)
			}
		})
	}
}

// TestExternalDirectory: a path outside the workspace needs external_directory for its
// directory, spelled one way everywhere.
func TestExternalDirectory(t *testing.T) {
	spellings := []struct{ dir, want string }{
		{`\\?\C:\build-cache`, "C:/build-cache/*"},
		{`\\?\C:\build-cache\`, "C:/build-cache/*"},
		{`C:\build-cache`, "C:/build-cache/*"},
		{"/tmp//x/./y/", "/tmp/x/y/*"},
		{"/tmp/x/../y", "/tmp/y/*"},
		{"/", "/*"},
	}
	for _, s := range spellings {
		if got := permission.ExternalDirResource(s.dir); got != s.want {
			t.Errorf("ExternalDirResource(%q) = %q, want %q", s.dir, got, s.want)
		}
	}

	p, err := permission.Resolve(list(at(settings.Global, `{"rules":{"external_directory":{"/srv/cache/*":"allow"}}}`)), nil)
	if err != nil {
		t.Fatal(err)
	}
	rows := []struct {
		name, tool, resource string
		want                 permission.Action
		dir                  string
	}{
		{"inside the workspace: one check", "read", ws + "/a.go", permission.Allow, ""},
		{"granted directory", "write", "/srv/cache/a.bin", permission.Allow, "/srv/cache/*"},
		{"a file names its directory", "read", "/etc/hosts", permission.Ask, "/etc/*"},
		{"list names the directory itself", "list", "/etc", permission.Ask, "/etc/*"},
		{".. out of the workspace", "read", "../other/x", permission.Ask, "/home/u/other/*"},
		{"a link-like climb through the workspace", "read", ws + "/../other/x", permission.Ask, "/home/u/other/*"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			d := p.Decide(permission.Request{Tool: r.tool, Resource: r.resource, Workspace: ws, Home: home})
			if d.Action != r.want {
				t.Fatalf("action = %s, want %s (%s)", d.Action, r.want, d.Reason)
			}
			if r.dir == "" {
				if len(d.Checks) != 1 {
					t.Fatalf("checks = %+v, want only the tool's own", d.Checks)
				}
				return
			}
			if len(d.Checks) != 2 || d.Checks[1].Key != permission.ExternalDirectory || d.Checks[1].Resource != r.dir || d.Checks[1].Always != r.dir {
				t.Fatalf("checks = %+v, want external_directory %s", d.Checks, r.dir)
			}
			if r.want == permission.Ask && d.Key != permission.ExternalDirectory {
				t.Fatalf("governing check = %s, want external_directory", d.Key)
			}
		})
	}
}
