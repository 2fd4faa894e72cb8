package main

import (
	"context"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/zuno-run/zuno/adapters/tools/schema"
	"github.com/zuno-run/zuno/faces/acp"
)

func newACPCmd() *cobra.Command {
	var clientTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "acp",
		Short: "Serve an editor over the Agent Client Protocol on standard input and output",
		Long: `Runs Zuno as an ACP agent (Agent Client Protocol, JSON-RPC 2.0, one message per line) on
standard input and output, for an editor that starts it (docs/acp.md). Sessions are Zuno's:
session/new records one, session/load replays one from the log, and each session/prompt is
a turn recorded as zuno run's, with the actor acp. Permission asks are put to the editor
(session/request_permission: allow once, allow always for the session, reject) and can be
answered from any other face too. Modes are the built-in agents. The model is the
configuration's (model, or ZUNO_MODEL). When the editor offers its file system
(fs/read_text_file, fs/write_text_file), read, write and apply_patch take and give the
files' text through it, after the same permission gate and path checks; the editor's
terminal is never used. Diagnostics go to standard error; standard output carries only the
protocol.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := schema.CompileDeferred(); err != nil { // a long-running process compiles its tools' validators once, at start
				return err
			}
			return withApp(cmd, func(ctx context.Context, a *app) error {
				cwd, err := os.Getwd()
				if err != nil {
					return err
				}
				return acp.Serve(ctx, a.Application, acp.Config{Cwd: cwd, Version: moduleVersion(), Log: cmd.ErrOrStderr(),
					ClientTimeout: clientTimeout}, cmd.InOrStdin(), cmd.OutOrStdout())
			})
		},
	}
	cmd.Flags().DurationVar(&clientTimeout, "client-timeout", acp.DefaultClientTimeout,
		"how long a request to the editor's file system may wait for its answer")
	return cmd
}

// moduleVersion is the module version this build records ("(devel)" from a checkout).
func moduleVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		return info.Main.Version
	}
	return "(devel)"
}
