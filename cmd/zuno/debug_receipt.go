package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zuno-run/zuno/commands/queries"
)

func newDebugReceiptCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "receipt rcp_… [--format json|table]",
		Short: "Show a shell call's verification receipt: what ran, the verdict, and what its exit code proves",
		Long: `A shell result names its verification receipt as [verification rcp_…]. This prints the
receipt as the event log holds it (session.verification.receipt.1): the command, the
interpreter and exit policy, the verdict and exit code, what the code covers, its authority
(authoritative receipts are evidence; derived ones are recorded but are not), and each
limitation the command's own text put on the claim, with its remedy. A receipt that is not
recorded is an error (not_found, exit status 1).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("debug receipt takes one receipt id (rcp_…), as a shell result names it")
			}
			if !strings.HasPrefix(args[0], "rcp_") {
				return usagef("%q is not a receipt id: a shell result names its receipt as [verification rcp_…]", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			return withApp(cmd, func(ctx context.Context, a *app) error {
				v, err := a.Queries.VerificationReceipt(ctx, args[0])
				if err != nil {
					return err
				}
				if format == "json" {
					return writeJSON(cmd.OutOrStdout(), v)
				}
				printReceipt(cmd.OutOrStdout(), v)
				return nil
			})
		},
	}
	addFormatFlag(cmd, "table")
	return cmd
}

func printReceipt(w io.Writer, v queries.ReceiptView) {
	code := "none"
	if v.ExitCode != nil {
		code = fmt.Sprint(*v.ExitCode)
	}
	if v.Signal != "" {
		code += " (killed by " + v.Signal + ")"
	}
	fmt.Fprintf(w, "receipt:     %s (event %s, position %d)\n", v.ReceiptID, v.EventID, v.Position)
	fmt.Fprintf(w, "session:     %s, turn %s, call %s\n", v.SessionID, v.TurnID, v.CallID)
	fmt.Fprintf(w, "command:     %s\n", v.Command)
	fmt.Fprintf(w, "workdir:     %s\n", v.Workdir)
	fmt.Fprintf(w, "interpreter: %s\npolicy:      %s\n", v.Interpreter, v.Policy)
	fmt.Fprintf(w, "verdict:     %s\nexit code:   %s\ncoverage:    %s\n", v.Verdict, code, v.Coverage)
	if v.Cancelled || v.TimedOut {
		fmt.Fprintf(w, "ended:       cancelled=%v timedOut=%v\n", v.Cancelled, v.TimedOut)
	}
	fmt.Fprintf(w, "authority:   %s: %s\n", v.Authority, v.Reason)
	if len(v.Limitations) == 0 {
		fmt.Fprintln(w, "limitations: none")
		return
	}
	fmt.Fprintln(w, "limitations:")
	for _, l := range v.Limitations {
		text := ""
		if l.Text != "" {
			text = " `" + l.Text + "`"
		}
		fmt.Fprintf(w, "  - %s%s: %s\n    remedy: %s\n", l.Construct, text, l.Note, l.Remedy)
	}
}
