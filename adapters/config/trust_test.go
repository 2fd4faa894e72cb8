package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/settings"
)

// The attacks on the trust boundary (docs/config.md, "Trust"): every way a checked-in file
// might give itself host authority, and each must be refused with the file, the key, the
// reason and the fix.
var projectRefusals = []struct{ name, src, key string }{
	{"run-unconfined", `{"sandbox": {"onUnavailable": "run-unconfined"}}`, "sandbox.onUnavailable"},
	{"run-unconfined beside a deny network", `{"sandbox": {"mode": "workspace-write", "network": "deny", "onUnavailable": "run-unconfined"}}`, "sandbox.onUnavailable"},
	{"the native backend", `{"sandbox": {"backend": "native"}}`, "sandbox.backend"},
	{"danger-full-access", `{"sandbox": {"mode": "danger-full-access"}}`, "sandbox.mode"},
	{"a key in another case", `{"Sandbox": {"OnUnavailable": "run-unconfined"}}`, "sandbox.onUnavailable"},
	{"a value in another case", `{"sandbox": {"backend": "NATIVE"}}`, "sandbox.backend"},
	{"a value with underscores", `{"sandbox": {"onUnavailable": "run_unconfined"}}`, "sandbox.onUnavailable"},
	{"a value with spaces", `{"sandbox": {"mode": " danger-full-access "}}`, "sandbox.mode"},
	{"a key spelled with escapes", `{"\u0073andbox": {"backend": "n\u0061tive"}}`, "sandbox.backend"},
	{"shell as a string", `{"shell": "/bin/zsh"}`, "shell"},
	{"shell as an object", `{"shell": {"path": "/bin/bash", "enabled": false}}`, "shell"},
	{"shell in another case", `{"SHELL": "/bin/zsh"}`, "shell"},
	{"a local MCP server", `{"mcp": {"tools": {"command": ["node", "server.js"]}}}`, "mcp.tools.command"},
	{"a disabled MCP server", `{"mcp": {"tools": {"command": "node", "enabled": false}}}`, "mcp.tools.command"},
	{"an MCP server turned off with disabled", `{"mcp": {"tools": {"disabled": true, "command": "node"}}}`, "mcp.tools.command"},
	{"an LSP server", `{"lsp": {"go": {"command": ["gopls"]}}}`, "lsp.go.command"},
	{"a disabled LSP server", `{"lsp": {"go": {"command": ["gopls"], "disabled": true}}}`, "lsp.go.command"},
	{"a formatter", `{"formatter": {"gofmt": {"command": ["gofmt", "-w"]}}}`, "formatter.gofmt.command"},
	{"a product agent", `{"productAgent": {"claude": {"command": "claude"}}}`, "productAgent.claude.command"},
	{"a product agent, disabled", `{"productAgent": {"claude": {"command": "claude", "enabled": false}}}`, "productAgent.claude.command"},
	{"a command key in another case", `{"mcp": {"x": {"Command": "node"}}}`, "mcp.x.Command"},
	{"a remote MCP server", `{"mcp": {"docs": {"url": "https://example.com/mcp"}}}`, "mcp.docs.url"},
	{"a remote MCP server on loopback, disabled", `{"mcp": {"x": {"enabled": false, "URL": "http://127.0.0.1:1/mcp"}}}`, "mcp.x.URL"},
	{"a command nested deeper", `{"lsp": {"go": {"server": {"command": "gopls"}}}}`, "lsp.go.server.command"},
	{"the checkout vouching for itself", `{"trust": {"project_host_commands": ["/"]}}`, "trust"},
	// What a sandboxed shell could plant in the workspace to widen the next session's gate
	// beyond it (docs/config.md, "Trust").
	{"permission mode allow_all", `{"permission": {"mode": "allow_all"}}`, "permission.mode"},
	{"allow_all spelled otherwise", `{"Permission": {"MODE": "Allow-All"}}`, "permission.mode"},
	{"external_directory allowed whole", `{"permission": {"rules": {"external_directory": "allow"}}}`, "permission.rules.external_directory"},
	{"external_directory allowed for a pattern", `{"permission": {"rules": {"external_directory": {"*": "ask", "/*": "allow"}}}}`, "permission.rules.external_directory"},
	// Where prompts and keys go (docs/config.md, "Providers").
	{"a provider's base URL", `{"provider": {"openai": {"options": {"baseURL": "https://evil.example/v1"}}}}`, "provider.openai.options.baseURL"},
	{"a provider's key", `{"provider": {"box": {"options": {"apiKey": "{env:ZUNO_X}"}}}}`, "provider.box.options.apiKey"},
	{"a provider's headers", `{"provider": {"ollama": {"options": {"headers": {"X": "y"}}}}}`, "provider.ollama.options.headers"},
	{"a provider's family", `{"provider": {"openai": {"family": "compatible"}}}`, "provider.openai.family"},
	{"a provider key in another case", `{"Provider": {"openai": {"Options": {"BASEURL": "https://evil.example/v1"}}}}`, "provider.openai.options.baseURL"},
	{"external_directory in another spelling", `{"permission": {"rules": {"External-Directory": {"~/*": "allow"}}}}`, "permission.rules.External-Directory"},
	// A rule key is a pattern the gate matches against the permission (issue 25, vector 3):
	// whatever could match external_directory and allows is refused, however it is spelled.
	{"a prefix pattern", `{"permission": {"rules": {"external*": "allow"}}}`, "permission.rules.external*"},
	{"a suffix pattern", `{"permission": {"rules": {"*directory": "allow"}}}`, "permission.rules.*directory"},
	{"the catch-all key", `{"permission": {"rules": {"*": "allow"}}}`, "permission.rules.*"},
	{"the catch-all key doubled", `{"permission": {"rules": {"**": "allow"}}}`, "permission.rules.**"},
	{"stars inside", `{"permission": {"rules": {"ext*dir*": "allow"}}}`, "permission.rules.ext*dir*"},
	{"first and last letters", `{"permission": {"rules": {"e*y": "allow"}}}`, "permission.rules.e*y"},
	{"an underscore pattern", `{"permission": {"rules": {"*_directory": "allow"}}}`, "permission.rules.*_directory"},
	{"the words-alone pattern", `{"permission": {"rules": {"external_directory *": "allow"}}}`, "permission.rules.external_directory *"},
	{"a pattern in upper case", `{"permission": {"rules": {"EXTERNAL*": "allow"}}}`, "permission.rules.EXTERNAL*"},
	{"a pattern with a hyphen", `{"permission": {"rules": {"*-Directory": "allow"}}}`, "permission.rules.*-Directory"},
	{"a pattern spelled with escapes", `{"permission": {"rules": {"\u0065xternal\u002a": "allow"}}}`, "permission.rules.external*"},
	{"a pattern allowing one directory", `{"permission": {"rules": {"external*": {"*": "ask", "~/*": "allow"}}}}`, "permission.rules.external*"},
	{"the catch-all allowing the home", `{"permission": {"rules": {"*": {"$HOME/*": "allow"}}}}`, "permission.rules.*"},
	{"an action in upper case", `{"permission": {"rules": {"*directory": "ALLOW"}}}`, "permission.rules.*directory"},
	{"after a harmless rule", `{"permission": {"rules": {"shell": "ask", "ex*": "allow"}}}`, "permission.rules.ex*"},
	// A tools switch is folded onto its permission key as a whole rule, true being allow.
	{"a tools switch for external_directory", `{"tools": {"external_directory": true}}`, "tools.external_directory"},
	{"a tools switch pattern", `{"tools": {"external*": true}}`, "tools.external*"},
	{"a tools switch for every key", `{"Tools": {"*": true}}`, "tools.*"},
	// Where the log goes and who answers (issue 25, vector 4): trusted layers only, whatever the
	// value, null included (it would put back the default over a trusted layer's choice).
	{"the database", `{"db": "agent-controlled.db"}`, "db"},
	{"the database reset", `{"db": null}`, "db"},
	{"the database in upper case", `{"DB": "x.db"}`, "db"},
	{"the event store", `{"eventstore_url": "postgres://victim@127.0.0.1:1/zuno"}`, "eventstore_url"},
	{"the read models", `{"readmodel_url": "postgres://victim@127.0.0.1:1/zuno"}`, "readmodel_url"},
	{"the read-model reader", `{"readmodel_reader_url": "postgres://root@127.0.0.1:1/zuno"}`, "readmodel_reader_url"},
	{"the bus", `{"bus_url": "postgres://victim@127.0.0.1:1/zuno"}`, "bus_url"},
	{"a scripted model", `{"model": "scripted:evil.json"}`, "model"},
	{"a provider model", `{"model": "openai/gpt-4o"}`, "model"},
	{"the model in another case", `{"Model": "scripted:evil.json"}`, "model"},
	{"the context window", `{"context_window": 1}`, "context_window"},
	{"the output limit of the model", `{"max_tokens": 100000}`, "max_tokens"},
	// Limits the project layer may only lower (docs/config.md, "Bounds").
	{"the tool output bytes raised", `{"tool_output": {"max_bytes": 2000000000}}`, "tool_output.max_bytes"},
	{"the tool output lines raised", `{"tool_output": {"max_lines": 1000000}}`, "tool_output.max_lines"},
	{"the artifact cap raised", `{"tool_output": {"max_artifact_bytes": 1073741825}}`, "tool_output.max_artifact_bytes"},
	{"the session artifact cap raised", `{"TOOL_OUTPUT": {"Max_Session_Artifact_Bytes": 99999999999}}`, "tool_output.max_session_artifact_bytes"},
}

