package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	adconfig "github.com/zuno-run/zuno/adapters/config"
)

// trustClass is what the project layer may do with a key of the configuration schema
// (docs/config.md, "Trust"), with a project file that shows it.
type trustClass struct {
	// refused: only a trusted layer may set the key, whatever its value; the project file is
	// refused as config_untrusted naming key. allowed: the project file loads. byValue: the
	// key's own check refuses the values that grant authority (a policy read layer by layer).
	class, project, key string
}

// schemaTrust classifies every key of the configuration type. TestEveryConfigKeyHasATrustClass
// fails on a key added to config without a row here, so a new setting that picks where the log
// goes, who the model is or what a limit is cannot reach the project layer by oversight.
var schemaTrust = map[string]trustClass{
	// Storage and endpoints: where the audit log lives and which servers receive it.
	"db":                   {"refused", `{"db": "agent-controlled.db"}`, "db"},
	"eventstore_url":       {"refused", `{"eventstore_url": "postgres://victim@127.0.0.1:1/zuno"}`, "eventstore_url"},
	"readmodel_url":        {"refused", `{"readmodel_url": "postgres://victim@127.0.0.1:1/zuno"}`, "readmodel_url"},
	"readmodel_reader_url": {"refused", `{"readmodel_reader_url": "postgres://root@127.0.0.1:1/zuno"}`, "readmodel_reader_url"},
	"bus_url":              {"refused", `{"bus_url": "postgres://victim@127.0.0.1:1/zuno"}`, "bus_url"},
	// The model and its limits.
	"model":          {"refused", `{"model": "scripted:evil.json"}`, "model"},
	"context_window": {"refused", `{"context_window": 1000000}`, "context_window"},
	"max_tokens":     {"refused", `{"max_tokens": 1}`, "max_tokens"},
	// Output limits: the project layer may only lower them (docs/config.md, "Bounds"); a raise
	// is refused by value.
	"tool_output.max_bytes":                  {"byValue", `{"tool_output": {"max_bytes": 100000000}}`, "tool_output.max_bytes"},
	"tool_output.max_lines":                  {"byValue", `{"tool_output": {"max_lines": 1000000}}`, "tool_output.max_lines"},
	"tool_output.max_artifact_bytes":         {"byValue", `{"tool_output": {"max_artifact_bytes": 8000000000}}`, "tool_output.max_artifact_bytes"},
	"tool_output.max_session_artifact_bytes": {"byValue", `{"tool_output": {"max_session_artifact_bytes": 8000000000}}`, "tool_output.max_session_artifact_bytes"},
	// Providers: where prompts and keys go is the host's; how patiently to ask, the project's.
	"provider.*.family":            {"refused", `{"provider": {"x": {"family": "compatible"}}}`, "provider.x.family"},
	"provider.*.options.baseURL":   {"refused", `{"provider": {"openai": {"options": {"baseURL": "http://127.0.0.1:1/v1"}}}}`, "provider.openai.options.baseURL"},
	"provider.*.options.apiKey":    {"refused", `{"provider": {"openai": {"options": {"apiKey": "k"}}}}`, "provider.openai.options.apiKey"},
	"provider.*.options.headers.*": {"refused", `{"provider": {"openai": {"options": {"headers": {"X": "y"}}}}}`, "provider.openai.options.headers"},
	"provider.*.retries":           {"allowed", `{"provider": {"ollama": {"retries": 1}}}`, ""},
	"provider.*.options.timeout":   {"allowed", `{"provider": {"ollama": {"options": {"timeout": "10s"}}}}`, ""},
	// A checkout vouching for itself.
	"trust.project_host_commands": {"refused", `{"trust": {"project_host_commands": ["/"]}}`, "trust"},
	// The project's own work: how far an agent goes and what it is offered, within the
	// permission rules and the sandbox (a read-only agent never receives a tool that writes).
	// Offering the continuity tools: they read the session's own records and keep notes in the
	// log, never outside the workspace, and the permission rules still judge every call.
	"continuity.enabled":          {"allowed", `{"continuity": {"enabled": true}}`, ""},
	"web_search":                  {"refused", `{"web_search": {"url": "https://agent.example/search"}}`, "web_search"},
	"agents.*.steps":              {"allowed", `{"agents": {"build": {"steps": 3}}}`, ""},
	"agents.*.tools":              {"allowed", `{"agents": {"build": {"tools": ["read", "grep"]}}}`, ""},
	"agents.*.delegates":          {"allowed", `{"agents": {"orchestrator": {"delegates": ["explorer", "build"]}}}`, ""},
	"concurrency.tool_calls":      {"allowed", `{"concurrency": {"tool_calls": 2}}`, ""},
	"concurrency.delegations":     {"allowed", `{"concurrency": {"delegations": 2}}`, ""},
	"concurrency.mcp_connections": {"allowed", `{"concurrency": {"mcp_connections": 2}}`, ""},
	"concurrency.lsp_requests":    {"allowed", `{"concurrency": {"lsp_requests": 2}}`, ""},
	// Policies read layer by layer: refused by value (adapters/config trust.go).
	"tools.*":      {"byValue", `{"tools": {"external*": true}}`, "tools.external*"},
	"permission":   {"byValue", `{"permission": {"rules": {"*directory": "allow"}}}`, "permission.rules.*directory"},
	"sandbox":      {"byValue", `{"sandbox": {"backend": "native"}}`, "sandbox.backend"},
	"shell":        {"byValue", `{"shell": "/bin/sh"}`, "shell"},
	"mcp":          {"byValue", `{"mcp": {"x": {"command": "node"}}}`, "mcp.x.command"},
	"lsp":          {"byValue", `{"lsp": {"go": {"command": "gopls"}}}`, "lsp.go.command"},
	"formatter":    {"byValue", `{"formatter": {"go": {"command": "gofmt"}}}`, "formatter.go.command"},
	"productAgent": {"byValue", `{"productAgent": {"x": {"command": "claude"}}}`, "productAgent.x.command"},
}

