package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/events"
)

func newDebugCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "debug", Short: "Diagnostics: the exact prompt a model was sent, an agent's effective configuration"}
	cmd.AddCommand(newDebugPromptCmd(), newDebugAgentCmd())
	return cmd
}

// receiptMismatchError is returned after printing a receipt whose stored bytes no longer match
// its digests: the view is still shown, since that receipt is the one someone must inspect.
type receiptMismatchError struct{ detail string }

func (e *receiptMismatchError) Error() string {
	return "receipt_mismatch: the stored prompt does not match its recorded digests: " + e.detail +
		"; the event log was altered after it was written — preserve it and investigate"
}
func (e *receiptMismatchError) Code() string { return prompt.CodeReceiptMismatch }

func newDebugPromptCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "prompt [--session S [--step N]] [--show-sensitive] [--format json|table]",
		Short: "Show the prompt receipt of a provider request and re-verify its digests",
		Long: `Without --session: the latest receipt in the database. With --session: the receipt the
session's latest provider request used. With --step N as well: the receipt of its Nth
provider request. The chain is session.provider.request.1 → promptReceiptID →
session.prompt.assembled.1, read from the event log, and every stored byte is hashed again.

Section content and system/developer text are shown as <redacted> unless --show-sensitive;
ids, sources, sizes and digests are always shown and can still reveal a project's layout.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			sessionID, _ := cmd.Flags().GetString("session")
			step, _ := cmd.Flags().GetInt("step")
			sensitive, _ := cmd.Flags().GetBool("show-sensitive")
			if cmd.Flags().Changed("step") {
				if sessionID == "" {
					return usagef("--step needs --session: a step number counts the provider requests of one session")
				}
				if step <= 0 {
					return usagef("--step %d: use a positive step number (1 is the session's first provider request)", step)
				}
			}
			return withApp(cmd, func(ctx context.Context, a *app) error {
				if sessionID == "" {
					if _, err := a.runner.CatchUp(ctx); err != nil {
						return err
					}
					id, err := latestReceiptSession(ctx, a)
					if err != nil {
						return err
					}
					sessionID = id
				}
				found, err := findReceipt(ctx, a, sessionID, step)
				if err != nil {
					return err
				}
				view := prompt.NewDebugView(found.receipt, sensitive)
				if format == "json" {
					err = writeJSON(cmd.OutOrStdout(), debugPromptOut{SessionID: sessionID, Step: found.step,
						RequestID: found.requestID, ReceiptID: found.receiptID, EventID: found.eventID,
						Verified: view.Verification == "", DebugView: view})
				} else {
					printPromptView(cmd.OutOrStdout(), sessionID, found, view)
				}
				if err != nil {
					return err
				}
				if view.Verification != "" {
					return &receiptMismatchError{view.Verification}
				}
				return nil
			})
		},
	}
	addFormatFlag(cmd, "table")
	cmd.Flags().String("session", "", "session id (ses_…)")
	cmd.Flags().Int("step", 0, "the Nth provider request of the session (needs --session)")
	cmd.Flags().Bool("show-sensitive", false, "show section content and host instructions (do not paste them publicly)")
	return cmd
}

type debugPromptOut struct {
	SessionID string `json:"sessionId"`
	Step      int    `json:"step,omitempty"`
	RequestID string `json:"requestId,omitempty"`
	ReceiptID string `json:"receiptId"`
	EventID   string `json:"eventId"`
	Verified  bool   `json:"verified"`
	prompt.DebugView
}

type foundReceipt struct {
	step                 int
	requestID, receiptID string
	eventID              string
	receipt              prompt.Receipt
}

// latestReceiptSession finds the session of the newest receipt in the log's read model.
func latestReceiptSession(ctx context.Context, a *app) (string, error) {
	rows, err := a.rm.Writer.QueryContext(ctx, a.rm.Writer.Rebind(
		`SELECT aggregate_id FROM event WHERE type = ? ORDER BY position DESC LIMIT 1`), events.TypePromptAssembled)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return "", err
		}
		return "", &notFoundError{"no prompt receipt is recorded yet; run a turn with zuno run first"}
	}
	var id string
	if err := rows.Scan(&id); err != nil {
		return "", err
	}
	return id, rows.Err()
}

// findReceipt follows request → promptReceiptID → receipt in the session's stream. A receipt
// records only the blobs its session had not recorded before, so the blobs of every receipt up
// to it are merged in first.
func findReceipt(ctx context.Context, a *app, sessionID string, step int) (foundReceipt, error) {
	var (
		requests = map[int]*events.ProviderRequest{}
		receipts = map[string]*events.PromptAssembled{}
		eventIDs = map[string]string{}
		latest   int
		blobs    = map[string]string{}
	)
	stream := commands.SessionStream(sessionID)
	var from uint64
	const page = 1024
	exists := false
	for {
		recs, err := a.store.ReadStream(ctx, stream, from, page)
		if err != nil {
			return foundReceipt{}, err
		}
		for _, rec := range recs {
			exists = true
			p, err := a.registry.Decode(rec)
			if err != nil {
				return foundReceipt{}, err
			}
			switch e := p.(type) {
			case *events.ProviderRequest:
				if e.Status == events.RequestStarted {
					requests[e.Step] = e
					latest = max(latest, e.Step)
				}
			case *events.PromptAssembled:
				receipts[e.ReceiptID] = e
				eventIDs[e.ReceiptID] = rec.ID
			}
		}
		if len(recs) < page {
			break
		}
		from = recs[len(recs)-1].StreamRevision + 1
	}
	if !exists {
		return foundReceipt{}, &notFoundError{fmt.Sprintf("session %s does not exist; list sessions with zuno session list", sessionID)}
	}
	if step == 0 {
		step = latest
	}
	req := requests[step]
	if req == nil {
		if latest == 0 {
			return foundReceipt{}, &notFoundError{fmt.Sprintf("session %s has no provider request yet", sessionID)}
		}
		return foundReceipt{}, &notFoundError{fmt.Sprintf("session %s has no provider step %d; its steps are 1..%d", sessionID, step, latest)}
	}
	r := receipts[req.PromptReceiptID]
	if r == nil {
		return foundReceipt{}, &receiptMismatchError{fmt.Sprintf("provider request %s names receipt %s, which is not in the log", req.RequestID, req.PromptReceiptID)}
	}
	// A receipt is stored relative to an earlier one and records only blobs new to its
	// session: expand it through its base chain, with every blob of the session as the pool.
	for _, other := range receipts {
		for d, b := range other.Blobs {
			if _, ok := blobs[d]; !ok {
				blobs[d] = b
			}
		}
	}
	lookup := func(id string) (prompt.Receipt, bool) {
		if x, ok := receipts[id]; ok {
			return x.PromptReceipt, true
		}
		return prompt.Receipt{}, false
	}
	pool := func(d string) (string, bool) { b, ok := blobs[d]; return b, ok }
	receipt, err := prompt.Expand(r.PromptReceipt, lookup, pool)
	if err != nil {
		return foundReceipt{}, &receiptMismatchError{err.Error()}
	}
	return foundReceipt{step: step, requestID: req.RequestID, receiptID: r.ReceiptID, eventID: eventIDs[r.ReceiptID], receipt: receipt}, nil
}

type notFoundError struct{ msg string }

func (e *notFoundError) Error() string { return e.msg }
func (e *notFoundError) Code() string  { return "not_found" }

func printPromptView(w io.Writer, sessionID string, f foundReceipt, v prompt.DebugView) {
	r := v.Receipt
	fmt.Fprintf(w, "session:   %s\nstep:      %d\nrequest:   %s\nreceipt:   %s (event %s)\nmodel:     %s\n",
		sessionID, f.step, f.requestID, f.receiptID, f.eventID, r.Model)
	fmt.Fprintf(w, "assembly:  %s\nactual:    %s\n", r.AssemblyDigest, r.ActualDigest)
	if v.Verification == "" {
		fmt.Fprintln(w, "verified:  yes (every stored byte re-hashed; both digests recomputed)")
	} else {
		fmt.Fprintf(w, "verified:  NO: %s\n", v.Verification)
	}
	fmt.Fprintf(w, "tokens:    %d estimated (%s), context window %d\n", r.EstimatedInputTokens, r.Estimator, r.ContextWindow)
	hooks := "none"
	if len(r.Hooks.Ran) > 0 {
		hooks = strings.Join(r.Hooks.Ran, ", ")
		if len(r.Hooks.RemovedTools) > 0 {
			hooks += " (removed tools: " + strings.Join(r.Hooks.RemovedTools, ", ") + ")"
		}
	}
	fmt.Fprintf(w, "hooks:     %s\n\n", hooks)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ORDER\tID\tSOURCE\tROLE\tTRUST\tPRIORITY\tBYTES\tTOKENS\tSHA256")
	for _, s := range v.Sections {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\n", s.Order, s.ID, s.Source, s.Role, s.Trust, s.Priority, s.Bytes, s.EstimatedTokens, s.SHA256)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nprovider projection: %d messages, %d tools", len(v.Projection.Messages), len(v.Projection.Tools))
	if r.ToolChoiceMode != "" {
		fmt.Fprintf(w, ", tool choice %s", r.ToolChoiceMode)
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tKIND\tROLE/NAME\tBYTES\tTOKENS\tSHA256")
	for i, p := range r.Messages {
		name := p.Role
		if p.Section != "" {
			name += " (" + p.Section + ")"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%s\n", i, p.Kind, name, p.Bytes, p.EstimatedTokens, p.SHA256)
	}
	for i, p := range r.Tools {
		fmt.Fprintf(tw, "t%d\t%s\t%s\t%d\t%d\t%s\n", i, p.Kind, p.Name, p.Bytes, p.EstimatedTokens, p.SHA256)
	}
	tw.Flush()
	if v.Sensitive {
		for _, s := range v.Sections {
			fmt.Fprintf(w, "\n--- section %s (%s) ---\n%s\n", s.ID, s.Source, s.Content)
		}
	} else {
		fmt.Fprintln(w, "\nsection content: <redacted> (use --show-sensitive to show it; do not paste it publicly)")
	}
}
