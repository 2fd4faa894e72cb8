package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/zuno-run/zuno/adapters/provider"
	"github.com/zuno-run/zuno/commands/queries"
)

func newDebugCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "debug", Short: "Diagnostics: the exact prompt a model was sent, an agent's effective configuration"}
	cmd.AddCommand(newDebugPromptCmd(), newDebugAgentCmd(), newDebugPathsCmd(), newDebugPermissionsCmd(), newDebugSandboxCmd(),
		newDebugReceiptCmd())
	return readOnly(cmd)
}

func newDebugPromptCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "prompt [--session S [--step N]] [--show-sensitive] [--wire] [--from-start] [--all-parts] [--format json|table]",
		Short: "Show the prompt receipt of a provider request and re-verify its digests",
		Long: `Without --session: the latest receipt in the database. With --session: the receipt the
session's latest provider request used. With --step N as well: the receipt of its Nth
provider request. The chain is session.provider.request.1 → promptReceiptID →
session.prompt.assembled.1, read from the event log, and every stored byte is hashed again.

Section content and system/developer text are shown as <redacted> unless --show-sensitive;
ids, sources, sizes and digests are always shown and can still reveal a project's layout.

With --wire: the HTTP body of each attempt of the step is rendered again from the receipt with
the adapter mapping recorded when it was sent, hashed, and compared with the SHA-256 of the
body that was sent ("wire: verified", or wire_mismatch and exit status 1).

A step is checked from the session's latest checkpoint before it (a receipt that records the
digest's state after its conversation, docs/formats/receipts.md §13), reading only the steps
since; the output names it. The checkpoint stands for the conversation before it: zuno verify
--session S --wire checks every checkpoint against the log, and --from-start re-derives the
step from the session's first event instead (as it is when there is no checkpoint, or it does
not hold). Only the parts the step added are listed, the earlier ones counted and digested;
--all-parts lists them all (reading from the start).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			sessionID, _ := cmd.Flags().GetString("session")
			step, _ := cmd.Flags().GetInt("step")
			sensitive, _ := cmd.Flags().GetBool("show-sensitive")
			wire, _ := cmd.Flags().GetBool("wire")
			if cmd.Flags().Changed("step") {
				if sessionID == "" {
					return usagef("--step needs --session: a step number counts the provider requests of one session")
				}
				if step <= 0 {
					return usagef("--step %d: use a positive step number (1 is the session's first provider request)", step)
				}
			}
			return withApp(cmd, func(ctx context.Context, a *app) error {
				return showPrompt(ctx, cmd, a, format, sessionID, step, sensitive, wire)
			})
		},
	}
	addFormatFlag(cmd, "table")
	cmd.Flags().String("session", "", "session id (ses_…)")
	cmd.Flags().Int("step", 0, "the Nth provider request of the session (needs --session)")
	cmd.Flags().Bool("show-sensitive", false, "show section content and host instructions (do not paste them publicly)")
	cmd.Flags().Bool("wire", false, "render the request body again from the receipt and check it against the digest recorded when it was sent")
	cmd.Flags().Bool("from-start", false, "re-derive the step from the session's first event, not from a checkpoint")
	cmd.Flags().Bool("all-parts", false, "list every part of the conversation, not only the step's (reads from the start)")
	return cmd
}

// showPrompt reads, verifies and prints one step's receipt (and, with wire, its wire
// exchanges). A receipt that fails verification is still shown: it is the one to inspect.
func showPrompt(ctx context.Context, cmd *cobra.Command, a *app, format, sessionID string, step int, sensitive, wire bool) error {
	var (
		view   queries.PromptView
		checks []queries.WireCheck
		err    error
	)
	fromStart, _ := cmd.Flags().GetBool("from-start")
	allParts, _ := cmd.Flags().GetBool("all-parts")
	opt := queries.PromptOptions{FromStart: fromStart, AllParts: allParts}
	if wire { // one read of the session for both
		view, checks, err = a.Queries.PromptWithWireAt(ctx, sessionID, step, sensitive, provider.RenderWire, opt)
	} else {
		view, err = a.Queries.PromptAt(ctx, sessionID, step, sensitive, opt)
	}
	// A view comes back only with a receipt or wire mismatch: the receipt to inspect.
	if err != nil && view.ReceiptID == "" {
		return err
	}
	if format == "json" {
		out := any(view)
		if wire {
			out = struct {
				queries.PromptView
				Wire []queries.WireCheck `json:"wire"`
			}{view, checks}
		}
		if werr := writeJSON(cmd.OutOrStdout(), out); werr != nil {
			return werr
		}
		return err
	}
	printPromptView(cmd.OutOrStdout(), view)
	if wire {
		printWireChecks(cmd.OutOrStdout(), checks)
	}
	return err
}

func printWireChecks(w io.Writer, checks []queries.WireCheck) {
	fmt.Fprintln(w)
	for _, c := range checks {
		verdict := "verified"
		if !c.Verified {
			verdict = "MISMATCH: " + c.Problem
		}
		fmt.Fprintf(w, "wire: %s\n  request %s (attempt %d), %s mapping v%d, %s\n  sent:     %s\n  rendered: %s\n  response: %s\n",
			verdict, c.RequestID, c.Attempt, c.Adapter, c.MappingVersion, c.Endpoint, c.RecordedSHA256, c.RenderedSHA256, c.ResponseSHA256)
	}
}

// printEarlier is the one row standing for the conversation parts a view does not list
// (queries.PromptAt): their count and the conversation digest after them.
func printEarlier(w io.Writer, at int, e *queries.EarlierParts) {
	if e == nil || e.Parts == 0 {
		return
	}
	fmt.Fprintf(w, "%d-%d\tmessage\t(%d earlier parts, not listed: --all-parts)\t\t\t%s\n", at, at+e.Parts-1, e.Parts, e.Digest)
}

func printPromptView(w io.Writer, v queries.PromptView) {
	printPromptHeader(w, v)
	printPromptParts(w, v)
	if v.Sensitive {
		for _, s := range v.Sections {
			fmt.Fprintf(w, "\n--- section %s (%s) ---\n%s\n", s.ID, s.Source, s.Content)
		}
	} else {
		fmt.Fprintln(w, "\nsection content: <redacted> (use --show-sensitive to show it; do not paste it publicly)")
	}
}

// printPromptHeader prints what the receipt is, how it was verified, and its budget.
func printPromptHeader(w io.Writer, v queries.PromptView) {
	r := v.Receipt
	fmt.Fprintf(w, "session:   %s\nstep:      %d\nrequest:   %s\nreceipt:   %s (event %s)\nmodel:     %s\n",
		v.SessionID, v.Step, v.RequestID, v.ReceiptID, v.EventID, r.Model)
	fmt.Fprintf(w, "assembly:  %s\nactual:    %s\n", r.AssemblyDigest, r.ActualDigest)
	switch {
	case v.Verification == "" && v.Checkpoint != nil:
		c := v.Checkpoint
		fmt.Fprintf(w, "verified:  yes, from checkpoint %s (step %d, revision %d): its %d parts (conversation digest %s) are taken as the log's;\n"+
			"           every byte after them re-hashed, both digests recomputed; zuno verify --session %s --wire checks the checkpoint, --from-start re-derives it\n",
			c.ReceiptID, c.Step, c.Revision, c.Parts, c.Digest, v.SessionID)
	case v.Verification == "":
		fmt.Fprintln(w, "verified:  yes (every stored byte re-hashed from the session's start; both digests recomputed)")
		if v.FromStart != "" {
			fmt.Fprintf(w, "from:      the session's start: %s\n", v.FromStart)
		}
	default:
		fmt.Fprintf(w, "verified:  NO: %s\n", v.Verification)
	}
	window := "unknown"
	if r.ContextWindow > 0 {
		window = fmt.Sprint(r.ContextWindow)
	}
	fmt.Fprintf(w, "tokens:    %d estimated (%s), context window %s\n", r.EstimatedInputTokens, r.Estimator, window)
	if v.Purpose != "" {
		fmt.Fprintf(w, "purpose:   %s (summarises the transcript before a boundary; docs/compaction.md)\n", v.Purpose)
	}
	if b := v.Boundary; b != nil {
		fmt.Fprintf(w, "boundary:  compaction %d at step %d (request %s, event %s): the conversation opens with its summary (sha256 %s), then the messages from %d on\n",
			b.Window, b.Step, b.RequestID, b.EventID, b.SummarySHA256, b.Through)
	}
	hooks := "none"
	if len(r.Hooks.Ran) > 0 {
		hooks = strings.Join(r.Hooks.Ran, ", ")
		if len(r.Hooks.RemovedTools) > 0 {
			hooks += " (removed tools: " + strings.Join(r.Hooks.RemovedTools, ", ") + ")"
		}
	}
	fmt.Fprintf(w, "hooks:     %s\n\n", hooks)
}

// printPromptParts prints the sections, then the provider projection: the messages (the
// earlier ones as one row when the view leaves them out) and the tools.
func printPromptParts(w io.Writer, v queries.PromptView) {
	r := v.Receipt
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ORDER\tID\tSOURCE\tROLE\tTRUST\tPRIORITY\tBYTES\tTOKENS\tSHA256")
	for _, s := range v.Sections {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\n", s.Order, s.ID, s.Source, s.Role, s.Trust, s.Priority, s.Bytes, s.EstimatedTokens, s.SHA256)
	}
	tw.Flush()
	messages := len(v.Projection.Messages)
	if e := v.Earlier; e != nil {
		messages += e.Parts
	}
	fmt.Fprintf(w, "\nprovider projection: %d messages, %d tools", messages, len(v.Projection.Tools))
	if r.ToolChoiceMode != "" {
		fmt.Fprintf(w, ", tool choice %s", r.ToolChoiceMode)
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tKIND\tROLE/NAME\tBYTES\tTOKENS\tSHA256")
	sections, earlier := min(len(r.Sections), len(r.Messages)), 0
	if e := v.Earlier; e != nil {
		earlier = e.Parts
	}
	for i, p := range r.Messages {
		if i == sections {
			printEarlier(tw, i, v.Earlier)
		}
		if i >= sections {
			i += earlier
		}
		name := p.Role
		if p.Section != "" {
			name += " (" + p.Section + ")"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%s\n", i, p.Kind, name, p.Bytes, p.EstimatedTokens, p.SHA256)
	}
	if len(r.Messages) == sections {
		printEarlier(tw, sections, v.Earlier)
	}
	for i, p := range r.Tools {
		fmt.Fprintf(tw, "t%d\t%s\t%s\t%d\t%d\t%s\n", i, p.Kind, p.Name, p.Bytes, p.EstimatedTokens, p.SHA256)
	}
	tw.Flush()
}
