package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zuno-run/zuno/commands"
	zapp "github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/queries"
)

// commandMeta builds the command envelope from --command-id (a fresh id when absent).
func commandMeta(cmd *cobra.Command, correlation string) commands.Meta {
	id, _ := cmd.Flags().GetString("command-id")
	if id == "" {
		id = zapp.NewID("cmd_")
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
	cmd := &cobra.Command{Use: "session", Short: "Create, list, show and add to sessions"}
	cmd.AddCommand(newSessionCreateCmd(), newSessionMessageCmd(), newSessionListCmd(), newSessionShowCmd(), newSessionForkCmd(),
		newSessionInterruptCmd(), newSessionRevokeGrantsCmd(), newSessionAnswerCmd(), newSessionResumeCmd())
	return cmd
}

func newSessionCreateCmd() *cobra.Command {
	create := &cobra.Command{
		Use:   "create --title T [--agent A] [--id ses_…]",
		Short: "Create a session",
		Long: `Creates a session of --agent (build by default): an agent that does not exist, or one that
only runs as a delegated child, is refused (unknown_agent, naming the valid agents).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			title, _ := cmd.Flags().GetString("title")
			agent, _ := cmd.Flags().GetString("agent")
			id, _ := cmd.Flags().GetString("id")
			if id == "" {
				id = zapp.NewID("ses_")
			}
			return withApp(cmd, func(ctx context.Context, a *app) error {
				res, err := a.Commands.CreateSession(ctx, commandMeta(cmd, id), zapp.NewSession{SessionID: id, Title: title, Agent: agent})
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
	return create
}

func newSessionMessageCmd() *cobra.Command {
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
				res, err := a.Commands.AppendMessage(ctx, meta, args[0], "msg_"+strings.TrimPrefix(meta.CommandID, "cmd_"), args[1])
				if err != nil {
					return err
				}
				return printResult(cmd, format, res, func() string { return fmt.Sprintf("revision %d", res.Revision) })
			})
		},
	}
	addCommandIDFlag(message)
	addFormatFlag(message, "table")
	return message
}

func newSessionInterruptCmd() *cobra.Command {
	interrupt := &cobra.Command{
		Use:   "interrupt SESSION [--turn TURN]",
		Short: "Stop a session's running turn, in whichever process runs it",
		Long: `Asks the process that holds the lease of the session's running turn to stop it. That
process records the interruption on the turn (session.turn.finished.1, reason interrupted)
and settles a call that was running as cancelled. A session with no running turn is
turn_not_running.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("zuno session interrupt takes the id of the session whose turn to stop")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			turnID, _ := cmd.Flags().GetString("turn")
			return withApp(cmd, func(ctx context.Context, a *app) error {
				res, err := a.Commands.InterruptTurn(ctx, commandMeta(cmd, args[0]), args[0], turnID)
				if err != nil {
					return err
				}
				return printResult(cmd, format, res, func() string { return "interrupt requested" })
			})
		},
	}
	interrupt.Flags().String("turn", "", "the turn to stop (default: the session's running turn)")
	addCommandIDFlag(interrupt)
	addFormatFlag(interrupt, "table")
	return interrupt
}

func newSessionListCmd() *cobra.Command {
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
				rows, err := a.Queries.Sessions(ctx, limit)
				if err != nil {
					return err
				}
				if format == "json" {
					return writeJSON(cmd.OutOrStdout(), rowsAsObjects(rows.Columns, rows.Rows))
				}
				return writeTable(cmd.OutOrStdout(), []string{"ID", "TITLE", "AGENT", "STATUS", "PARENT", "MESSAGES", "CREATED", "UPDATED"}, dashNulls(rows.Rows))
			})
		},
	}
	addFormatFlag(list, "table")
	list.Flags().Int("limit", 50, "at most this many sessions")
	return readOnly(list)
}

func newSessionShowCmd() *cobra.Command {
	show := &cobra.Command{
		Use:   "show SESSION [--format json|table]",
		Short: "Show a session: its agent, workspace, turns with their status, and its conversation",
		Long: `Prints the session, its turns, and its conversation as the model is shown it: each message
with who said it (at most 8 lines of its text, the first and last around what is left out),
each tool call with its arguments, each result under the call it answers. --format json has
the whole conversation under "conversation".`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			return withApp(cmd, func(ctx context.Context, a *app) error {
				info, err := a.Queries.Session(ctx, args[0])
				if err != nil {
					return err
				}
				conv, err := a.Queries.Conversation(ctx, args[0])
				if err != nil {
					return err
				}
				if format == "json" {
					return writeJSON(cmd.OutOrStdout(), struct {
						queries.SessionInfo
						Conversation []queries.ConversationMessage `json:"conversation"`
					}{info, conv})
				}
				w := cmd.OutOrStdout()
				fmt.Fprintf(w, "session:   %s\ntitle:     %s\nagent:     %s\nworkspace: %s\nmessages:  %d\n\n",
					info.SessionID, info.Title, info.Agent, orNone(info.Directory), info.Messages)
				rows := make([][]any, len(info.Turns))
				for i, t := range info.Turns {
					rows[i] = []any{t.TurnID, t.Agent, t.Model, t.Status, t.Steps, t.Error}
				}
				if err := writeTable(w, []string{"TURN", "AGENT", "MODEL", "STATUS", "STEPS", "ERROR"}, rows); err != nil {
					return err
				}
				printConversation(w, conv)
				return nil
			})
		},
	}
	addFormatFlag(show, "table")
	return readOnly(show)
}

func newSessionForkCmd() *cobra.Command {
	fork := &cobra.Command{
		Use:   "fork --from POSITION|EVENT_ID [--title T] [--id ses_…]",
		Short: "Start a new session whose history is another's up to one event",
		Long: `Open a new session whose history is the source session's up to and including the event
--from names (a global position or an event id, as zuno events read prints them). The
history is referenced, not copied: the new session's first event names the source stream,
revision and that event's hash, and loading the fork refuses a source that no longer
carries it. Continue the fork with zuno run --session NEW; the source is not touched.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			from, _ := cmd.Flags().GetString("from")
			if from == "" {
				return usagef("--from is required: the position or event id the fork's history ends with")
			}
			title, _ := cmd.Flags().GetString("title")
			id, _ := cmd.Flags().GetString("id")
			if id == "" {
				id = zapp.NewID("ses_")
			}
			return withApp(cmd, func(ctx context.Context, a *app) error {
				res, err := a.Commands.ForkSession(ctx, commandMeta(cmd, id), from, id, title)
				if err != nil {
					return err
				}
				return printResult(cmd, format, res, func() string { return id })
			})
		},
	}
	fork.Flags().String("from", "", "the global position or event id the history ends with")
	fork.Flags().String("title", "", "the new session's title (default: the source's, with \" (fork)\")")
	fork.Flags().String("id", "", "session id (default: a new ses_… id)")
	addCommandIDFlag(fork)
	addFormatFlag(fork, "table")
	return fork
}
