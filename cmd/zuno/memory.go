package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	zapp "github.com/zuno-run/zuno/commands/app"
)

// zuno memory: the project memory from a shell (docs/memory.md). show prints it and the
// proposals waiting for review; approve and reject are the review a model has no tool for.

func newMemoryCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "memory", Short: "The project memory (show, approve, reject)"}
	cmd.PersistentFlags().String("dir", "", "a directory of the project (default: the working directory)")
	cmd.AddCommand(newMemoryShowCmd(), newMemoryReviewCmd(true), newMemoryReviewCmd(false))
	return cmd
}

// memoryScopeOf is the memory scope of --dir's project, as a turn there resolves it.
func memoryScopeOf(cmd *cobra.Command) (string, error) {
	dir, _ := cmd.Flags().GetString("dir")
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		dir = wd
	}
	cfg, err := loadConfigFrom(configOptionsIn(dir))
	if err != nil {
		return "", err
	}
	return zapp.MemoryScope(cfg.Layers.Paths.ProjectRoot, dir), nil
}

func newMemoryShowCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show [--dir D]",
		Short: "Print the project memory, its revision and the proposals waiting for review",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			scope, err := memoryScopeOf(cmd)
			if err != nil {
				return err
			}
			return withApp(cmd, func(ctx context.Context, a *app) error {
				v, err := a.Queries.Memory(ctx, scope)
				if err != nil {
					return err
				}
				if format == "json" {
					return writeJSON(cmd.OutOrStdout(), v)
				}
				w := cmd.OutOrStdout()
				fmt.Fprintf(w, "memory %s  revision %d  %d bytes\n", v.Scope, v.Revision, len(v.Content))
				if v.Content != "" {
					fmt.Fprintln(w, v.Content)
				}
				for _, p := range v.Pending {
					fmt.Fprintf(w, "pending %s  against revision %d  from %s %s\n%s\n", p.ID, p.BaseRevision, p.SessionID, p.CallID, p.Content)
				}
				return nil
			})
		},
	}
	addFormatFlag(cmd, "table")
	return cmd
}

func newMemoryReviewCmd(approve bool) *cobra.Command {
	use, short := "approve PROPOSAL", "Apply a pending memory proposal (refused if the memory changed since it was written)"
	if !approve {
		use, short = "reject PROPOSAL [--reason R]", "Close a pending memory proposal without applying it"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			scope, err := memoryScopeOf(cmd)
			if err != nil {
				return err
			}
			reason, _ := cmd.Flags().GetString("reason")
			return withApp(cmd, func(ctx context.Context, a *app) error {
				res, err := a.Commands.ReviewMemory(ctx, commandMeta(cmd, scope), scope, args[0], approve, reason)
				if err != nil {
					return err
				}
				return printResult(cmd, format, res, func() string { return string(res.View) })
			})
		},
	}
	if !approve {
		cmd.Flags().String("reason", "", "why, recorded on the rejection")
	}
	addCommandIDFlag(cmd)
	addFormatFlag(cmd, "table")
	return cmd
}
