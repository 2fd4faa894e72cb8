package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	adsandbox "github.com/zuno-run/zuno/adapters/sandbox"
	zapp "github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/queries"
)

func newDebugPermissionsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "permissions [--agent A] [--permission P] [--resource R] [--session S] [--format json]",
		Short: "Show the resolved permission policy: the mode, every rule in order with its layer, one decision",
		Long: `Prints the policy a turn of the agent runs under after every configuration layer and the
agent's contract are applied: the configured and effective mode, what allow_all still
enforces, and every rule in evaluation order (the last match wins) with the layer it came
from. With --permission (a tool or a permission key) and --resource, the gate's decision for
that call, computed by the gate a turn of the agent gets: the risk gate, the matched rule, its
action, and the action after the mode. external_directory takes a directory (DIR or DIR/*),
decided as a path in it is. --session reads an existing session's agent and
workspace and changes nothing. Runtime approvals (answers of always) and MCP tools are not
part of this output.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			q := zapp.PermissionQuery{}
			q.Agent, _ = cmd.Flags().GetString("agent")
			q.Permission, _ = cmd.Flags().GetString("permission")
			q.Resource, _ = cmd.Flags().GetString("resource")
			q.Session, _ = cmd.Flags().GetString("session")
			if q.Resource != "" && q.Permission == "" {
				return usagef("--resource needs --permission: name the permission key to decide (read, edit, shell, external_directory, …)")
			}
			if q.Dir, err = os.Getwd(); err != nil {
				return err
			}
			return withApp(cmd, func(ctx context.Context, a *app) error {
				open, done, err := scratchTools(a.cfg, q.Dir)
				if err != nil {
					return err
				}
				defer done()
				q.OpenTools = open
				rep, err := a.Permissions(ctx, q)
				if err != nil {
					return err
				}
				if format == "json" {
					return writeJSON(cmd.OutOrStdout(), rep)
				}
				printPermissions(cmd.OutOrStdout(), rep)
				return nil
			})
		},
	}
	addFormatFlag(cmd, "table")
	cmd.Flags().String("agent", "", "agent (default: the session's, else build)")
	cmd.Flags().String("permission", "", "permission key to decide: read, edit, shell, external_directory, …")
	cmd.Flags().String("resource", "", "what the call touches: a path, a command, dir/* for external_directory")
	cmd.Flags().String("session", "", "read the agent and workspace of this session (ses_…)")
	return cmd
}

func printPermissions(w io.Writer, r zapp.PermissionReport) {
	fmt.Fprintf(w, "agent:      %s\nworkspace:  %s\nmode:       %s (configured %s)", r.Agent, r.Workspace, r.Mode, r.ConfiguredMode)
	if r.ModeReason != "" {
		fmt.Fprintf(w, ": %s", r.ModeReason)
	}
	fmt.Fprintf(w, "\nallow_all still enforces: %v\n\n", r.AllowAllStillEnforces)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tPERMISSION\tPATTERN\tACTION\tLAYER\tSOURCE")
	for i, rule := range r.Rules {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", i+1, rule.Key, rule.Pattern, rule.Action, rule.Layer, rule.Source)
	}
	if r.Contract != nil {
		for _, rule := range r.Contract.Rules {
			fmt.Fprintf(tw, "-\t%s\t%s\t%s\t%s\t%s\n", rule.Key, rule.Pattern, rule.Action, rule.Layer, rule.Source)
		}
	}
	tw.Flush()
	if d := r.Decision; d != nil {
		matched := "no rule matched"
		if d.Rule != nil {
			matched = fmt.Sprintf("%s %q → %s (%s layer, %s)", d.Rule.Key, d.Rule.Pattern, d.Rule.Action, d.Rule.Layer, d.Rule.Source)
		}
		fmt.Fprintf(w, "\ndecision:   %s %q\n  matched:  %s\n  rule action: %s, action after mode: %s\n", d.Key, d.Resource, matched, d.RuleAction, d.Action)
	}
	if g := r.Gate; g != nil {
		// What the gate records: the risk gate can ask, or refuse before any rule is read.
		fmt.Fprintf(w, "gate:       %s %q → %s (source %s)\n", g.Key, g.Resource, g.Action, g.Source)
	}
	if r.Message != "" {
		fmt.Fprintf(w, "  %s\n", r.Message)
	}
	fmt.Fprintf(w, "\nnote: %s\n", r.Note)
}

// sandboxReport is zuno debug sandbox: the configured sandbox, how it resolves for the agent,
// and the two checks, which are different conclusions (a native backend can execute while
// the OS confinement is not ready).
type sandboxReport struct {
	Agent          string               `json:"agent"`
	ReadOnlyAgent  bool                 `json:"readOnlyAgent"`
	Workspace      string               `json:"workspace"`
	Config         any                  `json:"config"`
	Resolution     any                  `json:"resolution,omitempty"`
	Refusal        string               `json:"refusal,omitempty"`
	Ready          bool                 `json:"ready"`
	Probe          adsandbox.Status     `json:"probe"`
	ExecutionReady *bool                `json:"executionReady"`
	Execution      *adsandbox.Execution `json:"execution,omitempty"`
	// Protected is the one list both doors enforce, each path with why (docs/sandbox.md,
	// "Protected by default"); Unenforced says what the OS does not enforce when the shell
	// runs natively.
	Protected  []adsandbox.Protection `json:"protected"`
	Unenforced string                 `json:"unenforced,omitempty"`
	// GitNotes say what the look at git's places protected conservatively or cut short.
	GitNotes []string `json:"gitNotes,omitempty"`
}

func newDebugSandboxCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sandbox [--agent A] [--check | --check-execution] [--format json]",
		Short: "Show how the sandbox resolves for an agent, and check the backend",
		Long: `Prints the configured sandbox (mode, network, backend, onUnavailable, writable roots,
protected paths), every protected path both the sandbox and the file tools enforce (the
defaults .git, .zuno, zuno.json[c], Zuno's data, database and configuration, and
sandbox.protectedPaths) with why and whether it is hidden, how it resolves for the agent here (resolutionKind, effective authority,
the typed reason), and ready: whether the OS confinement backend (system bubblewrap >= 0.8.0
with user namespaces) is verified. --check exits non-zero unless it is ready. --check-execution
runs a command through the selected backend and reports executionReady, exiting non-zero
unless it ran: a native backend can be executionReady while not ready.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			name, _ := cmd.Flags().GetString("agent")
			check, _ := cmd.Flags().GetBool("check")
			execCheck, _ := cmd.Flags().GetBool("check-execution")
			if check && execCheck {
				return usagef("--check and --check-execution are two different checks: give one")
			}
			if name == "" {
				name = "build"
			}
			dir, err := os.Getwd()
			if err != nil {
				return err
			}
			if real, err := filepath.EvalSymlinks(dir); err == nil {
				dir = real
			}
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			rep, err := debugSandbox(cmd.Context(), cfg, name, dir, execCheck)
			if err != nil {
				return err
			}
			if format == "json" {
				err = writeJSON(cmd.OutOrStdout(), rep)
			} else {
				printSandbox(cmd.OutOrStdout(), rep)
			}
			switch {
			case err != nil:
				return err
			case check && !rep.Ready:
				return &checkError{"sandbox_not_ready", "the OS sandbox is not ready: " + rep.Probe.Reason.Text +
					"; see docs/sandbox.md for what the Linux backend needs (system bubblewrap >= 0.8.0, user namespaces)"}
			case execCheck && !*rep.ExecutionReady:
				return &checkError{"sandbox_cannot_execute", "the selected backend cannot run commands: " + rep.Execution.Error}
			}
			return nil
		},
	}
	addFormatFlag(cmd, "table")
	cmd.Flags().String("agent", "", "agent (default build); a read-only agent narrows the sandbox to read-only")
	cmd.Flags().Bool("check", false, "exit non-zero unless the OS confinement backend is ready")
	cmd.Flags().Bool("check-execution", false, "run a command through the selected backend; exit non-zero unless it runs")
	return cmd
}

