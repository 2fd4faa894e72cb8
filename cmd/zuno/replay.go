package main

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/zuno-run/zuno/commands/replay"
)

// replayOut is what `zuno replay --format json` prints.
type replayOut struct {
	OK       bool            `json:"ok"`
	Sessions []replay.Report `json:"sessions"`
}

func newReplayCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "replay (--session S | --all) [--verify] [--format json|table]",
		Short: "Re-drive recorded sessions through this build and compare its decisions with the log",
		Long: `Re-drive each turn of a session through this build's runtime and configuration, with the
recorded model responses, tool results and permission answers as inputs: no provider is
called, no tool runs, nothing is written. Every event the runtime decides (prompt receipts
and their digests, the tools offered, scheduling groups, blocked calls and their codes,
permission and sandbox decisions, the uncertain rule, the step-limit finalisation) is
compared with the recorded one, and the first difference of each step is reported with
both values. Run it over stored sessions before rolling out a new build.

A session whose workspace no longer exists is replayed too: a replay touches nothing on
disk, and a step whose decisions needed the workspace (a path the gate looked at, the
project's AGENTS.md) is listed as not checked, with replay_workspace_gone, never as a
difference.

With --verify the exit status is 0 only when every decision agrees and every step was
checked.`,
		Args: cobra.NoArgs,
		RunE: runReplay,
	}
	addFormatFlag(cmd, "table")
	cmd.Flags().String("session", "", "replay this session")
	cmd.Flags().Bool("all", false, "replay every session")
	cmd.Flags().Bool("verify", false, "exit non-zero when a decision differs (replay_mismatch) or a step could not be checked (replay_workspace_gone)")
	cmd.MarkFlagsMutuallyExclusive("session", "all")
	return cmd
}

func runReplay(cmd *cobra.Command, _ []string) error {
	format, err := getFormat(cmd)
	if err != nil {
		return err
	}
	session, _ := cmd.Flags().GetString("session")
	all, _ := cmd.Flags().GetBool("all")
	check, _ := cmd.Flags().GetBool("verify")
	if session == "" && !all {
		return usagef("name the session to replay with --session S, or replay every session with --all")
	}
	return withApp(cmd, func(ctx context.Context, a *app) error {
		ids := []string{session}
		if all {
			var err error
			if ids, err = a.sessionIDs(ctx); err != nil {
				return err
			}
		}
		out := replayOut{OK: true, Sessions: []replay.Report{}}
		var failed error
		for _, id := range ids {
			rep, err := a.Commands.Replay(ctx, id)
			if err != nil {
				return err
			}
			if rep.Differences == nil {
				rep.Differences = []replay.Difference{}
			}
			if rep.Unchecked == nil {
				rep.Unchecked = []replay.Unchecked{}
			}
			if rep.ConfigChanged == nil {
				rep.ConfigChanged = []replay.ConfigChange{}
			}
			out.Sessions = append(out.Sessions, rep)
			if e := rep.Err(); e != nil && failed == nil {
				out.OK, failed = false, e
			}
		}
		if format == "json" {
			if err := writeJSON(cmd.OutOrStdout(), out); err != nil {
				return err
			}
		} else {
			printReplay(cmd.OutOrStdout(), out)
		}
		if check {
			return failed
		}
		return nil
	})
}

// sessionIDs lists every session, oldest first, the pruned ones included: their history is
// recorded as any other's.
func (a *app) sessionIDs(ctx context.Context) ([]string, error) {
	t, err := a.Queries.AllSessions(ctx, 1<<30)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, row := range t.Rows {
		ids = append(ids, fmt.Sprint(row[0]))
	}
	slices.Reverse(ids)
	return ids, nil
}

func printReplay(w io.Writer, out replayOut) {
	for _, r := range out.Sessions {
		switch {
		case len(r.Differences) == 0 && len(r.Unchecked) == 0:
			fmt.Fprintf(w, "%s: %d turns, %d events: every decision agrees\n", r.SessionID, r.Turns, r.Events)
		case len(r.Differences) == 0:
			fmt.Fprintf(w, "%s: %d turns, %d events: every decision checked agrees; %d step(s) need the workspace %s, which no longer exists\n",
				r.SessionID, r.Turns, r.Events, len(r.Unchecked), r.Unchecked[0].Workspace)
		default:
			fmt.Fprintf(w, "%s: %d turns, %d events: %d step(s) differ\n", r.SessionID, r.Turns, r.Events, len(r.Differences))
			for _, d := range r.Differences {
				fmt.Fprintf(w, "  step %d %s %s: recorded %s, replayed %s\n", d.Step, d.Event, d.Field, d.Recorded, d.Replayed)
			}
		}
		for _, u := range r.Unchecked {
			fmt.Fprintf(w, "  step %d %s: not checked, it needs %s from %s\n", u.Step, u.Event, u.Needs, u.Workspace)
		}
		for _, k := range r.Compactions {
			fmt.Fprintf(w, "  compaction %d at step %d (request %s): later steps open with its summary, then the messages from %d on\n",
				k.Window, k.Step, k.RequestID, k.Through)
		}
		for _, ch := range r.ConfigChanged {
			fmt.Fprintf(w, "  note: the %s configuration %s %s\n", ch.Layer, ch.Path, describeChange(ch))
		}
	}
}

// describeChange says how a configuration file differs from the one a turn read.
func describeChange(ch replay.ConfigChange) string {
	switch {
	case ch.Recorded == "":
		return "is read now and was not when turn " + ch.TurnID + " ran"
	case ch.Now == "":
		return "was read by turn " + ch.TurnID + " (SHA-256 " + ch.Recorded + ") and is not read now"
	}
	return "changed since turn " + ch.TurnID + " read it (SHA-256 " + ch.Recorded + ", now " + ch.Now + ")"
}
