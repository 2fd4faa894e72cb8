package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	zapp "github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/commands/turn"
)

func newDebugAgentCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agent NAME [--format json|table]",
		Short: "Show an agent's effective configuration in the current directory",
		Long: `Shows the agent's definition, step limit, effective model, the tools it gets (its allowlist
intersected with the enabled runtime tools) and those it does not, with the reason, and its
delegates: for each, the tools a child of it gets when this agent delegates to it (this
agent's tools ∩ the delegate's role, allowlist and permission visibility ∩ the runtime's
tools) and those withheld, with the reason. It connects every enabled MCP server through the
runtime a turn uses, lists the real tool ids and schemas, shows which the agent is offered,
waits for the servers' clean-up, and reports each failure as a structured diagnostic
(docs/mcp.md). It creates no session and contacts no provider.`,
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
			rep, err := debugAgent(cfg, args[0])
			if err != nil {
				return err
			}
			return printAgent(cmd.OutOrStdout(), format, rep)
		},
	}
	addFormatFlag(cmd, "table")
	return cmd
}

// debugAgent reports an agent in the current directory; the tools are opened with their
// scratch state in a temporary directory, so the diagnostic leaves nothing behind, and only
// their declarations are read (the work tools get no command port: they never run here).
func debugAgent(cfg config, name string) (queries.AgentReport, error) {
	dir, err := os.Getwd()
	if err != nil {
		return queries.AgentReport{}, err
	}
	watch := &mcpWatch{}
	cfg.mcpRecord = watch.record
	open, done, err := scratchTools(cfg, dir)
	if err != nil {
		return queries.AgentReport{}, err
	}
	defer done()
	s := queries.AgentSettings{Agents: cfg.Agents, Tools: cfg.Tools, Model: cfg.Model, OpenTools: watch.open(open),
		Policy: cfg.settings().Policy}
	if s.Skills, err = zapp.DebugSkills(cfg.skillsMemory(dir)); err != nil {
		return queries.AgentReport{}, err
	}
	if s.Model == "" {
		s.ModelNote = "no default model: pass zuno run --model, or set model in the config or ZUNO_MODEL"
	} else if _, err := zapp.ParseModel(s.Model); err != nil {
		s.ModelNote = err.Error()
	}
	rep, err := queries.Agent(name, dir, s)
	if err == nil {
		rep.MCP = watch.report(mcpCatalog(cfg).Servers, rep)
	}
	return rep, err
}

// scratchTools opens the runtime's tools with their scratch state in a temporary directory,
// for a diagnostic that reads only their declarations and what their calls touch; done
// removes it all.
func scratchTools(cfg config, dir string) (open turn.OpenTools, done func(), err error) {
	scratch, err := os.MkdirTemp("", "zuno-debug-")
	if err != nil {
		return nil, nil, err
	}
	sup, err := scratchSupervisor(scratch)
	if err != nil {
		os.RemoveAll(scratch)
		return nil, nil, err
	}
	c := toolCatalog(cfg, scratch, nil, nil, nil, sup)
	if err := withSkillsAndMemory(&zapp.SessionConfig{}, c, cfg, dir, nil); err != nil {
		sup.Close()
		os.RemoveAll(scratch)
		return nil, nil, err
	}
	return c.OpenTools(), func() { sup.Close(); os.RemoveAll(scratch) }, nil
}

func printAgent(w io.Writer, format string, rep queries.AgentReport) error {
	if format == "json" {
		return writeJSON(w, rep)
	}
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
	for _, m := range rep.Patterns {
		fmt.Fprintf(w, "pattern:     %s matches %s\n", m.Pattern, orNone(strings.Join(m.Tools, ", ")))
	}
	if len(rep.Unavailable) > 0 {
		fmt.Fprintln(w, "unavailable:")
		for _, u := range rep.Unavailable {
			fmt.Fprintf(w, "  %-13s %s\n", u.Tool, u.Reason)
		}
	}
	fmt.Fprintf(w, "delegates:   %s\n", orNone(strings.Join(rep.Delegates, ", ")))
	for _, d := range rep.Delegation {
		fmt.Fprintf(w, "delegate:    %s gets %s\n", d.Agent, orNone(strings.Join(d.Tools, ", ")))
		for _, u := range d.Withheld {
			fmt.Fprintf(w, "  withheld   %s: %s\n", u.Tool, u.Reason)
		}
	}
	p := rep.Permissions
	fmt.Fprintf(w, "permissions: mode %s (configured %s)\n", p.Mode, p.ConfiguredMode)
	for _, t := range p.Tools {
		fmt.Fprintf(w, "  %-13s %s → %s (%s, %s layer)\n", t.Tool, t.Key, t.Action, orNone(t.Rule), orNone(t.Layer))
	}
	switch sb := rep.Sandbox; {
	case sb.Refusal != "":
		fmt.Fprintf(w, "sandbox:     shell not assembled: %s\n", sb.Refusal)
	case sb.Resolution != nil:
		r := sb.Resolution
		fmt.Fprintf(w, "sandbox:     %s (requested %s, network %s, authority %s)\n", r.ResolutionKind, r.RequestedMode, r.Network, r.EffectiveAuthority)
	}
	printSkills(w, rep.Skills)
	printMCP(w, rep.MCP)
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note:        %s\n", n)
	}
	return nil
}

// printSkills prints the Skill part of the report (docs/skills.md).
func printSkills(w io.Writer, s *queries.SkillsReport) {
	if s == nil {
		return
	}
	fmt.Fprintf(w, "skills:      %d available, ambiguous %s; budgets: catalogue %d/%d tokens, selected %d/%d tokens (%s)\n",
		s.Available, orNone(strings.Join(s.Ambiguous, ", ")), s.CatalogTokens, s.Budgets.Catalog, s.SelectedTokens, s.Budgets.Selected, s.Budgets.From)
	for _, r := range s.Required {
		fmt.Fprintf(w, "  required  %s %s sha256 %s\n", r.Name, printable(r.Source, 0), r.SHA256)
	}
	if s.RequiredError != "" {
		fmt.Fprintf(w, "  error     %s\n", printable(s.RequiredError, 0))
	}
	for _, p := range s.Preview {
		// A checked-in SKILL.md's words: escaped, as a command's output is (printable).
		fmt.Fprintf(w, "  skill     %s (%s): %s\n", p.Name, p.Scope, printable(p.Description, 0))
	}
	for _, p := range s.Problems {
		fmt.Fprintf(w, "  not loaded %s: %s\n", printable(p.Source, 0), printable(p.Error, 0))
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
