package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// The job commands read the agent_job and inbox read models (docs/readmodels.md): the jobs a
// parent session delegated with the task tool, and the reports its inbox received.

func newJobCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "job", Short: "List and show the jobs sessions delegated, and their reports"}
	cmd.AddCommand(newJobListCmd(), newJobShowCmd(), newJobInboxCmd())
	return cmd
}

func newJobListCmd() *cobra.Command {
	list := &cobra.Command{
		Use:   "list [--session S] [--format json|table]",
		Short: "List jobs in the order they were admitted: one parent session's, or every session's",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			session, _ := cmd.Flags().GetString("session")
			return withApp(cmd, func(ctx context.Context, a *app) error {
				jobs, err := a.Queries.Jobs(ctx, session)
				if err != nil {
					return err
				}
				if format == "json" {
					return writeJSON(cmd.OutOrStdout(), jobs)
				}
				rows := make([][]any, len(jobs))
				for i, j := range jobs {
					rows[i] = []any{j.JobID, j.ParentSessionID, j.ChildSessionID, j.Agent, j.Status, lane(j.Background),
						j.ReportDelivery, orDash(j.ReportInputID), j.TimeCreated}
				}
				return writeTable(cmd.OutOrStdout(), []string{"JOB", "PARENT", "CHILD", "AGENT", "STATUS", "LANE", "DELIVERY", "REPORT INPUT", "CREATED"}, rows)
			})
		},
	}
	list.Flags().String("session", "", "the parent session whose jobs to list (default: every session's)")
	addFormatFlag(list, "table")
	return list
}

func newJobShowCmd() *cobra.Command {
	show := &cobra.Command{
		Use:   "show JOB_ID [--format json|table]",
		Short: "Show a job: its state, contract, result (the child's task report) and error",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("zuno job show takes one job id (zuno job list shows them)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			return withApp(cmd, func(ctx context.Context, a *app) error {
				j, err := a.Queries.Job(ctx, args[0])
				if err != nil {
					return err
				}
				if format == "json" {
					return writeJSON(cmd.OutOrStdout(), j)
				}
				w := cmd.OutOrStdout()
				fmt.Fprintf(w, "job:          %s\nparent:       %s\nchild:        %s\nagent:        %s\nstatus:       %s\n",
					j.JobID, j.ParentSessionID, j.ChildSessionID, j.Agent, j.Status)
				fmt.Fprintf(w, "lane:         %s\ndelivery:     %s\nreport input: %s\ncreated:      %s\n",
					lane(j.Background), j.ReportDelivery, orDash(j.ReportInputID), j.TimeCreated)
				if j.Error != "" {
					fmt.Fprintf(w, "error:        %s\n", j.Error)
				}
				c := j.Contract
				fmt.Fprintf(w, "\nobjective:    %s\ndeliverable:  %s\ninstructions: %s\nevidence:     %s\n",
					c.Objective, c.Deliverable, c.Instructions, c.SuccessEvidence)
				if j.Result == nil {
					fmt.Fprintln(w, "\nresult:       none yet")
					return nil
				}
				r := j.Result
				fmt.Fprintf(w, "\nresult:       %s\nchanged:      %s\nverified:     %d record(s)\nuncertain:    %s\n",
					r.Status, orDash(strings.Join(r.ChangedPaths, ", ")), len(r.VerificationRecords),
					orDash(strings.Join(r.UncertainSideEffects, "; ")))
				if r.FinalText != "" {
					fmt.Fprintf(w, "\n%s\n", r.FinalText)
				}
				return nil
			})
		},
	}
	addFormatFlag(show, "table")
	return show
}

func newJobInboxCmd() *cobra.Command {
	inbox := &cobra.Command{
		Use:   "inbox --session S [--format json|table]",
		Short: "List the job reports a parent session received, queued or consumed",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			session, _ := cmd.Flags().GetString("session")
			if session == "" {
				return usagef("--session is required: the parent session whose inbox to list")
			}
			return withApp(cmd, func(ctx context.Context, a *app) error {
				inputs, err := a.Queries.Inbox(ctx, session)
				if err != nil {
					return err
				}
				if format == "json" {
					return writeJSON(cmd.OutOrStdout(), inputs)
				}
				rows := make([][]any, len(inputs))
				for i, in := range inputs {
					rows[i] = []any{in.InputID, in.JobID, in.Status, in.Report.Status, orDash(in.Replaces), orDash(in.MessageID),
						in.TimeCreated, orDash(in.TimeConsumed)}
				}
				return writeTable(cmd.OutOrStdout(), []string{"INPUT", "JOB", "STATUS", "REPORT", "REPLACES", "MESSAGE", "CREATED", "CONSUMED"}, rows)
			})
		},
	}
	inbox.Flags().String("session", "", "the parent session whose inbox to list")
	addFormatFlag(inbox, "table")
	return inbox
}

// lane says how a job runs beside its parent.
func lane(background bool) string {
	if background {
		return "background"
	}
	return "foreground"
}
