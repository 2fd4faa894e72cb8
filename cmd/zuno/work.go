package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/zuno-run/zuno/commands"
	zapp "github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/queries"
)

// The plan and todo commands are the plan_get/plan_update/todo_get/todo_update tools from a
// shell: the same JSON arguments, the same typed errors a model gets.

func requireSession(cmd *cobra.Command) (string, error) {
	s, _ := cmd.Flags().GetString("session")
	if s == "" {
		return "", usagef("--session is required: the root session whose work state to use")
	}
	return s, nil
}

func oneJSONArg(what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usagef("give the %s arguments as one JSON object, e.g. '{\"action\":\"create\",...}'", what)
		}
		return nil
	}
}

func newWorkGetCmd(use, short string, view func(q *queries.Queries, ctx context.Context, session string) (any, error)) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			session, err := requireSession(cmd)
			if err != nil {
				return err
			}
			return withApp(cmd, func(ctx context.Context, a *app) error {
				v, err := view(a.Queries, ctx, session)
				if err != nil {
					return err
				}
				return writeJSON(cmd.OutOrStdout(), v)
			})
		},
	}
	cmd.Flags().String("session", "", "root session id")
	return cmd
}

func newWorkUpdateCmd(use, short, tool string, update func(c *zapp.Commands, ctx context.Context, meta commands.Meta, session, args string) (commands.Result, error)) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  oneJSONArg(tool),
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
				res, err := update(a.Commands, ctx, commandMeta(cmd, session), session, args[0])
				if err != nil {
					return err
				}
				return printResult(cmd, format, res, func() string {
					var v any
					json.Unmarshal(res.View, &v)
					b, _ := json.MarshalIndent(v, "", "  ")
					dup := ""
					if res.Duplicate {
						dup = " (duplicate command: nothing written)"
					}
					return fmt.Sprintf("%s%s", b, dup)
				})
			})
		},
	}
	cmd.Flags().String("session", "", "root session id")
	addCommandIDFlag(cmd)
	addFormatFlag(cmd, "table")
	return cmd
}

func newPlanCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "plan", Short: "The durable plan of a root session (plan_get, plan_update)"}
	cmd.AddCommand(
		newWorkGetCmd("get --session S", "Print the focused plan (null when there is none)", (*queries.Queries).Plan),
		newWorkUpdateCmd("update --session S JSON", "Apply plan_update arguments, e.g. '{\"action\":\"create\",\"title\":\"…\",\"steps\":[{\"title\":\"…\"}]}'",
			"plan_update", (*zapp.Commands).UpdatePlan),
	)
	return cmd
}

func newTodoCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "todo", Short: "The todo items of a root session (todo_get, todo_update)"}
	cmd.AddCommand(
		newWorkGetCmd("get --session S", "Print the todo list", (*queries.Queries).Todos),
		newWorkUpdateCmd("update --session S JSON", "Apply todo_update arguments, e.g. '{\"items\":[{\"title\":\"…\"}]}'",
			"todo_update", (*zapp.Commands).UpdateTodos),
	)
	return cmd
}