func printSandbox(w io.Writer, r sandboxReport) {
	fmt.Fprintf(w, "agent:      %s (read-only: %v)\nworkspace:  %s\n", r.Agent, r.ReadOnlyAgent, r.Workspace)
	fmt.Fprintf(w, "ready:      %v", r.Ready)
	if r.Probe.Launcher != "" {
		fmt.Fprintf(w, " (%s %s)", r.Probe.Launcher, r.Probe.Version)
	}
	if !r.Ready {
		fmt.Fprintf(w, ": %s", r.Probe.Reason.Text)
	}
	fmt.Fprintln(w)
	if r.ExecutionReady != nil {
		fmt.Fprintf(w, "executionReady: %v\n", *r.ExecutionReady)
	}
	printProtected(w, r)
	if r.Refusal != "" {
		fmt.Fprintf(w, "\nthe shell is not assembled:\n%s\n", r.Refusal)
		return
	}
	b, _ := json.MarshalIndent(r.Resolution, "", "  ")
	fmt.Fprintf(w, "resolution: %s\n", b)
}

// printProtected lists the protected paths, hidden ones first marked as such, each with why.
func printProtected(w io.Writer, r sandboxReport) {
	fmt.Fprintln(w, "protected paths (the shell's sandbox and the file tools enforce them):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  PATH\tAS\tSOURCE\tWHY")
	for _, p := range r.Protected {
		as := "read-only"
		switch {
		case p.Hidden:
			as = "hidden"
		case p.Cover != "":
			// Covered in workspace-write when missing (docs/sandbox.md, "Covered when missing").
			as = "read-only, covered if missing"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", p.Path, as, p.Source, p.Why)
	}
	tw.Flush()
	if r.Unenforced != "" {
		fmt.Fprintf(w, "not enforced by the OS: %s\n", r.Unenforced)
	}
	for _, n := range r.GitNotes {
		fmt.Fprintf(w, "git: %s\n", n)
	}
}

// checkError is a diagnostic check that failed: exit status 1, with a stable code.
type checkError struct{ code, msg string }

func (e *checkError) Error() string { return e.msg }
func (e *checkError) Code() string  { return e.code }

// debugSandbox resolves the sandbox as a turn of the agent in dir would, and runs the checks.
func debugSandbox(ctx context.Context, cfg config, name, dir string, execCheck bool) (sandboxReport, error) {
	readOnly, err := queries.ReadOnly(name, cfg.Agents)
	if err != nil {
		return sandboxReport{}, err
	}
	rep := sandboxReport{Agent: name, ReadOnlyAgent: readOnly, Workspace: dir, Config: cfg.SandboxConfig}
	rep.Probe = adsandbox.Probe{}.Check(ctx)
	rep.Ready = rep.Probe.Ready
	sess, err := adsandbox.Assemble(ctx, cfg.SandboxConfig, adsandbox.Request{Workspace: dir, ReadOnlyAgent: readOnly,
		Own: ownLocationsFor(cfg, dir)}, adsandbox.Probe{})
	rep.Protected, rep.Unenforced, rep.GitNotes = sess.Protected, sess.Unenforced, sess.GitNotes
	if err != nil {
		rep.Refusal = err.Error()
	} else {
		rep.Resolution = sess.Resolution
	}
	if execCheck {
		ex := adsandbox.CheckExecution(ctx, sess, dir)
		rep.Execution, rep.ExecutionReady = &ex, &ex.ExecutionReady
	}
	return rep, nil
}
