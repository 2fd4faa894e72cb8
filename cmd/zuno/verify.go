package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"

	zanchor "github.com/zuno-run/zuno/adapters/anchor"
	zapp "github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/verify"
	"github.com/zuno-run/zuno/events"
)

func newVerifyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "verify [--session S | --stream X | --all] [--wire] [--anchor FILE] [--format json|table] | --bundle FILE [--public-key B64]",
		Short: "Check the event log's hash chains, the read models and an anchor of stream heads",
		Long: `Walk the hash chain of every stream (or of one session's streams, or of one stream) and
report the first altered, missing, inserted or reordered event of each, with its position.
With --all (the default) the read models are also replayed from the log into a scratch
database and compared: a row the log does not produce is drift.

Deleting the tail of a stream leaves no trace inside the database. --anchor FILE compares
the stream heads with those FILE recorded (kept somewhere the database's writers cannot
reach) and, when everything verifies, records the current heads in it as the next anchor of
a chain the log keeps its own record of (stream "anchors"): a deleted FILE, an older copy or
another file in its place is refused (anchor_missing, anchor_stale, anchor_replaced), as is a
log that lost its record of its latest anchors (anchor_ahead). A first FILE is written when
the log has no anchors and no key is set; otherwise --init starts a chain, and the log
records that. With ZUNO_ANCHOR_KEY (base64 ed25519 seed; zuno anchor keygen) the anchor is
signed, and checked with it or with ZUNO_ANCHOR_PUBLIC_KEY (zuno anchor public-key), which
only checks: the file is never written then. An anchor inside a recorded session's workspace is refused
(log_in_workspace): the agent working there could rewrite it. Exit status 0 only when
everything verifies.

--wire also checks every prompt receipt of the session (or of every session), as zuno debug
prompt does for one step (docs/formats/receipts.md), and renders every recorded request body
again to compare it with the digest recorded when it was sent (debug prompt --wire), in one walk
of each session's events whose cost grows with the session, not its square. Each session
reports how many receipts and wire records verified, or its first bad event and the reason
(a mismatch code such as conversation_digest, or wire_mismatch); verify_failed then.

--bundle FILE checks an evidence bundle (zuno audit export) offline, with no database or
data directory: every line's shape, each stream's revisions and hash chain, the header's
counts and heads, the anchor it carries, the seal's SHA-256 and its signature, in file
order, naming the first bad line and event (docs/formats.md). A trusted key (--public-key or
ZUNO_ANCHOR_PUBLIC_KEY, or ZUNO_ANCHOR_KEY's public half) must be the one that signed it;
--require-signature refuses an unsigned bundle. Fails with bundle_invalid.`,
		Args: cobra.NoArgs,
		RunE: runVerify,
	}
	addFormatFlag(cmd, "table")
	cmd.Flags().String("session", "", "verify this session's streams (session-, work-, work-snapshot-, inbox- and bg-S)")
	cmd.Flags().String("stream", "", "verify this one stream")
	cmd.Flags().Bool("all", false, "verify every stream and the read models (the default)")
	cmd.Flags().String("anchor", "", "compare with, then record, the stream heads in this file")
	cmd.Flags().Bool("init", false, "with --anchor: start a new anchor chain where no file is (the log records it)")
	cmd.Flags().String("bundle", "", "check this evidence bundle offline (zuno audit export)")
	cmd.Flags().String("public-key", "", "with --bundle: the base64 ed25519 key the bundle must be signed with (default: $ZUNO_ANCHOR_PUBLIC_KEY, or the public half of $ZUNO_ANCHOR_KEY)")
	cmd.Flags().Bool("wire", false, "also check every prompt receipt and wire record of the session (or of every session), in one walk of each")
	cmd.Flags().Bool("require-signature", false, "with --bundle: refuse an unsigned bundle (implied by a trusted key)")
	cmd.MarkFlagsMutuallyExclusive("session", "stream", "all", "bundle")
	cmd.MarkFlagsMutuallyExclusive("anchor", "bundle")
	return cmd
}

func runVerify(cmd *cobra.Command, _ []string) error {
	format, err := getFormat(cmd)
	if err != nil {
		return err
	}
	wire, _ := cmd.Flags().GetBool("wire")
	if path, _ := cmd.Flags().GetString("bundle"); path != "" {
		if wire {
			return usagef("--wire checks the sessions of the log, not a bundle: drop --wire, or name a session with --session S")
		}
		return runVerifyBundle(cmd, path, format)
	}
	if cmd.Flags().Changed("public-key") || cmd.Flags().Changed("require-signature") {
		return usagef("--public-key and --require-signature check a bundle: name it with --bundle FILE")
	}
	if wire && cmd.Flags().Changed("stream") {
		return usagef("--wire checks sessions: name one with --session S, or use --all")
	}
	// Bad keys are refused before anything is opened, with or without --anchor.
	if _, err := anchorKeys(); err != nil {
		return err
	}
	r := zapp.VerifyRequest{Progress: progressPrinter(cmd.ErrOrStderr())}
	r.Session, _ = cmd.Flags().GetString("session")
	r.Stream, _ = cmd.Flags().GetString("stream")
	r.Anchor, _ = cmd.Flags().GetString("anchor")
	r.InitAnchor, _ = cmd.Flags().GetBool("init")
	if r.InitAnchor && r.Anchor == "" {
		return &zapp.UsageError{Message: "--init starts an anchor chain: name its file with --anchor FILE"}
	}
	if r.Anchor != "" {
		r.AnchorResolved = resolvedPath(r.Anchor)
	}
	return withApp(cmd, func(ctx context.Context, a *app) error {
		out, err := a.Commands.Verify(ctx, r)
		var failed *verify.FailedError
		if err != nil && !errors.As(err, &failed) {
			return err
		}
		report := wireReport{VerifyReport: out}
		if wire {
			if aerr := auditReceipts(ctx, a, r.Session, &report); aerr != nil {
				if err == nil || !errors.As(aerr, new(*receiptsFailedError)) {
					err = aerr
				}
			}
		}
		if format == "json" {
			var v any = out
			if wire {
				v = report
			}
			if perr := writeJSON(cmd.OutOrStdout(), v); perr != nil {
				return perr
			}
		} else {
			// The verdict comes last, after the receipts' lines.
			chain := report.VerifyReport
			chain.OK = false
			printVerify(cmd.OutOrStdout(), chain)
			printReceiptAudits(cmd.OutOrStdout(), report.Receipts)
			if report.OK {
				fmt.Fprintln(cmd.OutOrStdout(), "verified")
			}
		}
		return err
	})
}

