package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/session"
)

// newID returns a time-ordered id with a kind prefix, e.g. ses_0193….
func newID(prefix string) string {
	return prefix + strings.ReplaceAll(uuid.Must(uuid.NewV7()).String(), "-", "")
}

// commandMeta builds the command envelope from --command-id (a fresh id when absent).
func commandMeta(cmd *cobra.Command, correlation string) commands.Meta {
	id, _ := cmd.Flags().GetString("command-id")
	if id == "" {
		id = newID("cmd_")
	}
	return commands.Meta{CommandID: id, Actor: "user", CorrelationID: correlation}
}

func addCommandIDFlag(cmd *cobra.Command) {
	cmd.Flags().String("command-id", "", "idempotency key: re-sending a command with the same id returns the first result and writes nothing")
}

// printResult prints a command's result: the JSON result, or the view for people.
func printResult(cmd *cobra.Command, format string, res commands.Result, human func() string) error {
	if format == "json" {
		return writeJSON(cmd.OutOrStdout(), res)
	}
	fmt.Fprintln(cmd.OutOrStdout(), human())
	return nil
}

func newSessionCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "session", Short: "Create, list and add to sessions"}

	create := &cobra.Command{
		Use:   "create --title T [--agent A] [--id ses_…]",
		Short: "Create a session",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			title, _ := cmd.Flags().GetString("title")
			agent, _ := cmd.Flags().GetString("agent")
			id, _ := cmd.Flags().GetString("id")
			if id == "" {
				id = newID("ses_")
			}
			return withApp(cmd, func(ctx context.Context, a *app) error {
				res, err := a.send(ctx, &commands.CreateSession{Meta: commandMeta(cmd, id),
					Create: session.Create{SessionID: id, Title: title, Agent: agent}})
				if err != nil {
					return err
				}
				return printResult(cmd, format, res, func() string { return id })
			})
		},
	}
	create.Flags().String("title", "", "the session's title")
	create.Flags().String("agent", "build", "the agent that works in the session")
	create.Flags().String("id", "", "session id (default: a new ses_… id)")
	addCommandIDFlag(create)
	addFormatFlag(create, "table")

	message := &cobra.Command{
		Use:   "message SESSION TEXT",
		Short: "Append a user message to a session",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usagef("zuno session message takes a session id and the message text")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			return withApp(cmd, func(ctx context.Context, a *app) error {
				meta := commandMeta(cmd, args[0])
				res, err := a.send(ctx, &commands.AppendUserMessage{Meta: meta, AppendUserMessage: session.AppendUserMessage{
					SessionID: args[0], MessageID: "msg_" + strings.TrimPrefix(meta.CommandID, "cmd_"), Text: args[1]}})
				if err != nil {
					return err
				}
				return printResult(cmd, format, res, func() string { return fmt.Sprintf("revision %d", res.Revision) })
			})
		},
	}
	addCommandIDFlag(message)
	addFormatFlag(message, "table")

	list := &cobra.Command{
		Use:   "list [--format json|table] [--limit N]",
		Short: "List sessions, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			limit, _ := cmd.Flags().GetInt("limit")
			if limit <= 0 {
				return usagef("--limit must be positive")
			}
			return withApp(cmd, func(ctx context.Context, a *app) error {
				if _, err := a.runner.CatchUp(ctx); err != nil {
					return err
				}
				rows, err := a.rm.Query(ctx, fmt.Sprintf(`SELECT id, title, agent, parent_session_id, message_count, time_created, time_updated
					FROM session ORDER BY time_created DESC, id DESC LIMIT %d`, limit), 0)
				if err != nil {
					return err
				}
				if format == "json" {
					return writeJSON(cmd.OutOrStdout(), rowsAsObjects(rows.Columns, rows.Rows))
				}
				return writeTable(cmd.OutOrStdout(), []string{"ID", "TITLE", "AGENT", "PARENT", "MESSAGES", "CREATED", "UPDATED"}, rows.Rows)
			})
		},
	}
	addFormatFlag(list, "table")
	list.Flags().Int("limit", 50, "at most this many sessions")
	cmd.AddCommand(create, message, list)
	return cmd
}

// decodeArgs reads a tool's JSON arguments strictly: an unknown field is an error naming it.
func decodeArgs(raw string, into any) error {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return usagef("arguments are not valid JSON for this tool: %v", err)
	}
	if dec.More() {
		return usagef("arguments hold more than one JSON value")
	}
	return nil
}
