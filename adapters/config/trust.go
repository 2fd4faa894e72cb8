package config

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zuno-run/zuno/domain/permission"
)

// hostCommandKeys are the top-level keys whose entries name a program to run on the host
// (docs/config.md, "Trust"). shell names one itself.
var hostCommandKeys = []string{"mcp", "lsp", "formatter", "productAgent"}

// grants are the sandbox values that give host authority; the project layer may not set them.
// Values are compared folded (case, '_' for '-'), as a lenient reader downstream might.
var grants = []struct{ key, value, fix string }{
	{"onUnavailable", "run-unconfined", "--sandbox-on-unavailable run-unconfined or ZUNO_SANDBOX_ON_UNAVAILABLE=run-unconfined for one run"},
	{"backend", "native", "--sandbox-backend native or ZUNO_SANDBOX_BACKEND=native for one run"},
	{"mode", "danger-full-access", "--sandbox danger-full-access for one run"},
}

// checkTrust refuses what a checked-in file may not say about its own host authority. Keys
// are matched without regard to case at every level, so a spelling that a case-insensitive
// decoder downstream would accept cannot slip past. An entry's enabled:false or disabled:true
// changes nothing: that switch sits in the layer the checkout controls.
func checkTrust(docs []Document, p Paths) error {
	admitted, err := admittedRoots(docs)
	if err != nil {
		return err
	}
	hostOK := p.ProjectRoot != "" && slices.Contains(admitted, canonical(p.ProjectRoot))
	strict := strictBelowProject(docs)
	below := toolOutputBelowProject(docs)
	trustedMCP := trustedMCPServers(docs)
	for _, d := range docs {
		if d.Layer.Trusted() {
			continue
		}
		if err := checkProjectToolOutput(d, below, p); err != nil {
			return err
		}
		if err := checkProjectMCP(d, trustedMCP, p); err != nil {
			return err
		}
		if err := checkProjectDoc(d, p, hostOK, strict); err != nil {
			return err
		}
	}
	return nil
}

// strictBelowProject reports whether the layers the project layer overrides (the global file)
// leave permission.mode strict: the user chose to be asked for every side-effecting call, and
// a checked-in file may not take that back (docs/permissions.md).
func strictBelowProject(docs []Document) bool {
	strict := false
	for _, d := range docs {
		if !d.Layer.Trusted() {
			break // docs are in layer order: what follows the project layer overrides it anyway
		}
		for _, m := range memberValue(d.Node, "permission").Members {
			if strings.EqualFold(m.Key, "mode") {
				strict = fold(m.Value.Raw) == "strict"
			}
		}
	}
	return strict
}

func checkProjectDoc(d Document, p Paths, hostOK, strict bool) error {
	global := filepath.Join(p.GlobalDir, "zuno.json")
	for _, m := range d.Node.Members {
		switch {
		case strings.EqualFold(m.Key, "trust"):
			return untrusted(d, m.Offset, "trust", "a repository may not vouch for itself",
				fmt.Sprintf("move trust to the global file %s", global))
		case strings.EqualFold(m.Key, "sandbox"):
			for _, s := range m.Value.Members {
				for _, g := range grants {
					if strings.EqualFold(s.Key, g.key) && fold(s.Value.Raw) == g.value {
						return untrusted(d, s.Offset, "sandbox."+g.key,
							fmt.Sprintf("%q grants host execution, and a checked-in file may not grant it to itself", g.value),
							fmt.Sprintf("set it in the global file %s, or pass %s", global, g.fix))
					}
				}
			}
		case slices.ContainsFunc(trustedOnly, func(k trustedKey) bool { return strings.EqualFold(k.key, m.Key) }):
			return trustedOnlyKey(d, m, global)
		case strings.EqualFold(m.Key, "permission"):
			if err := checkProjectPermission(d, m.Value, global, strict); err != nil {
				return err
			}
		case strings.EqualFold(m.Key, "tools"):
			if err := checkProjectTools(d, m.Value, global); err != nil {
				return err
			}
		case strings.EqualFold(m.Key, "provider"):
			if err := checkProjectProvider(d, m.Value, global); err != nil {
				return err
			}
		case strings.EqualFold(m.Key, "shell") && hasMember(m.Value, "env"):
			// What host variables a model-assembled command sees is the host's decision
			// (docs/tools.md, "What a shell command inherits"), even in an admitted checkout.
			off, _ := memberOffset(m.Value, "env")
			return untrusted(d, off, "shell.env", "it decides which host variables tool commands see, and only the host may decide that",
				fmt.Sprintf("set shell.env.exclude in the global file %s (or --config, or the managed policy)", global))
		case strings.EqualFold(m.Key, "skills") && hasMember(m.Value, "paths"), strings.EqualFold(m.Key, "memory") && hasMember(m.Value, "review"):
			return projectSkillsMemory(d, m, global)
		case hostOK:
		case strings.EqualFold(m.Key, "shell"):
			return hostCommand(d, m.Offset, "shell", p, global)
		case slices.ContainsFunc(hostCommandKeys, func(k string) bool { return strings.EqualFold(k, m.Key) }):
			if path, off, ok := findCommand(m.Value, m.Key); ok {
				return hostCommand(d, off, path, p, global)
			}
			if path, off, ok := findKey(m.Value, m.Key, "url"); ok && strings.EqualFold(m.Key, "mcp") {
				return remoteServer(d, off, path, p, global)
			}
		}
	}
	return nil
}