// anchorKeys are ZUNO_ANCHOR_KEY and ZUNO_ANCHOR_PUBLIC_KEY, parsed.
func anchorKeys() (zanchor.Keys, error) {
	return zanchor.ParseKeys(os.Getenv("ZUNO_ANCHOR_KEY"), os.Getenv("ZUNO_ANCHOR_PUBLIC_KEY"))
}

// anchorFiles are the application's anchor files (app.Anchors), signed and checked with the
// keys of the environment.
type anchorFiles struct{}

func (anchorFiles) Read(path string) (zapp.AnchorFile, bool, error) {
	keys, err := anchorKeys()
	if err != nil {
		return zapp.AnchorFile{}, false, err
	}
	f, ok, err := zanchor.Read(path, keys)
	if !ok || err != nil {
		return zapp.AnchorFile{}, ok, err
	}
	return appAnchor(f), true, nil
}

func (anchorFiles) Seal(heads []events.StreamHead, chain string, counter uint64, previous string, now time.Time) zapp.AnchorFile {
	return appAnchor(zanchor.New(heads, chain, counter, previous, now))
}

func appAnchor(f zanchor.File) zapp.AnchorFile {
	return zapp.AnchorFile{Chain: f.Chain, Counter: f.Counter, Previous: f.Previous, Digest: zanchor.Digest(f), CreatedAt: f.CreatedAt, Heads: f.Heads}
}

func (anchorFiles) Write(path string, a zapp.AnchorFile) error {
	keys, err := anchorKeys()
	if err != nil {
		return err
	}
	f := zanchor.New(a.Heads, a.Chain, a.Counter, a.Previous, a.CreatedAt)
	return zanchor.Write(path, f, keys)
}

func (anchorFiles) Signs() bool {
	keys, err := anchorKeys()
	return err == nil && keys.Private != nil
}

func (anchorFiles) Keyed() bool {
	keys, err := anchorKeys()
	return err == nil && keys.Public != nil
}

// progressPrinter reports a long walk on stderr, at most once a second.
func progressPrinter(w io.Writer) func(done, total uint64) {
	last := time.Now()
	return func(done, total uint64) {
		if time.Since(last) < time.Second {
			return
		}
		last = time.Now()
		if total > 0 {
			fmt.Fprintf(w, "verify: %d of %d events\n", done, total)
			return
		}
		fmt.Fprintf(w, "verify: %d events\n", done)
	}
}

func printVerify(w io.Writer, out zapp.VerifyReport) {
	fmt.Fprintf(w, "events: %d in %d streams (chain began after position %d)\n", out.Events, out.Streams, out.Genesis)
	if len(out.Faults) == 0 {
		fmt.Fprintln(w, "chain: verified")
	}
	for _, f := range out.Faults {
		fmt.Fprintf(w, "chain: %s %s at position %d (revision %d", f.Stream, f.Kind, f.Position, f.Revision)
		if f.EventID != "" {
			fmt.Fprintf(w, ", event %s", f.EventID)
		}
		fmt.Fprintf(w, "): %s\n", f.Detail)
	}
	for _, d := range out.Drift {
		fmt.Fprintf(w, "read models: %s row in %s: %s\n", d.Kind, d.Table, rowText(d.Row))
	}
	switch {
	case slices.ContainsFunc(out.Faults, func(f events.ChainFault) bool { return f.Kind == events.FaultMalformed }):
		fmt.Fprintln(w, "read models: not compared: the log holds an event no reader can fold")
	case len(out.Drift) == 0 && out.Streams > 0:
		fmt.Fprintln(w, "read models: no drift")
	}
	if a := out.Anchor; a != nil {
		switch {
		case a.Written && a.Compared:
			fmt.Fprintf(w, "anchor: %s matched; now anchor %d, recording %d stream heads\n", a.Path, a.Counter, a.Streams)
		case a.Written:
			fmt.Fprintf(w, "anchor: %s written with %d stream heads (anchor %d)\n", a.Path, a.Streams, a.Counter)
		case a.CheckOnly:
			fmt.Fprintf(w, "anchor: %s matched (anchor %d); checked with a public key only, so left as it was\n", a.Path, a.Counter)
		default:
			fmt.Fprintf(w, "anchor: %s left as it was\n", a.Path)
		}
	}
	if out.OK {
		fmt.Fprintln(w, "verified")
	}
}

func rowText(row map[string]string) string {
	b, _ := json.Marshal(row)
	return string(b)
}