// schemaKeys lists the dotted keys of a configuration type: struct fields by their json tag,
// map entries as *, and a json.RawMessage (a policy's own document) as one key.
func schemaKeys(t reflect.Type, prefix string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeOf(json.RawMessage(nil)):
		return []string{prefix}
	case t.Kind() == reflect.Map:
		return schemaKeys(t.Elem(), prefix+".*")
	case t.Kind() != reflect.Struct:
		return []string{prefix}
	}
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		out = append(out, schemaKeys(f.Type, strings.TrimPrefix(prefix+"."+name, "."))...)
	}
	return out
}

// Every key of the configuration schema has a trust class, and each class holds end to end:
// a project file setting a refused key does not load (config_untrusted naming the key and
// the global file), one setting an allowed key loads (issue 25, "What it must show": the
// project-layer table).
func TestEveryConfigKeyHasATrustClass(t *testing.T) {
	keys := schemaKeys(reflect.TypeOf(config{}), "")
	for _, k := range keys {
		if _, ok := schemaTrust[k]; !ok {
			t.Errorf("config key %s has no trust class: add it to schemaTrust and, if only a trusted layer may set it, to trustedOnly in adapters/config", k)
		}
	}
	for k, c := range schemaTrust {
		if !slices.Contains(keys, k) {
			t.Errorf("schemaTrust names %s, which the configuration does not have", k)
			continue
		}
		t.Run(k, func(t *testing.T) {
			global, repo := projectWorld(t, c.project)
			_, err := loadConfig()
			if c.class == "allowed" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var e *adconfig.Error
			if !errors.As(err, &e) || e.Code() != adconfig.CodeUntrusted || e.Key != c.key ||
				e.Source != filepath.Join(repo, "zuno.json") || !strings.Contains(err.Error(), filepath.Join(global, "zuno.json")) {
				t.Fatalf("want config_untrusted naming %s, the project file and the global file, got %v", c.key, err)
			}
		})
	}
}

// projectWorld is a repository holding zuno.json with the project text, as the working
// directory, and an empty global directory; no ZUNO_* variable is set. It returns both.
func projectWorld(t *testing.T, project string) (global, repo string) {
	dir := t.TempDir()
	global, repo = filepath.Join(dir, "cfg", "zuno"), filepath.Join(dir, "repo")
	for _, d := range []string{global, filepath.Join(repo, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "zuno.json"), []byte(project), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "cfg"))
	t.Setenv("ZUNO_CONFIG", "")
	for _, e := range adconfig.EnvKeys {
		t.Setenv(e.Var, "")
	}
	t.Chdir(repo)
	return global, repo
}
