package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	zanchor "github.com/zuno-run/zuno/adapters/anchor"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/verify"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/projections"
)

// verifyOut is what `zuno verify --format json` prints.
type verifyOut struct {
	OK bool `json:"ok"`
	verify.Report
	Drift  []projections.Drift `json:"drift"`
	Anchor *anchorOut          `json:"anchor,omitempty"`
}

type anchorOut struct {
	Path     string `json:"path"`
	Compared bool   `json:"compared"` // false: no anchor existed, this run wrote the first
	Written  bool   `json:"written"`
	Signed   bool   `json:"signed"`
	Streams  int    `json:"streams"`
}

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
	cmd.Flags().String("session", "", "verify this session's streams (session-, work- and inbox-S)")
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
	session, _ := cmd.Flags().GetString("session")
	stream, _ := cmd.Flags().GetString("stream")
	anchorPath, _ := cmd.Flags().GetString("anchor")
	keys, err := zanchor.ParseKeys(os.Getenv("ZUNO_ANCHOR_KEY"), os.Getenv("ZUNO_ANCHOR_PUBLIC_KEY"))
	if err != nil {
		return err
	}
	opts := verify.Options{Progress: progressPrinter(cmd.ErrOrStderr())}
	switch {
	case session != "":
		opts.Streams = []string{commands.SessionStream(session), commands.WorkStream(session), commands.InboxStream(session)}
	case stream != "":
		opts.Streams = []string{stream}
	}
	var previous *anchorFile
	if anchorPath != "" {
		f, ok, err := zanchor.Read(anchorPath, keys)
		if err != nil {
			return err
		}
		if ok {
			previous, opts.Anchored = &anchorFile{f}, f.Heads
		}
	}
	return withApp(cmd, func(ctx context.Context, a *app) error {
		if anchorPath != "" {
			if err := a.Commands.CheckAnchor(ctx, resolvedPath(anchorPath)); err != nil {
				return err
			}
		}
		rep, err := verify.Chain(ctx, a.store, opts)
		if err != nil {
			return err
		}
		if stream != "" && rep.Events == 0 && len(rep.Faults) == 0 {
			return usagef("stream %q has no events; list streams with `zuno events read`", stream)
		}
		if session != "" && rep.Events == 0 && len(rep.Faults) == 0 {
			return usagef("session %q has no events; list sessions with `zuno session list`", session)
		}
		out := verifyOut{Report: rep, Drift: []projections.Drift{}}
		if len(opts.Streams) == 0 {
			if out.Drift, err = a.readModelDrift(ctx); err != nil {
				return err
			}
		}
		if out.Faults == nil {
			out.Faults = []events.ChainFault{}
		}
		if out.Drift == nil {
			out.Drift = []projections.Drift{}
		}
		out.OK = len(rep.Faults) == 0 && len(out.Drift) == 0
		if anchorPath != "" {
			out.Anchor = &anchorOut{Path: anchorPath, Compared: previous != nil, Signed: keys.Private != nil, Streams: len(rep.Heads)}
			if out.OK {
				heads := verify.MergeHeads(previous.heads(), rep.Heads, opts.Streams)
				if err := zanchor.Write(anchorPath, heads, time.Now(), keys); err != nil {
					return fmt.Errorf("write the anchor %s: %w", anchorPath, err)
				}
				out.Anchor.Written, out.Anchor.Streams = true, len(heads)
			}
		}
		if format == "json" {
			if err := writeJSON(cmd.OutOrStdout(), out); err != nil {
				return err
			}
		} else {
			printVerify(cmd.OutOrStdout(), out)
		}
		if !out.OK {
			return &verify.FailedError{Faults: len(rep.Faults), Drift: len(out.Drift)}
		}
		return nil
	})
}

// anchorFile is an anchor read, or none (nil).
type anchorFile struct{ zanchor.File }

func (f *anchorFile) heads() []events.StreamHead {
	if f == nil {
		return nil
	}
	return f.Heads
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

func printVerify(w io.Writer, out verifyOut) {
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