// providerReach are the provider settings that decide where prompts and keys go; the project
// layer may not set them (docs/config.md, "Providers"): a checkout pointing openai at its own
// server would receive every prompt and the user's key.
var providerReach = []string{"family", "options.baseURL", "options.apiKey", "options.headers"}

func checkProjectProvider(d Document, providers Node, global string) error {
	for _, p := range providers.Members {
		for _, k := range providerReach {
			parts := strings.Split(k, ".")
			n := p.Value
			for _, part := range parts[:len(parts)-1] {
				n = memberValue(n, part)
			}
			if off, ok := memberOffset(n, parts[len(parts)-1]); ok {
				return untrusted(d, off, "provider."+p.Key+"."+k, "it decides where prompts and the provider key are sent",
					fmt.Sprintf("set it in the global file %s (or --config, or the managed policy)", global))
			}
		}
	}
	return nil
}

// memberValue is the value of the first member named key (case folded), the zero Node if none.
func memberValue(n Node, key string) Node {
	for _, m := range n.Members {
		if strings.EqualFold(m.Key, key) {
			return m.Value
		}
	}
	return Node{}
}

// checkProjectPermission refuses the permission settings that reach past the workspace: the
// project layer may carve exceptions out of the rules (docs/permissions.md), but a checked-in
// file that set allow_all, or allowed external_directory, would let the agent's next session
// write anywhere on the host without asking — and the sandboxed shell can write that file.
// A rule is judged by what its key could match, as the gate matches it, not by its spelling:
// "external*", "*directory" and "*" reach external_directory as surely as the name itself.
func checkProjectPermission(d Document, perm Node, global string, strict bool) error {
	for _, m := range perm.Members {
		switch {
		case strings.EqualFold(m.Key, "mode") && fold(m.Value.Raw) == "allow-all":
			return untrusted(d, m.Offset, "permission.mode", `"allow_all" skips every ask, and a checked-in file may not lift them for itself`,
				fmt.Sprintf("set it in the global file %s", global))
		case strings.EqualFold(m.Key, "mode") && strict && fold(m.Value.Raw) != "strict":
			return untrusted(d, m.Offset, "permission.mode", fmt.Sprintf("the global file sets strict, and %s would drop the asks it keeps for every side-effecting call", m.Value.Raw),
				fmt.Sprintf("change the mode in the global file %s, or remove it from this file", global))
		case strings.EqualFold(m.Key, "rules"):
			for _, r := range m.Value.Members {
				protected, ok := reachesProtected(r.Key)
				if !ok {
					continue
				}
				if off, ok := allows(r); ok {
					return untrusted(d, off, "permission.rules."+r.Key, loosens(r.Key, protected),
						fmt.Sprintf("set the rule in the global file %s, or answer the ask when it comes", global))
				}
			}
		}
	}
	return nil
}

// checkProjectTools refuses a tools switch that turns on a permission the project layer may
// not loosen: the permission evaluator folds each switch onto its permission key as a whole
// rule (true is allow), so "tools": {"external_directory": true} is the rule
// "external_directory": "allow" under another name (docs/permissions.md).
func checkProjectTools(d Document, tools Node, global string) error {
	for _, t := range tools.Members {
		if string(t.Value.Raw) != "true" {
			continue
		}
		if protected, ok := reachesProtected(permission.KeyFor(t.Key)); ok {
			return untrusted(d, t.Offset, "tools."+t.Key, loosens(t.Key, protected),
				fmt.Sprintf("set it in the global file %s, or leave the switch out: the tool is available without it", global))
		}
	}
	return nil
}

