package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/tools"
)

// agentReport is `zuno debug agent NAME` (seeds 002 §10.2), for the parts this build has:
// the definition, the effective model, the tool intersection with reasons, delegates. MCP,
// Skills and the sandbox are not built yet, and the report says so rather than implying they
// are ready.
type agentReport struct {
	Name        string              `json:"name"`
	Mode        string              `json:"mode"`
	Source      string              `json:"source"`
	Description string              `json:"description"`
	StepLimit   int                 `json:"stepLimit"`
	Model       string              `json:"model"`
	ModelNote   string              `json:"modelNote,omitempty"`
	Tools       []toolReport        `json:"tools"`
	Unavailable []agent.Unavailable `json:"unavailable"`
	Delegates   []string            `json:"delegates"`
	Notes       []string            `json:"notes"`
}

type toolReport struct {
	Name        string `json:"name"`
	SideEffect  string `json:"sideEffect"`
	Replay      string `json:"replay"`
	Concurrency string `json:"concurrency"`
}

func newDebugAgentCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agent NAME [--format json|table]",
		Short: "Show an agent's effective configuration in the current directory",
		Long: `Shows the agent's definition, step limit, effective model, the tools it gets (its allowlist
intersected with the enabled runtime tools) and those it does not, with the reason, and its
delegates. It creates no session and contacts no provider.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			ag, err := agent.Resolve(args[0], cfg.Agents, false)
			if err != nil {
				return err
			}
			dir, err := os.Getwd()
			if err != nil {
				return err
			}
			// The tools are built only to read their declarations; their scratch directories go
			// to a temporary place, so a diagnostic leaves nothing in the data directory.
			scratch, err := os.MkdirTemp("", "zuno-debug-agent-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(scratch)
			probe := cfg
			probe.DB = filepath.Join(scratch, "zuno.db")
			rt, err := newRuntimeTools(probe, dir, "debug-agent")
			if err != nil {
				return err
			}
			defer rt.Close()
			rep := agentReport{Name: ag.Name, Mode: string(ag.Mode), Source: ag.Source, Description: ag.Description,
				StepLimit: ag.Steps, Model: cfg.Model, Delegates: ag.Delegates, Unavailable: []agent.Unavailable{},
				Notes: []string{
					"no permission gate or sandbox in this build: every offered tool runs unconfined in the workspace",
					"MCP servers and Skills are not supported in this build",
				}}
			if rep.Delegates == nil {
				rep.Delegates = []string{}
			}
			if rep.Model == "" {
				rep.ModelNote = "no default model: pass zuno run --model, or set model in the config or ZUNO_MODEL"
			} else if _, err := parseModel(rep.Model); err != nil {
				rep.ModelNote = err.Error()
			}
			caps := map[string]agent.Capability{}
			decls := map[string]tools.Declaration{}
			for _, t := range rt.tools {
				d := t.Declaration()
				caps[d.Name] = agent.Capability{Enabled: true, Writes: t.WritesWorkspace()}
				decls[d.Name] = d
			}
			for name, on := range cfg.Tools {
				if !on {
					caps[name] = agent.Capability{Enabled: false}
				}
			}
			names, unavailable := ag.EffectiveTools(caps)
			rep.Unavailable = append(rep.Unavailable, unavailable...)
			for _, n := range names {
				d := decls[n]
				tr := toolReport{Name: n, SideEffect: d.Policy.SideEffect.String(), Replay: d.Policy.Replay.String(), Concurrency: d.Policy.Concurrency.String()}
				if d.Mixed() {
					tr.SideEffect, tr.Replay, tr.Concurrency = "per action", "per action", "per action"
				}
				rep.Tools = append(rep.Tools, tr)
			}
			if format == "json" {
				return writeJSON(cmd.OutOrStdout(), rep)
			}
			w := cmd.OutOrStdout()
			steps := "none (no implicit limit)"
			if rep.StepLimit > 0 {
				steps = fmt.Sprint(rep.StepLimit)
			}
			fmt.Fprintf(w, "agent:       %s (%s)\nsource:      %s\ndescription: %s\nstep limit:  %s\n", rep.Name, rep.Mode, rep.Source, rep.Description, steps)
			model := rep.Model
			if model == "" {
				model = "(none)"
			}
			fmt.Fprintf(w, "model:       %s\n", model)
			if rep.ModelNote != "" {
				fmt.Fprintf(w, "             %s\n", rep.ModelNote)
			}
			fmt.Fprintln(w, "tools:")
			for _, t := range rep.Tools {
				fmt.Fprintf(w, "  %-13s %s, replay %s, %s\n", t.Name, t.SideEffect, t.Replay, t.Concurrency)
			}
			if len(rep.Unavailable) > 0 {
				fmt.Fprintln(w, "unavailable:")
				for _, u := range rep.Unavailable {
					fmt.Fprintf(w, "  %-13s %s\n", u.Tool, u.Reason)
				}
			}
			fmt.Fprintf(w, "delegates:   %s\n", orNone(strings.Join(rep.Delegates, ", ")))
			for _, n := range rep.Notes {
				fmt.Fprintf(w, "note:        %s\n", n)
			}
			return nil
		},
	}
	addFormatFlag(cmd, "table")
	return cmd
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
