package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zuno-run/zuno/commands"
)

// zuno goal: the session's Goal from a shell (docs/goals.md). show is goal_get; complete
// goes through the same completion barrier as goal_update status=complete; resume and
// answer are the user's controls a model has no tool for.

func newGoalCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "goal", Short: "The Goal of a root session (show, complete, resume, answer)"}
	cmd.AddCommand(newGoalShowCmd(), newGoalCompleteCmd(), newGoalResumeCmd(), newGoalAnswerCmd())
	return cmd
}

func newGoalShowCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show --session S",
		Short: "Print the Goal (null when the session never had one)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			session, err := requireSession(cmd)
			if err != nil {
				return err
			}
			return withApp(cmd, func(ctx context.Context, a *app) error {
				v, err := a.Queries.Goal(ctx, session)
				if err != nil {
					return err
				}
				if format == "json" {
					return writeJSON(cmd.OutOrStdout(), map[string]any{"goal": v})
				}
				b, _ := json.Marshal(v)
				return printGoal(cmd.OutOrStdout(), b)
			})
		},
	}
	cmd.Flags().String("session", "", "root session id")
	addFormatFlag(cmd, "table")
	return cmd
}

// goalText is the Goal view as printGoal reads it (the view's JSON, not its Go type: this
// file prints, it does not import the domain).
type goalText struct {
	GoalID      string `json:"goal_id"`
	Revision    uint64 `json:"revision"`
	Objective   string `json:"objective"`
	Status      string `json:"status"`
	OwnerTurnID string `json:"owner_turn_id"`
	Criteria    []struct {
		ID            string `json:"id"`
		Text          string `json:"text"`
		NeedsEvidence bool   `json:"needs_evidence"`
		Evidence      string `json:"evidence"`
	} `json:"criteria"`
	Waiting *struct {
		RequestID string `json:"request_id"`
		Question  string `json:"question"`
	} `json:"waiting"`
}

func printGoal(w io.Writer, view []byte) error {
	var g *goalText
	if err := json.Unmarshal(view, &g); err != nil {
		return err
	}
	if g == nil {
		_, err := fmt.Fprintln(w, "no goal")
		return err
	}
	fmt.Fprintf(w, "%s  revision %d  %s\n%s\n", g.GoalID, g.Revision, g.Status, g.Objective)
	for _, c := range g.Criteria {
		mark := ""
		if c.NeedsEvidence {
			mark = " (needs evidence"
			if c.Evidence != "" {
				mark += ": " + c.Evidence
			}
			mark += ")"
		}
		fmt.Fprintf(w, "  - %s: %s%s\n", c.ID, c.Text, mark)
	}
	if g.Waiting != nil {
		fmt.Fprintf(w, "waiting for input %s: %s\n  answer: zuno goal answer --session S --request %s TEXT\n",
			g.Waiting.RequestID, g.Waiting.Question, g.Waiting.RequestID)
	}
	return nil
}

// goalCommand is one of the Goal's commands from the CLI: --session, --command-id,
// --format, and the result printed as the Goal after it.
func goalCommand(use, short string, args cobra.PositionalArgs, send func(cmd *cobra.Command, a *app, ctx context.Context, meta commands.Meta, session string, args []string) (commands.Result, error)) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  args,
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			session, err := requireSession(cmd)
			if err != nil {
				return err
			}
			return withApp(cmd, func(ctx context.Context, a *app) error {
				res, err := send(cmd, a, ctx, commandMeta(cmd, session), session, args)
				if err != nil {
					return err
				}
				if format == "json" {
					return writeJSON(cmd.OutOrStdout(), res)
				}
				return printGoal(cmd.OutOrStdout(), res.View)
			})
		},
	}
	cmd.Flags().String("session", "", "root session id")
	addCommandIDFlag(cmd)
	addFormatFlag(cmd, "table")
	return cmd
}