// reachesProtected reports which permission the project layer may not loosen a rule key
// could match, asking the gate's own matcher (permission.MatchesKey). The key is also tried
// lower-cased with '-' read as '_', as every other key of this check is: the gate compares
// exactly, so this only refuses more, never less.
func reachesProtected(key string) (string, bool) {
	folded := strings.ReplaceAll(strings.ToLower(key), "-", "_")
	for _, p := range permission.ProjectProtectedKeys() {
		if permission.MatchesKey(key, p) || permission.MatchesKey(folded, p) {
			return p, true
		}
	}
	return "", false
}

func loosens(key, protected string) string {
	what := fmt.Sprintf("%q is permission %s", key, protected)
	if key != protected {
		what = fmt.Sprintf("%q could match permission %s", key, protected)
	}
	return what + ", and allowing it grants the agent directories outside the workspace unasked; a checked-in file may not grant that to itself"
}

// trustedKey is a top-level key only a trusted layer may set, whatever its value: why, and
// how to set it for one run when a variable or flag does.
type trustedKey struct{ key, why, oneRun string }

// trustedOnly are where the log and the read models are kept and where commands travel, who
// the model is, and the limits of what it is sent and may answer (docs/config.md, "Trust"). A
// checked-in file setting them would move the audit log into the agent's reach, send every
// prompt and file to a server of its choosing, or script the agent's tool calls itself.
// TestEveryConfigKeyHasATrustClass (cmd/zuno) keeps the list whole against the schema.
var trustedOnly = []trustedKey{
	{"db", "it decides where the event log is kept, and a log the agent can reach is the agent's to rewrite", "set ZUNO_DB"},
	{"eventstore_url", "it decides which server receives every event: each prompt, file read and tool result", "set ZUNO_EVENTSTORE_URL"},
	{"readmodel_url", "it decides which server receives the read models: sessions, messages and tool output", "set ZUNO_READMODEL_URL"},
	{"readmodel_reader_url", "it decides which server and login zuno db queries", "set ZUNO_READMODEL_READER_URL"},
	{"bus_url", "it decides which server carries every command, prompts included", "set ZUNO_BUS_URL"},
	{"model", "it picks who answers: a scripted: model is a file of tool calls the checkout would write for the agent, and a provider's model decides where prompts go", "pass --model or set ZUNO_MODEL"},
	{"context_window", "it is a limit of the model, and the model is the host's to pick", ""},
	{"max_tokens", "it is the model's output limit, and the model is the host's to pick", ""},
	{"web_search", "it decides which server receives the agent's search queries, and with which key", ""},
}

func trustedOnlyKey(d Document, m Member, global string) error {
	i := slices.IndexFunc(trustedOnly, func(k trustedKey) bool { return strings.EqualFold(k.key, m.Key) })
	k := trustedOnly[i]
	fix := fmt.Sprintf("set %s in the global file %s (or --config, or the managed policy)", k.key, global)
	if k.oneRun != "" {
		fix += ", or " + k.oneRun + " for one run"
	}
	return untrusted(d, m.Offset, k.key, k.why, fix)
}

// allows reports where a rule member allows something: its single action, or any pattern's.
func allows(m Member) (int64, bool) {
	if fold(m.Value.Raw) == "allow" {
		return m.Offset, true
	}
	for _, p := range m.Value.Members {
		if fold(p.Value.Raw) == "allow" {
			return p.Offset, true
		}
	}
	return 0, false
}

// hasMember reports whether n has key, compared without regard to case.
func hasMember(n Node, key string) bool {
	_, ok := memberOffset(n, key)
	return ok
}

func memberOffset(n Node, key string) (int64, bool) {
	for _, m := range n.Members {
		if strings.EqualFold(m.Key, key) {
			return m.Offset, true
		}
	}
	return 0, false
}

// findCommand finds a "command" key at any depth under n (mcp.<name>.command and any nesting
// a reader might accept).
func findCommand(n Node, path string) (string, int64, bool) { return findKey(n, path, "command") }

