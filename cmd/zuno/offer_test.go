package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/zuno-run/zuno/adapters/provider"
	"github.com/zuno-run/zuno/commands"
	zapp "github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/model"
)

// zuno debug agent and a real turn compute the offered tools the same way: for every built-in
// agent under several tools configs, the report's tools are exactly the tools declared in
// the receipt of the turn's first provider request.
func TestDebugAgentAgreesWithTurnReceipt(t *testing.T) {
	configs := map[string]map[string]bool{
		"defaults":        nil,
		"no shell":        {"shell": false},
		"no read or bg":   {"read": false, "bg": false},
		"only writes off": {"write": false, "apply_patch": false, "report_write": false},
	}
	script := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, []byte(`{"turns":[{"text":"ok"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for cname, tools := range configs {
		for _, ag := range agent.Builtins() {
			t.Run(cname+"/"+ag.Name, func(t *testing.T) {
				dir := t.TempDir()
				cfgFile := filepath.Join(dir, "config.json")
				b, _ := json.Marshal(map[string]any{"tools": tools, "model": "scripted:" + script})
				if err := os.WriteFile(cfgFile, b, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Setenv("ZUNO_CONFIG", cfgFile)
				t.Setenv("ZUNO_DB", filepath.Join(dir, "zuno.db"))
				t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
				t.Chdir(dir)
				cfg, err := loadConfig()
				if err != nil {
					t.Fatal(err)
				}
				rep, err := debugAgent(cfg, ag.Name)
				if err != nil {
					t.Fatal(err)
				}
				var reported []string
				for _, tr := range rep.Tools {
					reported = append(reported, tr.Name)
				}
				offered := receiptTools(t, ag.Name)
				if !slices.Equal(reported, offered) {
					t.Fatalf("debug agent reports %v, the turn offered %v", reported, offered)
				}
			})
		}
	}
}

// receiptTools runs one turn of the agent and returns the tools its receipt declares, sorted.
// A subagent cannot run a root session from the CLI, so its turn is driven as a delegated
// child's would be: the same driver, tools and settings.
func receiptTools(t *testing.T, agentName string) []string {
	ctx := context.Background()
	a, err := openApp(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	meta := commands.Meta{CommandID: zapp.NewID("cmd_"), Actor: "user"}
	var sessionID string
	ag, _ := agent.Resolve(agentName, nil, false)
	if ag.Mode != agent.Subagent {
		res, err := a.Commands.RunTurn(ctx, zapp.RunTurn{Meta: meta, Prompt: "hi", Agent: agentName, Cwd: "."})
		if err != nil {
			t.Fatal(err)
		}
		sessionID = res.SessionID
	} else {
		parent := zapp.NewSessionID(meta.CommandID + "/parent")
		pmeta := commands.Meta{CommandID: meta.CommandID + "/parent", Actor: "user"}
		if _, err := a.Commands.CreateSession(ctx, pmeta, zapp.NewSession{SessionID: parent, Title: "parent", Agent: "build"}); err != nil {
			t.Fatal(err)
		}
		sessionID = zapp.NewSessionID(meta.CommandID)
		if _, err := a.Commands.CreateSession(ctx, meta, zapp.NewSession{SessionID: sessionID, Title: "child", Agent: agentName, ParentSessionID: parent}); err != nil {
			t.Fatal(err)
		}
		dir, _ := os.Getwd()
		surface, err := openTools(a.cfg, dataDir(a.cfg), a.handlers, a.Commands.Jobs(), a.Commands.Questions(), a.bg)(turn.ToolsRequest{Dir: dir, SessionID: sessionID})
		if err != nil {
			t.Fatal(err)
		}
		defer surface.Close()
		prov, err := zapp.ParseModel(a.cfg.Model)
		if err != nil {
			t.Fatal(err)
		}
		p, err := provider.Open(prov.Spec)
		if err != nil {
			t.Fatal(err)
		}
		meta.CommandID += "/turn"
		if _, err := a.turns.Run(ctx, turn.Request{Meta: meta, SessionID: sessionID, Text: "hi", Agent: ag, Provider: p,
			ProviderName: prov.Name, Model: model.ModelInfo{ID: prov.Model}, Tools: surface.Tools(), ToolsConfig: a.cfg.Tools}); err != nil {
			t.Fatal(err)
		}
	}
	view, err := a.Queries.Prompt(ctx, sessionID, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range view.Receipt.Tools {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return names
}
