package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zuno-run/zuno/commands"
	zapp "github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/events"
)

// The question commands are the CLI's face of the QuestionPort (docs/questions.md): list a
// session's requests, answer them, defer them ("later"), and wait for a request's first
// response. They read the log, not a read model: an answer names the revision it was made
// against, which must be the request's current one.

func newQuestionCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "question", Short: "List, answer, snooze and wait for the questions a session asked"}
	cmd.AddCommand(newQuestionListCmd(), newQuestionAnswerCmd(), newQuestionSnoozeCmd(), newQuestionWaitCmd())
	return cmd
}

func sessionFlag(cmd *cobra.Command) (string, error) {
	s, _ := cmd.Flags().GetString("session")
	if s == "" {
		return "", usagef("--session is required: the session that asked")
	}
	return s, nil
}

func newQuestionListCmd() *cobra.Command {
	list := &cobra.Command{
		Use:   "list --session S [--all] [--format json|table]",
		Short: "List a session's open question requests (--all: answered and voided ones too)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			session, err := sessionFlag(cmd)
			if err != nil {
				return err
			}
			all, _ := cmd.Flags().GetBool("all")
			return withApp(cmd, func(ctx context.Context, a *app) error {
				rs, err := a.Commands.Questions().List(ctx, session, !all)
				if err != nil {
					return err
				}
				views := make([]zapp.RequestView, len(rs))
				for i, r := range rs {
					views[i] = zapp.ViewRequest(r)
				}
				if format == "json" {
					return writeJSON(cmd.OutOrStdout(), views)
				}
				var rows [][]any
				for _, v := range views {
					for _, it := range v.Items {
						state := "pending"
						if ans, ok := v.Answers[it.ID]; ok {
							state = "answered: " + strings.TrimSpace(strings.Join(ans.Selected, ", ")+" "+ans.Text)
						}
						rows = append(rows, []any{v.RequestID, v.Revision, v.Status, orDash(v.Deferred), it.ID, it.Question,
							orDash(optionLabels(it.Options)), state})
					}
				}
				return writeTable(cmd.OutOrStdout(), []string{"REQUEST", "REV", "STATUS", "DEFERRED", "ITEM", "QUESTION", "OPTIONS", "ANSWER"}, rows)
			})
		},
	}
	list.Flags().String("session", "", "the session whose questions to list")
	list.Flags().Bool("all", false, "list answered and voided requests too")
	addFormatFlag(list, "table")
	return list
}

func newQuestionAnswerCmd() *cobra.Command {
	answer := &cobra.Command{
		Use:   "answer --session S REQUEST --revision N ITEM=VALUE... [--command-id ID] [--format json|table]",
		Short: "Answer some or all of a request's items: VALUE is one of the item's options, or free text",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usagef("zuno question answer takes a request id and at least one ITEM=VALUE (zuno question list shows them)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return questionCommand(cmd, args[0], func(ctx context.Context, q *zapp.Questions, m commands.Meta, session string, rev uint64) (commands.QuestionView, error) {
				r, err := q.Get(ctx, session, args[0])
				if err != nil {
					return commands.QuestionView{}, err
				}
				answers, err := zapp.ParseAnswers(r, args[1:])
				if err != nil {
					return commands.QuestionView{}, err
				}
				return q.Answer(ctx, m, session, args[0], rev, answers, "cli")
			}, "answer", args[1:])
		},
	}
	questionFlags(answer)
	return answer
}

func newQuestionSnoozeCmd() *cobra.Command {
	snooze := &cobra.Command{
		Use:   "snooze --session S REQUEST --revision N [--command-id ID] [--format json|table]",
		Short: "Defer a request (\"later\"): the waiting call goes on unanswered, the request stays open",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("zuno question snooze takes one request id")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return questionCommand(cmd, args[0], func(ctx context.Context, q *zapp.Questions, m commands.Meta, session string, rev uint64) (commands.QuestionView, error) {
				return q.Later(ctx, m, session, args[0], rev)
			}, "snooze", nil)
		},
	}
	questionFlags(snooze)
	return snooze
}

func questionFlags(cmd *cobra.Command) {
	cmd.Flags().String("session", "", "the session that asked")
	cmd.Flags().Uint64("revision", 0, "the request's revision you answer (zuno question list shows it)")
	cmd.Flags().String("command-id", "", "the command's id; the same id sent again is answered with its first result (default: derived from the command)")
	addFormatFlag(cmd, "table")
}

// questionCommand runs one answering command: its id is --command-id, else derived from the
// command itself, so the same command typed again is the same command (idempotent), and a
// different one is new.
func questionCommand(cmd *cobra.Command, request string, run func(context.Context, *zapp.Questions, commands.Meta, string, uint64) (commands.QuestionView, error),
	verb string, rest []string) error {
	format, err := getFormat(cmd)
	if err != nil {
		return err
	}
	session, err := sessionFlag(cmd)
	if err != nil {
		return err
	}
	if !cmd.Flags().Changed("revision") {
		return usagef("--revision is required: the revision of the request you answer (zuno question list shows it)")
	}
	rev, _ := cmd.Flags().GetUint64("revision")
	id, _ := cmd.Flags().GetString("command-id")
	if id == "" {
		sum := sha256.Sum256(fmt.Appendf(nil, "%s\n%s\n%s\n%d\n%s", verb, session, request, rev, strings.Join(rest, "\x00")))
		id = "cli-" + verb + "/" + hex.EncodeToString(sum[:12])
	}
	return withApp(cmd, func(ctx context.Context, a *app) error {
		v, err := run(ctx, a.Commands.Questions(), commands.Meta{CommandID: id, Actor: "user"}, session, rev)
		if err != nil {
			return err
		}
		if format == "json" {
			return writeJSON(cmd.OutOrStdout(), v)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s: %s at revision %d; pending: %s\n", v.RequestID, v.Status, v.Revision,
			orDash(strings.Join(v.Pending, ", ")))
		return nil
	})
}

func newQuestionWaitCmd() *cobra.Command {
	wait := &cobra.Command{
		Use:   "wait --session S REQUEST [--format json|table]",
		Short: "Wait for a request's first response; a waiting question is deferred at its stored deadline",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("zuno question wait takes one request id")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			session, err := sessionFlag(cmd)
			if err != nil {
				return err
			}
			return withApp(cmd, func(ctx context.Context, a *app) error {
				r, err := a.Commands.Questions().Wait(ctx, session, args[0])
				if err != nil {
					return err
				}
				v := zapp.ViewRequest(r)
				if format == "json" {
					return writeJSON(cmd.OutOrStdout(), v)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %s at revision %d; deferred: %s\n", v.RequestID, v.Status, v.Revision, orDash(v.Deferred))
				return nil
			})
		},
	}
	wait.Flags().String("session", "", "the session that asked")
	addFormatFlag(wait, "table")
	return wait
}

func optionLabels(opts []events.QuestionOption) string {
	var labels []string
	for _, o := range opts {
		labels = append(labels, o.Label)
	}
	return strings.Join(labels, " | ")
}
