package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/work"
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

func newWorkGetCmd(use, short string, view func(*work.State) any) *cobra.Command {
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
				st, err := a.handlers.Work(ctx, session)
				if err != nil {
					return err
				}
				return writeJSON(cmd.OutOrStdout(), view(st))
			})
		},
	}
	cmd.Flags().String("session", "", "root session id")
	return cmd
}

func newWorkUpdateCmd(use, short, tool string, build func(meta commands.Meta, session, raw string) (any, error)) *cobra.Command {
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
			c, err := build(commandMeta(cmd, session), session, args[0])
			if err != nil {
				return err
			}
			return withApp(cmd, func(ctx context.Context, a *app) error {
				res, err := a.send(ctx, c)
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
		newWorkGetCmd("get --session S", "Print the focused plan (null when there is none)",
			func(s *work.State) any { return s.PlanView() }),
		newWorkUpdateCmd("update --session S JSON", "Apply plan_update arguments, e.g. '{\"action\":\"create\",\"title\":\"…\",\"steps\":[{\"title\":\"…\"}]}'",
			"plan_update", func(meta commands.Meta, session, raw string) (any, error) {
				var u work.PlanUpdate
				if err := decodeArgs(raw, &u); err != nil {
					return nil, err
				}
				return &commands.UpdatePlan{Meta: meta, SessionID: session, Update: u}, nil
			}),
	)
	return cmd
}

func newTodoCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "todo", Short: "The todo items of a root session (todo_get, todo_update)"}
	cmd.AddCommand(
		newWorkGetCmd("get --session S", "Print the todo list",
			func(s *work.State) any { return s.TodoView() }),
		newWorkUpdateCmd("update --session S JSON", "Apply todo_update arguments, e.g. '{\"items\":[{\"title\":\"…\"}]}'",
			"todo_update", func(meta commands.Meta, session, raw string) (any, error) {
				var u work.TodoUpdate
				if err := decodeArgs(raw, &u); err != nil {
					return nil, err
				}
				return &commands.UpdateTodos{Meta: meta, SessionID: session, Update: u}, nil
			}),
	)
	return cmd
}