// findKey finds key (case folded) at any depth under n.
func findKey(n Node, path, key string) (string, int64, bool) {
	for _, m := range n.Members {
		if strings.EqualFold(m.Key, key) {
			return path + "." + m.Key, m.Offset, true
		}
		if p, off, ok := findKey(m.Value, path+"."+m.Key, key); ok {
			return p, off, true
		}
	}
	return "", 0, false
}

// remoteServer refuses a remote MCP server a checkout declares for itself: Zuno's own process
// connects it, outside the sandbox's network rule (deny by default, which the project layer
// cannot lift), and the same file may allow its tools and name them in an agent's allowlist,
// so the model's arguments would leave the machine unasked (docs/mcp.md, "Configuration").
func remoteServer(d Document, off int64, key string, p Paths, global string) error {
	return untrusted(d, off, key, "names a server Zuno connects to outside the sandbox's network rule, and a checked-in file may not open that way out for itself",
		fmt.Sprintf(`declare the server in the global file %s, or admit this checkout with "trust": {"project_host_commands": [%q]} there`, global, p.ProjectRoot))
}

func hostCommand(d Document, off int64, key string, p Paths, global string) error {
	return untrusted(d, off, key, "names a program to run on the host, even when the entry is disabled",
		fmt.Sprintf(`admit this checkout with "trust": {"project_host_commands": [%q]} in a trusted layer (the global file %s), or move the setting there`,
			p.ProjectRoot, global))
}

func untrusted(d Document, off int64, key, why, fix string) *Error {
	line, col := position(d.text, off)
	return &Error{code: CodeUntrusted, Source: d.Source, Line: line, Column: col, Key: key,
		Message: fmt.Sprintf("%s is refused in the project layer, which the checkout controls: %s", key, why), Fix: fix}
}

// admittedRoots is trust.project_host_commands of the trusted layers merged: a list of
// absolute repository roots whose project layer may name host commands.
func admittedRoots(docs []Document) ([]string, error) {
	var roots []string
	for _, d := range docs {
		if !d.Layer.Trusted() {
			continue
		}
		t, ok := d.Node.Get("trust")
		if !ok {
			continue
		}
		v, ok := t.Get("project_host_commands")
		if !ok {
			continue
		}
		var list []string
		if err := json.Unmarshal(v.Raw, &list); err != nil || v.Raw == nil {
			return nil, trustShapeError(d, v.Offset, "is not a list of repository roots")
		}
		roots = roots[:0] // a later layer replaces the list, like any other value
		for _, r := range list {
			if !filepath.IsAbs(r) {
				return nil, trustShapeError(d, v.Offset, fmt.Sprintf("%q is not an absolute path", r))
			}
			roots = append(roots, canonical(r))
		}
	}
	return roots, nil
}

func trustShapeError(d Document, off int64, what string) *Error {
	line, col := position(d.text, off)
	return &Error{code: CodeBadConfig, Source: d.Source, Line: line, Column: col, Key: "trust.project_host_commands",
		Message: "trust.project_host_commands " + what, Fix: `write ["/abs/path/of/repo", …]: the roots whose zuno.json may name host commands`}
}

// canonical resolves symbolic links, so a root is admitted under any spelling of its path.
func canonical(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return filepath.Clean(path)
}

// fold is a JSON string value lower-cased with '_' read as '-'; "" for anything else.
func fold(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "_", "-")
}

// projectSkillsMemory refuses skills.paths and memory.review in the project layer
// (docs/skills.md, docs/memory.md): the first would send files outside the checkout to the
// model as instructions (the project's own .zuno/skills is discovered without it), the second
// would lift the user's review of what agents remember.
func projectSkillsMemory(d Document, m Member, global string) error {
	if strings.EqualFold(m.Key, "skills") {
		off, _ := memberOffset(m.Value, "paths")
		return untrusted(d, off, "skills.paths", "it names directories whose files are sent to the model as instructions, and a checked-in file may not reach outside its checkout",
			fmt.Sprintf("put the project's skills in .zuno/skills, or set skills.paths in the global file %s", global))
	}
	off, _ := memberOffset(m.Value, "review")
	return untrusted(d, off, "memory.review", "it decides whether a person reviews what agents remember, and a checked-in file may not decide that for itself",
		fmt.Sprintf("set memory.review in the global file %s", global))
}
