package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	zanchor "github.com/zuno-run/zuno/adapters/anchor"
	zapp "github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/verify"
	"github.com/zuno-run/zuno/events"
)

func newVerifyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "verify [--session S | --stream X | --all] [--anchor FILE] [--format json|table]",
		Short: "Check the event log's hash chains, the read models and an anchor of stream heads",
		Long: `Walk the hash chain of every stream (or of one session's streams, or of one stream) and
report the first altered, missing, inserted or reordered event of each, with its position.
With --all (the default) the read models are also replayed from the log into a scratch
database and compared: a row the log does not produce is drift.

Deleting the tail of a stream leaves no trace inside the database. --anchor FILE compares
the stream heads with those FILE recorded (kept somewhere the database's writers cannot
reach) and, when everything verifies, records the current heads in it; a missing FILE is
written. With ZUNO_ANCHOR_KEY (base64 ed25519 seed) the anchor is signed, and checked with
it or with ZUNO_ANCHOR_PUBLIC_KEY. An anchor inside a recorded session's workspace is refused
(log_in_workspace): the agent working there could rewrite it. Exit status 0 only when
everything verifies.`,
		Args: cobra.NoArgs,
		RunE: runVerify,
	}
	addFormatFlag(cmd, "table")
	cmd.Flags().String("session", "", "verify this session's streams (session-, work-, work-snapshot-, inbox- and bg-S)")
	cmd.Flags().String("stream", "", "verify this one stream")
	cmd.Flags().Bool("all", false, "verify every stream and the read models (the default)")
	cmd.Flags().String("anchor", "", "compare with, then record, the stream heads in this file")
	cmd.MarkFlagsMutuallyExclusive("session", "stream", "all")
	return cmd
}

func runVerify(cmd *cobra.Command, _ []string) error {
	format, err := getFormat(cmd)
	if err != nil {
		return err
	}
	// Bad keys are refused before anything is opened, with or without --anchor.
	if _, err := anchorKeys(); err != nil {
		return err
	}
	r := zapp.VerifyRequest{Progress: progressPrinter(cmd.ErrOrStderr())}
	r.Session, _ = cmd.Flags().GetString("session")
	r.Stream, _ = cmd.Flags().GetString("stream")
	r.Anchor, _ = cmd.Flags().GetString("anchor")
	if r.Anchor != "" {
		r.AnchorResolved = resolvedPath(r.Anchor)
	}
	return withApp(cmd, func(ctx context.Context, a *app) error {
		out, err := a.Commands.Verify(ctx, r)
		var failed *verify.FailedError
		if err != nil && !errors.As(err, &failed) {
			return err
		}
		if format == "json" {
			if perr := writeJSON(cmd.OutOrStdout(), out); perr != nil {
				return perr
			}
		} else {
			printVerify(cmd.OutOrStdout(), out)
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

func (anchorFiles) Read(path string) ([]events.StreamHead, bool, error) {
	keys, err := anchorKeys()
	if err != nil {
		return nil, false, err
	}
	f, ok, err := zanchor.Read(path, keys)
	return f.Heads, ok, err
}

func (anchorFiles) Write(path string, heads []events.StreamHead, now time.Time) error {
	keys, err := anchorKeys()
	if err != nil {
		return err
	}
	return zanchor.Write(path, heads, now, keys)
}

func (anchorFiles) Signed() bool {
	keys, err := anchorKeys()
	return err == nil && keys.Private != nil
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
	if len(out.Drift) == 0 && out.Streams > 0 {
		fmt.Fprintln(w, "read models: no drift")
	}
	if a := out.Anchor; a != nil {
		switch {
		case a.Written && a.Compared:
			fmt.Fprintf(w, "anchor: %s matched; now records %d stream heads\n", a.Path, a.Streams)
		case a.Written:
			fmt.Fprintf(w, "anchor: %s written with %d stream heads\n", a.Path, a.Streams)
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
