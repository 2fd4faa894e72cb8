package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	zapp "github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/turn"
)

// Every configuration example in the specification loads into the real configuration type
// (as a global file, where trusted values are allowed).
func TestSeedConfigExamplesLoad(t *testing.T) {
	for name, src := range map[string]string{
		"sandbox modes":         `{"sandbox": {"mode": "workspace-write", "network": "deny", "onUnavailable": "deny"}}`,
		"native backend":        `{"sandbox": {"backend": "native"}}`,
		"danger-full-access":    `{"sandbox": {"mode": "danger-full-access"}}`,
		"run-unconfined":        `{"sandbox": {"mode": "workspace-write", "network": "deny", "onUnavailable": "run-unconfined"}}`,
		"protected paths":       `{"sandbox": {"mode": "workspace-write", "writableRoots": ["/srv/build-cache"], "protectedPaths": [".git", "secrets"]}}`,
		"permission rules":      `{"permission": {"mode": "standard", "rules": {"read": "allow", "edit": "ask", "shell": {"*": "ask", "git *": "allow", "git push*": "deny", "rm -rf*": "deny"}}}}`,
		"concurrency":           `{"concurrency": {"tool_calls": 8, "delegations": 8, "mcp_connections": 8, "lsp_requests": 4}}`,
		"tools webfetch":        `{"tools": {"webfetch": false}}`,
		"agent steps":           `{"agents": {"build": {"steps": 24}}}`,
		"trust":                 `{"trust": {"project_host_commands": ["/work/repo"]}}`,
		"host programs (JSONC)": "{\n // accepted, not yet run by this build\n \"shell\": \"/bin/bash\", \"mcp\": {\"x\": {\"command\": \"node\"}}, \"lsp\": {}, \"formatter\": {}, \"productAgent\": {},\n}",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "zuno"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "zuno", "zuno.jsonc"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv("XDG_CONFIG_HOME", dir)
			t.Setenv("ZUNO_CONFIG", "")
			t.Chdir(dir)
			if _, err := loadConfig(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A tools entry for a tool the specification names and this build lacks is a note, and the
// entry does not reach the tool registry (where it would be unknown_tool).
func TestUnbuiltToolIsANote(t *testing.T) {
	t.Setenv("ZUNO_CONFIG", writeTemp(t, `{"tools": {"council_run": false, "shell": false, "webfetch": false}}`))
	t.Chdir(t.TempDir())
	cfg, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	shell, kept := cfg.Tools["shell"]
	fetch, fetchKept := cfg.Tools["webfetch"]
	if _, ok := cfg.Tools["council_run"]; ok || !kept || shell || !fetchKept || fetch || len(cfg.Notes) != 1 {
		t.Fatalf("tools %v notes %v", cfg.Tools, cfg.Notes)
	}
}

// web_search is in the catalogue only with a provider (docs/web.md): without one a
// tools.web_search entry is a note; with one it stays and reaches the registry.
func TestWebSearchSwitch(t *testing.T) {
	t.Setenv("ZUNO_CONFIG", writeTemp(t, `{"tools": {"web_search": false}}`))
	t.Chdir(t.TempDir())
	cfg, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cfg.Tools["web_search"]; ok || len(cfg.Notes) != 1 || !strings.Contains(cfg.Notes[0], "no provider configured") || cfg.webSearch != nil {
		t.Fatalf("tools %v notes %v", cfg.Tools, cfg.Notes)
	}
	t.Setenv("ZUNO_CONFIG", writeTemp(t, `{"tools": {"web_search": false}, "web_search": {"url": "https://search.example/search"}}`))
	if cfg, err = loadConfig(); err != nil || cfg.webSearch == nil || cfg.Tools["web_search"] || len(cfg.Notes) != 0 {
		t.Fatalf("configured: %v %v %v", err, cfg.Tools, cfg.Notes)
	}
	t.Setenv("ZUNO_CONFIG", writeTemp(t, `{"web_search": {"url": "https://search.example/search", "apiKey": "{env:HOME}"}}`))
	if _, err := loadConfig(); err == nil || !strings.Contains(err.Error(), "ZUNO_") {
		t.Fatalf("a key outside ZUNO_*: %v", err)
	}
}

// app.UnbuiltTools must never name a tool this build has: its entry would be dropped, and a
// "webfetch": false the user wrote would silently stop disabling it.
func TestUnbuiltToolsAreNotBuilt(t *testing.T) {
	dir := t.TempDir()
	sup, err := scratchSupervisor(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sup.Close()
	surface, err := openTools(config{}, dir, nil, nil, nil, sup)(turn.ToolsRequest{Dir: dir, SessionID: "ses_test"})
	if err != nil {
		t.Fatal(err)
	}
	defer surface.Close()
	for _, tool := range surface.Tools() {
		if name := tool.Declaration().Name; slices.Contains(zapp.UnbuiltTools, name) {
			t.Errorf("%s is built: remove it from app.UnbuiltTools", name)
		}
	}
}

func writeTemp(t *testing.T, content string) string {
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// shell.env.exclude of the trusted layers is united, and only ever withholds: a negation is
// bad_config, and setting only env is not reported as an unused shell setting.
func TestShellEnvExclude(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	global := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "zuno")
	if err := os.MkdirAll(global, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(global, "zuno.json"), []byte(`{"shell": {"env": {"exclude": ["AWS_*"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ZUNO_CONFIG", writeTemp(t, `{"shell": {"env": {"exclude": ["OPENAI_API_KEY", "AWS_*"]}}}`))
	t.Chdir(t.TempDir())
	cfg, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.EnvExclude, []string{"AWS_*", "OPENAI_API_KEY"}) || slices.ContainsFunc(cfg.Notes, func(n string) bool { return strings.HasPrefix(n, "shell") }) {
		t.Fatalf("exclude %v notes %v", cfg.EnvExclude, cfg.Notes)
	}
	t.Setenv("ZUNO_CONFIG", writeTemp(t, `{"shell": {"env": {"exclude": ["!ZUNO_DB"]}}}`))
	if _, err := loadConfig(); err == nil || zapp.CodeOf(err) != "bad_config" || !strings.Contains(err.Error(), "never puts a name back") {
		t.Fatalf("negation: %v", err)
	}
}
