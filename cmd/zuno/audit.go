package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	zanchor "github.com/zuno-run/zuno/adapters/anchor"
	zapp "github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/bundle"
)

func newAuditCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Export evidence bundles that `zuno verify --bundle` checks offline",
	}
	export := &cobra.Command{
		Use:   "export --session S [--with-children] [--anchor FILE] [-o FILE]",
		Short: "Write a session's events, with their hash chains, as one sealed and signed file",
		Long: `Write one file, the evidence bundle (docs/formats.md, "Bundles"): a header naming the
bundled sessions and each stream's event count and head, every event of the session's streams
(session, work, inbox, background tasks, jobs, notes, task context) from revision 0 with its
chain hash, the events of the source a fork was made from, the log's record of its anchors,
and the anchor file given with --anchor; then a seal: the SHA-256 of every byte before it,
signed with ZUNO_ANCHOR_KEY when it is set. --with-children adds every delegated descendant
the job ledgers name. zuno verify --bundle FILE checks it on any machine, with no database;
export warns when the bundle it wrote does not verify (the log was changed).`,
		Args: cobra.NoArgs,
		RunE: runAuditExport,
	}
	addFormatFlag(export, "table")
	export.Flags().String("session", "", "the session to export (required)")
	export.Flags().Bool("with-children", false, "also export every delegated descendant session")
	export.Flags().String("anchor", "", "include this anchor file (the one that covers these heads)")
	export.Flags().StringP("output", "o", "", "write the bundle to FILE (default: standard output)")
	cmd.AddCommand(export)
	return cmd
}

func runAuditExport(cmd *cobra.Command, _ []string) error {
	format, err := getFormat(cmd)
	if err != nil {
		return err
	}
	r := zapp.ExportBundle{Now: time.Now()}
	r.Session, _ = cmd.Flags().GetString("session")
	r.WithChildren, _ = cmd.Flags().GetBool("with-children")
	anchor, _ := cmd.Flags().GetString("anchor")
	output, _ := cmd.Flags().GetString("output")
	if r.Session == "" {
		return usagef("name the session to export with --session S")
	}
	keys, err := anchorKeys()
	if err != nil {
		return err
	}
	r.Key = keys.Private
	if anchor != "" {
		if r.Anchor, err = os.ReadFile(anchor); err != nil {
			return fmt.Errorf("read the anchor file: %w", err)
		}
	}
	return withApp(cmd, func(ctx context.Context, a *app) error {
		// Written whole or not at all: a bundle cut short by an error is not left behind.
		var buf bytes.Buffer
		sum, err := a.Commands.ExportBundle(ctx, r, &buf)
		if err != nil {
			return err
		}
		// The log itself may have been changed: say so now, not only when an auditor checks.
		if res := bundle.Verify(buf.Bytes(), bundle.Options{}); !res.Valid {
			fmt.Fprintf(cmd.ErrOrStderr(), "zuno: warning: the bundle does not verify at line %d (%s): the log was changed outside zuno; run zuno verify\n", res.Line, res.Reason)
		}
		if output == "" {
			_, err := cmd.OutOrStdout().Write(buf.Bytes())
			return err
		}
		if err := os.WriteFile(output, buf.Bytes(), 0o644); err != nil {
			return err
		}
		if format == "json" {
			return writeJSON(cmd.OutOrStdout(), sum)
		}
		signed := "unsigned (set ZUNO_ANCHOR_KEY to sign)"
		if sum.Signed {
			signed = "signed with " + keys.PublicKey()
		}
		fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d events of %d streams, sessions %v, %s\n", output, sum.Events, sum.Streams, sum.Sessions, signed)
		return nil
	})
}

// runVerifyBundle checks a bundle file offline: nothing but the file and the keys is read.
func runVerifyBundle(cmd *cobra.Command, path, format string) error {
	opts := bundle.Options{}
	opts.RequireSignature, _ = cmd.Flags().GetBool("require-signature")
	// The trusted key is --public-key, else the environment's anchor key (either half), as
	// zuno verify --anchor checks anchors.
	keys, err := anchorKeys()
	if trusted, _ := cmd.Flags().GetString("public-key"); trusted != "" {
		keys, err = zanchor.ParseKeys("", trusted)
	}
	if err != nil {
		return err
	}
	opts.TrustedKey = keys.Public
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read the bundle: %w", err)
	}
	res := bundle.Verify(data, opts)
	if format == "json" {
		if err := writeJSON(cmd.OutOrStdout(), res); err != nil {
			return err
		}
	} else {
		printBundleVerdict(cmd, path, res)
	}
	if !res.Valid {
		return &bundle.InvalidError{Result: res}
	}
	return nil
}

func printBundleVerdict(cmd *cobra.Command, path string, res bundle.Result) {
	w := cmd.OutOrStdout()
	if res.Valid {
		signed := "unsigned"
		if res.Signed {
			signed = "signed by " + res.PublicKey
		}
		fmt.Fprintf(w, "bundle %s: %d events in %d streams, sealed, %s\nverified\n", path, res.Events, res.Streams, signed)
		return
	}
	fmt.Fprintf(w, "bundle %s: line %d does not verify", path, res.Line)
	if res.EventID != "" {
		fmt.Fprintf(w, ": event %s (%s revision %d)", res.EventID, res.Stream, *res.Revision)
	}
	fmt.Fprintf(w, "\n%s\n", res.Reason)
}