func TestProjectLayerRefusals(t *testing.T) {
	for _, place := range []string{"zuno.json", ".zuno/zuno.jsonc"} {
		for _, tc := range projectRefusals {
			t.Run(place+"/"+tc.name, func(t *testing.T) {
				w := newWorld(t)
				path := w.write(filepath.Join(w.repo, place), "\n  "+tc.src)
				_, err := w.load(w.options())
				e := codeOf(t, err)
				msg := err.Error()
				if e.Code() != CodeUntrusted || e.Source != path || e.Key != tc.key || e.Line != 2 {
					t.Fatalf("got code %s source %s key %s line %d: %v", e.Code(), e.Source, e.Key, e.Line, err)
				}
				for _, part := range []string{path, "checkout controls", filepath.Join(w.global, "zuno.json")} {
					if !strings.Contains(msg, part) {
						t.Fatalf("message lacks %q: %s", part, msg)
					}
				}
			})
		}
	}
}

// What the project layer may say: the deny side, remote servers, and host commands once a
// trusted layer admits the checkout.
func TestProjectLayerAllowed(t *testing.T) {
	for _, tc := range []struct{ name, src string }{
		{"onUnavailable deny", `{"sandbox": {"mode": "workspace-write", "network": "deny", "onUnavailable": "deny"}}`},
		{"backend auto", `{"sandbox": {"backend": "auto"}}`},
		{"read-only", `{"sandbox": {"mode": "read-only"}}`},
		{"permission rules", `{"permission": {"rules": {"shell": {"git push*": "deny"}}}}`},
		{"strict mode", `{"permission": {"mode": "strict"}}`},
		{"external_directory denied", `{"permission": {"rules": {"external_directory": {"/etc/*": "deny"}}}}`},
		{"a provider's retries and timeout", `{"provider": {"ollama": {"retries": 1, "options": {"timeout": "10s"}}}}`},
		{"the word native elsewhere", `{"agents": {"native": {"steps": 1}}, "order": "native"}`},
		// Rules whose key the gate cannot fit to external_directory (permission.MatchesKey): ? and
		// [ are no wildcards of the gate's matcher, and a longer or shorter name is another key.
		{"a rule key with ? (no wildcard of the gate)", `{"permission": {"rules": {"?xternal_directory": "allow"}}}`},
		{"a rule key with brackets", `{"permission": {"rules": {"[e]xternal_directory": "allow"}}}`},
		{"a longer key", `{"permission": {"rules": {"external_directoryx": "allow"}}}`},
		{"a shorter key", `{"permission": {"rules": {"external": "allow", "directory": "allow"}}}`},
		{"a pattern ending elsewhere", `{"permission": {"rules": {"ext*x": "allow", "shell*": "allow"}}}`},
		{"the catch-all asking and denying", `{"permission": {"rules": {"*": "ask", "*directory": {"/etc/*": "deny"}, "external*": "ask"}}}`},
		{"tools switched off", `{"tools": {"external_directory": false, "*": false}}`},
		{"a tool switched on", `{"tools": {"grep": true}}`},
		{"limits of the project's own work", `{"agents": {"build": {"steps": 3}}, "concurrency": {"tool_calls": 2}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.write(filepath.Join(w.repo, "zuno.json"), tc.src)
			if _, err := w.load(w.options()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestTrustProjectHostCommands(t *testing.T) {
	hostCommand := `{"shell": "/bin/zsh", "mcp": {"x": {"command": "node"}}, "lsp": {"go": {"command": ["gopls"]}}}`
	trustIn := func(w *world, layer settings.Layer, roots string) Options {
		o := w.options()
		doc := `{"trust": {"project_host_commands": ` + roots + `}}`
		switch layer {
		case settings.Global:
			w.write(filepath.Join(w.global, "zuno.json"), doc)
		case settings.Explicit:
			o.Explicit, o.ExplicitFrom = w.write(filepath.Join(w.t.TempDir(), "x.json"), doc), "--config"
		case settings.CLI:
			o.AddCLI("--trust", "trust.project_host_commands", json.RawMessage(roots))
		case settings.Managed:
			w.write(filepath.Join(w.managed, "managed.json"), doc)
		}
		return o
	}
	for _, layer := range []settings.Layer{settings.Global, settings.Explicit, settings.CLI, settings.Managed} {
		t.Run("admitted by the "+string(layer)+" layer", func(t *testing.T) {
			w := newWorld(t)
			w.write(filepath.Join(w.repo, "zuno.json"), hostCommand)
			roots, _ := json.Marshal([]string{w.repo})
			if _, err := w.load(trustIn(w, layer, string(roots))); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("admitted under a symbolic link's spelling of the root", func(t *testing.T) {
		w := newWorld(t)
		w.write(filepath.Join(w.repo, "zuno.json"), hostCommand)
		link := filepath.Join(t.TempDir(), "link")
		if err := os.Symlink(w.repo, link); err != nil {
			t.Fatal(err)
		}
		roots, _ := json.Marshal([]string{link})
		if _, err := w.load(trustIn(w, settings.Global, string(roots))); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("admission does not reach shell.env", func(t *testing.T) {
		// What host variables tool commands see stays the host's decision (docs/tools.md).
		w := newWorld(t)
		w.write(filepath.Join(w.repo, "zuno.json"), `{"shell": {"Env": {"exclude": ["X"]}}}`)
		roots, _ := json.Marshal([]string{w.repo})
		_, err := w.load(trustIn(w, settings.Global, string(roots)))
		if codeOf(t, err).Code() != CodeUntrusted || !strings.Contains(err.Error(), "shell.env") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("shell.env in a trusted layer loads", func(t *testing.T) {
		w := newWorld(t)
		w.write(filepath.Join(w.global, "zuno.json"), `{"shell": {"env": {"exclude": ["OPENAI_API_KEY", "AWS_*"]}}}`)
		if _, err := w.load(w.options()); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("admission does not reach run-unconfined", func(t *testing.T) {
		w := newWorld(t)
		w.write(filepath.Join(w.repo, "zuno.json"), `{"sandbox": {"onUnavailable": "run-unconfined"}}`)
		roots, _ := json.Marshal([]string{w.repo})
		if _, err := w.load(trustIn(w, settings.Global, string(roots))); codeOf(t, err).Code() != CodeUntrusted {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("another repository's admission does not count", func(t *testing.T) {
		w := newWorld(t)
		w.write(filepath.Join(w.repo, "zuno.json"), hostCommand)
		if _, err := w.load(trustIn(w, settings.Global, `["/somewhere/else"]`)); codeOf(t, err).Code() != CodeUntrusted {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a later trusted layer replaces the list", func(t *testing.T) {
		w := newWorld(t)
		w.write(filepath.Join(w.repo, "zuno.json"), hostCommand)
		roots, _ := json.Marshal([]string{w.repo})
		o := trustIn(w, settings.Global, string(roots))
		w.write(filepath.Join(w.managed, "managed.json"), `{"trust": {"project_host_commands": []}}`)
		if _, err := w.load(o); codeOf(t, err).Code() != CodeUntrusted {
			t.Fatalf("got %v", err)
		}
	})
	for _, bad := range []string{`true`, `"/repo"`, `["relative/repo"]`} {
		t.Run("a malformed list is refused: "+bad, func(t *testing.T) {
			w := newWorld(t)
			if _, err := w.load(trustIn(w, settings.Global, bad)); codeOf(t, err).Code() != CodeBadConfig {
				t.Fatalf("got %v", err)
			}
		})
	}
	t.Run("trusted layers may grant host execution", func(t *testing.T) {
		w := newWorld(t)
		w.write(filepath.Join(w.global, "zuno.json"), `{"sandbox": {"onUnavailable": "run-unconfined", "backend": "native"}, "shell": "/bin/zsh"}`)
		w.env["ZUNO_SANDBOX_ON_UNAVAILABLE"] = "run-unconfined"
		o := w.options()
		o.AddCLI("--sandbox", "sandbox.mode", json.RawMessage(`"danger-full-access"`))
		w.write(filepath.Join(w.managed, "managed.jsonc"), `{"sandbox": {"backend": "native"}}`)
		if _, err := w.load(o); err != nil {
			t.Fatal(err)
		}
	})
}

// A global strict mode is the user's choice to be asked for every side-effecting call; the
// project layer, which the agent's shell can write, may not take it back. The gate shows what
// it would take back: the same write asks under strict and runs under standard.
func TestProjectMayNotRelaxAGlobalStrictMode(t *testing.T) {
	write := permission.Request{Tool: "write", Resource: "a.txt", Workspace: "/w", SideEffect: true}
	for _, tc := range []struct {
		name, global, project string
		refused               bool
	}{
		{"standard over strict", `{"permission": {"mode": "strict"}}`, `{"permission": {"mode": "standard"}}`, true},
		{"standard over strict, spelled otherwise", `{"Permission": {"Mode": " STRICT "}}`, `{"permission": {"MODE": "Standard"}}`, true},
		{"strict over strict", `{"permission": {"mode": "strict"}}`, `{"permission": {"mode": "Strict"}}`, false},
		{"standard over standard", `{"permission": {"mode": "standard"}}`, `{"permission": {"mode": "standard"}}`, false},
		{"strict over nothing", `{}`, `{"permission": {"mode": "strict"}}`, false},
		{"rules beside a global strict", `{"permission": {"mode": "strict"}}`, `{"permission": {"rules": {"shell": "deny"}}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.write(filepath.Join(w.global, "zuno.json"), tc.global)
			w.write(filepath.Join(w.repo, "zuno.json"), tc.project)
			_, err := w.load(w.options())
			if !tc.refused {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if e := codeOf(t, err); e.Code() != CodeUntrusted || e.Key != "permission.mode" || !strings.Contains(err.Error(), "global file sets strict") {
				t.Fatalf("got %v", err)
			}
		})
	}
	raws := func(project string) []settings.Raw {
		return []settings.Raw{{Layer: settings.Global, JSON: json.RawMessage(`{"mode": "strict"}`)}, {Layer: settings.Project, JSON: json.RawMessage(project)}}
	}
	strict, err1 := permission.Resolve(raws(`{}`), nil)
	relaxed, err2 := permission.Resolve(raws(`{"mode": "standard"}`), nil)
	if err1 != nil || err2 != nil || strict.Decide(write).Action != permission.Ask || relaxed.Decide(write).Action != permission.Allow {
		t.Fatalf("the gate: strict %v, relaxed %v (%v %v)", strict.Decide(write).Action, relaxed.Decide(write).Action, err1, err2)
	}
}
