package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zuno-run/zuno/commands"
	zapp "github.com/zuno-run/zuno/commands/app"
)

func newSessionAnswerCmd() *cobra.Command {
	answer := &cobra.Command{
		Use:   "answer SESSION ASK once|always|reject",
		Short: "Answer a permission ask of a session's turn, from any process",
		Long: `Record the answer to a permission ask (session.permission.answered.1 in the session's
inbox). A turn waiting for it in another process (zuno run --asks wait, or at a terminal) goes
on at once; a suspended turn (zuno run --asks suspend) goes on when it is resumed: by a running
zuno worker, or with zuno session resume. An ask is answered once; answering it again is
refused (already_answered). An ask whose turn ended the call unanswered (interrupted, or
recovered by a later run) takes no answer: ask_not_pending.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 3 {
				return usagef("zuno session answer takes a session id, an ask id (ask_…) and once, always or reject")
			}
			switch args[2] {
			case "once", "always", "reject":
				return nil
			}
			return usagef("answer %q: say once, always or reject", args[2])
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			sid, askID, reply := args[0], args[1], args[2]
			return withApp(cmd, func(ctx context.Context, a *app) error {
				// An ask's id is its call's ("ask_" + call id, docs/permissions.md "Asking").
				res, err := a.Commands.AnswerPermission(ctx, commandMeta(cmd, sid), sid, askID, strings.TrimPrefix(askID, "ask_"), reply)
				if err != nil {
					return err
				}
				return printResult(cmd, format, res, func() string {
					if res.Duplicate {
						return "already handled: this command id answered the ask before"
					}
					return fmt.Sprintf("answered %s: %s (resume a suspended turn with: zuno session resume %s)", askID, reply, sid)
				})
			})
		},
	}
	addCommandIDFlag(answer)
	addFormatFlag(answer, "table")
	return answer
}

func newSessionResumeCmd() *cobra.Command {
	resume := &cobra.Command{
		Use:   "resume SESSION [--model M] [--format json] [--asks suspend|wait|deny]",
		Short: "Run the rest of a session's suspended turn once its asks are answered",
		Long: `Resume the session's turn that waits on permission asks (suspended, or left waiting by a
process that died): the asked calls run as answered, exactly once, and the turn goes on in this
process. Its command id derives from the answer's event, so a zuno worker resuming it too runs
it once between them. A turn started with a scripted model needs --model scripted:<file>.
Refused with turn_awaits_answer while an ask has no answer (zuno session answer), and with
session_busy while a live process still holds the turn.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("zuno session resume takes a session id")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			format, _ := cmd.Flags().GetString("format")
			if format != "json" && format != "text" {
				return usagef("--format %q: use text or json", format)
			}
			asks, err := asksMode(cmd, false)
			if err != nil {
				return err
			}
			modelSpec, _ := cmd.Flags().GetString("model")
			commandID, _ := cmd.Flags().GetString("command-id")
			return withApp(cmd, func(ctx context.Context, a *app) error {
				obs := newRunObserver(cmd.OutOrStdout(), format, false)
				res, err := a.Commands.ResumeTurn(ctx, zapp.ResumeTurn{Meta: metaOrDerived(commandID, args[0]), SessionID: args[0],
					Model: modelSpec, Observer: obs, Interactive: asks != "deny", Suspend: asks == "suspend",
					Notice: func(s string) { fmt.Fprintln(cmd.ErrOrStderr(), "zuno: note: "+s) }})
				return finishTurn(ctx, a, obs, res, err)
			})
		},
	}
	resume.Flags().String("format", "text", "output format: text or json (one event per line)")
	resume.Flags().String("model", "", "the model to go on with (default: the turn's own; a scripted turn needs scripted:<file>)")
	addApprovalFlags(resume) // not recorded with the turn: a resumed turn takes what its resume is given
	resume.Flags().String("asks", "suspend", "a later ask: suspend (the turn suspends again), wait (for zuno session answer from another process) or deny")
	addCommandIDFlag(resume)
	return resume
}

// metaOrDerived is a resume's command metadata: the id given, else none, so the application
// derives it from the answer (one resumption per answer, whoever sends it).
func metaOrDerived(commandID, sessionID string) commands.Meta {
	return commands.Meta{CommandID: commandID, Actor: "user", CorrelationID: sessionID}
}