// expectedFlag reads --expected-revision; nil when not given.
func expectedFlag(cmd *cobra.Command) *uint64 {
	if !cmd.Flags().Changed("expected-revision") {
		return nil
	}
	v, _ := cmd.Flags().GetUint64("expected-revision")
	return &v
}

func newGoalCompleteCmd() *cobra.Command {
	cmd := goalCommand("complete --session S [--evidence CRITERION=rcp_…]...",
		"Complete the Goal through the completion barrier (as goal_update status=complete)", cobra.NoArgs,
		func(cmd *cobra.Command, a *app, ctx context.Context, meta commands.Meta, session string, _ []string) (commands.Result, error) {
			pairs, _ := cmd.Flags().GetStringArray("evidence")
			evidence := map[string]string{}
			for _, p := range pairs {
				id, rcp, ok := strings.Cut(p, "=")
				if !ok || id == "" || rcp == "" {
					return commands.Result{}, usagef("--evidence %q: write CRITERION=rcp_… (the criterion id and a receipt id)", p)
				}
				evidence[id] = rcp
			}
			return a.Commands.CompleteGoal(ctx, meta, session, expectedFlag(cmd), evidence)
		})
	cmd.Flags().StringArray("evidence", nil, "CRITERION=rcp_…: the verification receipt that meets a criterion needing evidence (repeatable)")
	cmd.Flags().Uint64("expected-revision", 0, "the Goal revision this completion is decided on (default: the current one)")
	return cmd
}

func newGoalResumeCmd() *cobra.Command {
	cmd := goalCommand("resume --session S", "Resume a paused Goal (an open input request must be answered first)", cobra.NoArgs,
		func(cmd *cobra.Command, a *app, ctx context.Context, meta commands.Meta, session string, _ []string) (commands.Result, error) {
			return a.Commands.ResumeGoal(ctx, meta, session, expectedFlag(cmd))
		})
	cmd.Flags().Uint64("expected-revision", 0, "the Goal revision this resume is decided on (default: any)")
	return cmd
}

func newGoalAnswerCmd() *cobra.Command {
	cmd := goalCommand("answer --session S --request req_… TEXT", "Answer the Goal's open input request (goal_request_input)", cobra.ExactArgs(1),
		func(cmd *cobra.Command, a *app, ctx context.Context, meta commands.Meta, session string, args []string) (commands.Result, error) {
			req, _ := cmd.Flags().GetString("request")
			if req == "" {
				return commands.Result{}, usagef("--request is required: the request id zuno goal show names")
			}
			return a.Commands.AnswerGoalInput(ctx, meta, session, req, args[0])
		})
	cmd.Flags().String("request", "", "the input request id (req_…) the answer is for")
	return cmd
}

// goalLine recognises a zuno run prompt that is a Goal control line, "/goal complete" or
// "/goal resume" (docs/goals.md, "Faces"): the user's control, never the model's input.
func goalLine(prompt string) (string, bool) {
	switch strings.Join(strings.Fields(prompt), " ") {
	case "/goal complete":
		return "complete", true
	case "/goal resume":
		return "resume", true
	}
	return "", false
}

// runGoalLine runs a Goal control line of zuno run as zuno goal complete|resume: no turn
// starts and no model is called.
func runGoalLine(cmd *cobra.Command, opts runOptions, line string) error {
	if opts.Session == "" {
		return usagef("/goal %s needs --session: the session whose Goal it is", line)
	}
	return withApp(cmd, func(ctx context.Context, a *app) error {
		meta := commandMeta(cmd, opts.Session)
		var res commands.Result
		var err error
		if line == "complete" {
			res, err = a.Commands.CompleteGoal(ctx, meta, opts.Session, nil, nil)
		} else {
			res, err = a.Commands.ResumeGoal(ctx, meta, opts.Session, nil)
		}
		if err != nil {
			return err
		}
		if opts.Format == "json" {
			return writeJSON(cmd.OutOrStdout(), res)
		}
		return printGoal(cmd.OutOrStdout(), res.View)
	})
}
