package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// newTaskContextCmd is `zuno task-context show`: task_context action=get from a shell, read
// from the root session's stream like the tool (docs/task-context.md).
func newTaskContextCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "task-context", Short: "The task context of a root session (task_context action=get)"}
	show := &cobra.Command{
		Use:   "show --session S",
		Short: "Print the task context: objective, kind, sources, constraints, checks (task null when there is none)",
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
				v, err := a.Queries.TaskContext(ctx, session)
				if err != nil {
					return err
				}
				if format == "json" {
					return writeJSON(cmd.OutOrStdout(), v)
				}
				b, err := json.Marshal(v)
				if err != nil {
					return err
				}
				var tv taskContextView
				if err := json.Unmarshal(b, &tv); err != nil {
					return err
				}
				_, err = fmt.Fprint(cmd.OutOrStdout(), tv.text())
				return err
			})
		},
	}
	show.Flags().String("session", "", "root session id")
	addFormatFlag(show, "table")
	cmd.AddCommand(show)
	return cmd
}

// taskContextView is the part of the JSON view the table shows.
type taskContextView struct {
	Revision uint64 `json:"revision"`
	Stale    bool   `json:"stale"`
	Task     *struct {
		TaskID    string `json:"task_id"`
		Objective string `json:"objective"`
		TaskKind  string `json:"task_kind"`
		Status    string `json:"status"`
		Sources   []struct {
			MessageID string `json:"message_id"`
			Summary   string `json:"summary"`
		} `json:"sources"`
		Constraints []string `json:"constraints"`
		Checks      []struct {
			ID, Kind, Title, Status string
		} `json:"checks"`
	} `json:"task"`
}

// text is the table form: one line per fact, checks with their status.
func (v taskContextView) text() string {
	t := v.Task
	if t == nil {
		return fmt.Sprintf("no task context (revision %d)\n", v.Revision)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s · %s · %s · revision %d", t.TaskID, t.TaskKind, t.Status, v.Revision)
	if v.Stale {
		b.WriteString(" · stale: a newer user message takes precedence")
	}
	fmt.Fprintf(&b, "\nobjective: %s\n", t.Objective)
	for _, s := range t.Sources {
		fmt.Fprintf(&b, "source:     %s  %s\n", s.MessageID, s.Summary)
	}
	for _, c := range t.Constraints {
		fmt.Fprintf(&b, "constraint: %s\n", c)
	}
	for _, c := range t.Checks {
		fmt.Fprintf(&b, "check:      %s [%s] %s: %s\n", c.ID, c.Kind, c.Status, c.Title)
	}
	return b.String()
}
