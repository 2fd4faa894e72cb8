package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

func newProjectionsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "projections", Short: "Inspect and rebuild the read models"}
	status := &cobra.Command{
		Use:   "status [--format json|table]",
		Short: "Checkpoint and lag of each projector",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			return withApp(cmd, func(ctx context.Context, a *app) error {
				st, err := a.Queries.ProjectionStatus(ctx)
				if err != nil {
					return err
				}
				if format == "json" {
					return writeJSON(cmd.OutOrStdout(), st)
				}
				rows := make([][]any, len(st))
				for i, s := range st {
					rows[i] = []any{s.Projector, s.Checkpoint, s.Head, s.Lag}
				}
				return writeTable(cmd.OutOrStdout(), []string{"PROJECTOR", "CHECKPOINT", "HEAD", "LAG"}, rows)
			})
		},
	}
	addFormatFlag(status, "table")
	catchUp := &cobra.Command{
		Use:   "catch-up",
		Short: "Apply every stored event the read models have not seen yet",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withApp(cmd, func(ctx context.Context, a *app) error {
				pos, err := a.Commands.CatchUpProjections(ctx)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "read models at position %d\n", pos)
				return nil
			})
		},
	}
	rebuild := &cobra.Command{
		Use:   "rebuild [NAME...]",
		Short: "Drop and replay read models from the event log (all, or the named projectors)",
		Long: `Drop the named projectors' rows (all projectors when none is named), reset their
checkpoints and replay the whole event log into them, in one transaction: readers see the
old read model until the rebuilt one is committed.`,
		RunE: func(cmd *cobra.Command, names []string) error {
			return withApp(cmd, func(ctx context.Context, a *app) error {
				r, err := a.Commands.RebuildProjections(ctx, names...)
				if err != nil {
					return err
				}
				rate := float64(r.Events) / max(r.Elapsed.Seconds(), 1e-9)
				fmt.Fprintf(cmd.OutOrStdout(), "rebuilt %s from %d events in %s (%.0f events/s)\n",
					describe(r.Projectors), r.Events, r.Elapsed.Round(time.Millisecond), rate)
				return nil
			})
		},
	}
	cmd.AddCommand(status, catchUp, rebuild)
	return cmd
}

func describe(names []string) string {
	if len(names) == 0 {
		return "all read models"
	}
	return fmt.Sprint(names)
}
