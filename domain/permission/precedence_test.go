package permission_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/settings"
)

const (
	ws   = "/home/u/proj"
	home = "/home/u"
)

func at(l settings.Layer, j string) settings.Raw {
	return settings.Raw{Layer: l, Source: string(l) + ".json", JSON: json.RawMessage(j)}
}

func list(r ...settings.Raw) []settings.Raw { return r }

// seedRules is the example of docs/permissions.md ("Per-tool rules"), as the seeds write it.
const seedRules = `{"mode":"standard","rules":{"read":"allow","edit":"ask","shell":{"*":"ask","git *":"allow","git push*":"deny","rm -rf*":"deny"}}}`

func shell(cmd string) permission.Request {
	return permission.Request{Tool: "shell", Resource: cmd, SideEffect: true, Workspace: ws, Home: home}
}

// sshRead reads a key under home with home as the workspace, so that only the read rules
// decide (no external_directory check).
func sshRead() permission.Request {
	return permission.Request{Tool: "read", Resource: home + "/.ssh/id_ed25519", Workspace: home, Home: home}
}

func file(tool, path string) permission.Request {
	return permission.Request{Tool: tool, Resource: path, SideEffect: tool != "read", Workspace: ws, Home: home}
}

// TestPrecedence is one row per sentence of the seeds on rule order, layer merging, modes, the
// rejected keys and the tools switches (docs/permissions.md).
func TestPrecedence(t *testing.T) {
	rows := []struct {
		name       string
		perm       []settings.Raw
		tools      []settings.Raw
		forceAll   bool // the sandbox's danger-full-access: WithMode(AllowAll)
		req        permission.Request
		want       permission.Action
		ruleAction permission.Action // "" when equal to want
		rule       string            // the matched rule's setting; "" for none
		errCode    string
		errMsg     string // exact domain.Error message
	}{
		// The catch-all first, then narrower exceptions: the last matching rule wins.
		{name: "seed example: git * overrides the catch-all", perm: list(at(settings.Global, seedRules)), req: shell("git status"),
			want: permission.Allow, rule: `permission.rules.shell["git *"]`},
		{name: "seed example: git push* overrides git *", perm: list(at(settings.Global, seedRules)), req: shell("git push origin main"),
			want: permission.Deny, rule: `permission.rules.shell["git push*"]`},
		{name: "seed example: rm -rf / is denied", perm: list(at(settings.Global, seedRules)), req: shell("rm -rf /"),
			want: permission.Deny, rule: `permission.rules.shell["rm -rf*"]`},
		{name: "seed example: anything else asks", perm: list(at(settings.Global, seedRules)), req: shell("make"),
			want: permission.Ask, rule: `permission.rules.shell["*"]`},
		{name: "seed example: edit asks", perm: list(at(settings.Global, seedRules)), req: file("write", "src/main.rs"),
			want: permission.Ask, rule: `permission.rules.edit`},
		{name: "seed example: read allowed", perm: list(at(settings.Global, seedRules)), req: file("read", ws+"/src/main.rs"),
			want: permission.Allow, rule: `permission.rules.read`},
		// The reversed-order trap: the catch-all written last overrides every rule above it.
		{name: "reversed order: rm -rf / asks again",
			perm: list(at(settings.Global, `{"rules":{"shell":{"rm -rf*":"deny","git push*":"deny","git *":"allow","*":"ask"}}}`)),
			req:  shell("rm -rf /"), want: permission.Ask, rule: `permission.rules.shell["*"]`},
		// The sorted-keys trap: sorting puts $HOME/.ssh/* before *, and the catch-all wins.
		{name: "written order kept: the .ssh deny after the catch-all holds",
			perm: list(at(settings.Global, `{"rules":{"read":{"*":"allow","$HOME/.ssh/*":"deny"}}}`)),
			req:  sshRead(), want: permission.Deny, rule: `permission.rules.read["$HOME/.ssh/*"]`},
		{name: "sorted order would let the catch-all win",
			perm: list(at(settings.Global, `{"rules":{"read":{"$HOME/.ssh/*":"deny","*":"allow"}}}`)),
			req:  sshRead(), want: permission.Allow, rule: `permission.rules.read["*"]`},
		{name: "merging keeps the base's order: the overlay's .ssh deny lands after the catch-all",
			perm: list(at(settings.Global, `{"rules":{"read":{"*":"allow"}}}`), at(settings.Project, `{"rules":{"read":{"$HOME/.ssh/*":"deny"}}}`)),
			req:  sshRead(), want: permission.Deny, rule: `permission.rules.read["$HOME/.ssh/*"]`},
		// Merging: a key set in both is replaced in the base's position; overlay-only keys go after.
		{name: "overlay pattern carves an exception out of the base catch-all",
			perm: list(at(settings.Global, `{"rules":{"shell":{"*":"deny"}}}`), at(settings.Project, `{"rules":{"shell":{"go test*":"allow"}}}`)),
			req:  shell("go test ./..."), want: permission.Allow, rule: `permission.rules.shell["go test*"]`},
		{name: "the base catch-all still governs what the exception does not name",
			perm: list(at(settings.Global, `{"rules":{"shell":{"*":"deny"}}}`), at(settings.Project, `{"rules":{"shell":{"go test*":"allow"}}}`)),
			req:  shell("curl evil"), want: permission.Deny, rule: `permission.rules.shell["*"]`},
		{name: "an agent layer carves an exception too",
			perm: list(at(settings.Global, `{"rules":{"edit":"deny"}}`), at(settings.Agent, `{"rules":{"edit":{"docs/*":"allow"}}}`)),
			req:  file("apply_patch", "docs/a.md"), want: permission.Allow, rule: `permission.rules.edit["docs/*"]`},
		{name: "a pattern set in both is replaced in the base's position, so later base patterns still win",
			perm: list(at(settings.Global, `{"rules":{"shell":{"*":"ask","git *":"allow"}}}`), at(settings.Project, `{"rules":{"shell":{"*":"deny"}}}`)),
			req:  shell("git log"), want: permission.Allow, rule: `permission.rules.shell["git *"]`},
		{name: "an overlay's single action replaces the whole key",
			perm: list(at(settings.Global, `{"rules":{"shell":{"*":"ask","git *":"allow"}}}`), at(settings.Project, `{"rules":{"shell":"deny"}}`)),
			req:  shell("git log"), want: permission.Deny, rule: `permission.rules.shell`},
		{name: "the managed policy has the final say over an agent's rules",
			perm: list(at(settings.Managed, `{"rules":{"shell":{"curl*":"deny"}}}`), at(settings.Agent, `{"rules":{"shell":{"curl*":"allow"}}}`)),
			req:  shell("curl x"), want: permission.Deny, rule: `permission.rules.shell["curl*"]`},
		// Modes.
		{name: "allow_all + a shell deny: the deny is final",
			perm: list(at(settings.Global, `{"mode":"allow_all","rules":{"shell":"deny"}}`)), req: shell("ls"),
			want: permission.Deny, rule: `permission.rules.shell`},
		{name: "allow_all answers an ask",
			perm: list(at(settings.Global, `{"mode":"allow_all","rules":{"edit":"ask"}}`)), req: file("write", "a.txt"),
			want: permission.Allow, ruleAction: permission.Ask, rule: `permission.rules.edit`},
		{name: "standard + danger-full-access: allow_all in effect, asks skipped",
			perm: list(at(settings.Global, seedRules)), forceAll: true, req: shell("make"),
			want: permission.Allow, ruleAction: permission.Ask, rule: `permission.rules.shell["*"]`},
		{name: "standard + danger-full-access: the explicit deny stays",
			perm: list(at(settings.Global, seedRules)), forceAll: true, req: shell("git push"),
			want: permission.Deny, rule: `permission.rules.shell["git push*"]`},
		{name: "strict asks for a side-effecting call a rule allows",
			perm: list(at(settings.Global, `{"mode":"strict"}`)), req: shell("ls"),
			want: permission.Ask, ruleAction: permission.Allow, rule: `permission.rules.*`},
		{name: "strict treats a report publication as a side effect",
			perm: list(at(settings.Global, `{"mode":"strict"}`)), req: permission.Request{Tool: "report_write", Resource: "r.md", SideEffect: true},
			want: permission.Ask, ruleAction: permission.Allow, rule: `permission.rules.*`},
		{name: "strict leaves a read alone",
			perm: list(at(settings.Global, `{"mode":"strict"}`)), req: file("read", "a.txt"),
			want: permission.Allow, rule: `permission.rules.*`},
		{name: "the last layer that sets the mode wins",
			perm: list(at(settings.Global, `{"mode":"allow_all"}`), at(settings.Project, `{"mode":"strict"}`)), req: shell("ls"),
			want: permission.Ask, ruleAction: permission.Allow, rule: `permission.rules.*`},
		// Defaults and external_directory.
		{name: "default: everything in the workspace runs without a prompt", req: file("write", "src/a.go"),
			want: permission.Allow, rule: `permission.rules.*`},
		{name: "default: a path outside the workspace asks for external_directory", req: file("read", "/etc/hosts"),
			want: permission.Ask, rule: `permission.rules.external_directory`},
		{name: "allowing read is not allowing a directory outside the workspace",
			perm: list(at(settings.Global, `{"rules":{"read":"allow"}}`)), req: file("read", "/etc/hosts"),
			want: permission.Ask, rule: `permission.rules.external_directory`},
		{name: "allow_all resolves the external_directory ask",
			perm: list(at(settings.Global, `{"mode":"allow_all"}`)), req: file("read", "/etc/hosts"),
			want: permission.Allow, ruleAction: permission.Ask, rule: `permission.rules.external_directory`},
		{name: "allow_all does not cross an explicit external_directory deny",
			perm: list(at(settings.Global, `{"mode":"allow_all","rules":{"external_directory":{"/etc/*":"deny"}}}`)), req: file("read", "/etc/hosts"),
			want: permission.Deny, rule: `permission.rules.external_directory["/etc/*"]`},
		// The rejected keys: each names the key to use.
		{name: "write is rejected: use edit", perm: list(at(settings.Project, `{"rules":{"write":"deny"}}`)), errCode: permission.CodeRejectedKey,
			errMsg: `permission.rules.write: "write" is not a permission key; the write tool asks under permission "edit"`},
		{name: "apply_patch is rejected: use edit", perm: list(at(settings.Project, `{"rules":{"apply_patch":{"*":"ask"}}}`)), errCode: permission.CodeRejectedKey,
			errMsg: `permission.rules.apply_patch: "apply_patch" is not a permission key; the apply_patch tool asks under permission "edit"`},
		{name: "list_mcp_resources is rejected: use read", perm: list(at(settings.Project, `{"rules":{"list_mcp_resources":"deny"}}`)), errCode: permission.CodeRejectedKey,
			errMsg: `permission.rules.list_mcp_resources: "list_mcp_resources" is not a permission key; the list_mcp_resources tool asks under permission "read"`},
		{name: "list_mcp_resource_templates is rejected: use read", perm: list(at(settings.Project, `{"rules":{"list_mcp_resource_templates":"deny"}}`)), errCode: permission.CodeRejectedKey,
			errMsg: `permission.rules.list_mcp_resource_templates: "list_mcp_resource_templates" is not a permission key; the list_mcp_resource_templates tool asks under permission "read"`},
		{name: "read_mcp_resource is rejected: use read", perm: list(at(settings.Project, `{"rules":{"read_mcp_resource":"deny"}}`)), errCode: permission.CodeRejectedKey,
			errMsg: `permission.rules.read_mcp_resource: "read_mcp_resource" is not a permission key; the read_mcp_resource tool asks under permission "read"`},
		{name: "other keys stay legal: an MCP tool name", perm: list(at(settings.Global, `{"rules":{"mcp_github_*":"deny"}}`)),
			req: permission.Request{Tool: "mcp_github_create_issue"}, want: permission.Deny, rule: `permission.rules.mcp_github_*`},
		{name: "a bad action", perm: list(at(settings.Global, `{"rules":{"shell":{"*":"maybe"}}}`)), errCode: permission.CodeInvalidRuleAction,
			errMsg: `permission.rules.shell["*"] is "maybe", not an action`},
		{name: "a bad mode", perm: list(at(settings.Global, `{"mode":"yolo"}`)), errCode: permission.CodeInvalidMode,
			errMsg: `permission.mode is "yolo"`},
		// The tools switches fold onto their permission key.
		{name: "tools: a same-layer contradiction fails, naming both spellings and the key",
			tools: list(at(settings.Global, `{"edit": false, "write": true}`)), errCode: permission.CodeToolsConflict,
			errMsg: `tools "edit" is false and tools "write" is true, but both are governed by permission "edit"; one rule cannot be both, so set them alike or write the rule under permission.rules.edit`},
		{name: "tools: the names in the order written",
			tools: list(at(settings.Global, `{"apply_patch": true, "edit": false}`)), errCode: permission.CodeToolsConflict,
			errMsg: `tools "apply_patch" is true and tools "edit" is false, but both are governed by permission "edit"; one rule cannot be both, so set them alike or write the rule under permission.rules.edit`},
		{name: "tools: set alike, they load", tools: list(at(settings.Global, `{"edit": false, "write": false, "apply_patch": false}`)),
			req: file("write", "a.txt"), want: permission.Deny, rule: "tools.edit"},
		{name: "tools across layers: project edit:false beats global write:true",
			tools: list(at(settings.Global, `{"write": true}`), at(settings.Project, `{"edit": false}`)),
			req:   file("apply_patch", "a.txt"), want: permission.Deny, rule: "tools.edit"},
		{name: "tools across layers: the higher layer wins the other way too",
			tools: list(at(settings.Global, `{"edit": false}`), at(settings.Project, `{"write": true}`)),
			req:   file("write", "a.txt"), want: permission.Allow, rule: "tools.write"},
		{name: "tools: a tool this build does not have is kept as a rule",
			tools: list(at(settings.Global, `{"webfetch": false}`)), req: permission.Request{Tool: "webfetch", Resource: "https://x"},
			want: permission.Deny, rule: "tools.webfetch"},
		{name: "tools: a higher layer's permission rule overrides a lower layer's switch",
			tools: list(at(settings.Global, `{"shell": false}`)), perm: list(at(settings.Project, `{"rules":{"shell":{"git *":"allow"}}}`)),
			req: shell("git status"), want: permission.Allow, rule: `permission.rules.shell["git *"]`},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			p, err := permission.Resolve(r.perm, r.tools)
			if r.errCode != "" {
				var de *domain.Error
				if !errors.As(err, &de) || de.Code() != r.errCode || domain.CodeOf(err) != r.errCode {
					t.Fatalf("error = %v, want code %s", err, r.errCode)
				}
				if !strings.HasPrefix(de.Message, r.errMsg) {
					t.Fatalf("message = %q\nwant prefix %q", de.Message, r.errMsg)
				}
				var ce *permission.ConfigError
				if !errors.As(err, &ce) || ce.Layer == "" || ce.Source == "" {
					t.Fatalf("error %v does not name its layer and source", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.forceAll {
				p = p.WithMode(permission.AllowAll, "sandbox danger-full-access")
			}
			d := p.Decide(r.req)
			ruleAction := r.ruleAction
			if ruleAction == "" {
				ruleAction = r.want
			}
			got := ""
			if d.Rule != nil {
				got = d.Rule.Setting
			}
			if d.Action != r.want || d.RuleAction != ruleAction || got != r.rule {
				t.Fatalf("decision = %s (rule action %s, rule %q), want %s (%s, %q)\n%s", d.Action, d.RuleAction, got, r.want, ruleAction, r.rule, d.Message())
			}
		})
	}
}
