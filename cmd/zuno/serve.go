package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/zuno-run/zuno/adapters/tools/schema"
	"github.com/zuno-run/zuno/faces/httpapi"
)

func newServeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve [--listen 127.0.0.1:PORT]",
		Short: "Serve the application over HTTP: sessions, turns, permission asks, receipts, verify and live events",
		Long: `Run an HTTP API over the same commands and queries the CLI uses (docs/server.md), until
interrupted. It listens on the loopback interface by default. Bearer tokens come from
ZUNO_SERVER_TOKEN (named "env") and from server-tokens.json in Zuno's data directory
({"tokens": {"NAME": "TOKEN"}}, mode 0600); with any token every request must carry one, and
the writes made with it record the actor http:NAME. An address other machines can reach is
refused unless a token is configured (bind_refused). Turns started through the API run in this
process; their permission asks wait for a reply through the API. The OpenAPI document is at
/openapi.json; the audit console's pages are at /console/ (docs/console.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			listen, _ := cmd.Flags().GetString("listen")
			reactions, _ := cmd.Flags().GetBool("reactions")
			every, err := verifyEveryFlag(cmd)
			if err != nil {
				return err
			}
			if err := schema.CompileDeferred(); err != nil { // a long-running process compiles its tools' validators once, at start
				return err
			}
			return withApp(cmd, func(ctx context.Context, a *app) error {
				path := filepath.Join(dataDir(a.cfg), httpapi.TokensFileName)
				tokens, err := httpapi.LoadTokens(os.Getenv, path)
				if err != nil {
					return err
				}
				cwd, err := os.Getwd()
				if err != nil {
					return err
				}
				srv := httpapi.New(a.Application, httpapi.Config{Addr: listen, Tokens: tokens, Cwd: cwd, Log: cmd.ErrOrStderr(),
					Metrics: a.metricsHandler()})
				l, err := srv.Listen()
				if err != nil {
					return err
				}
				a.runner.Start(ctx) // the read models follow the log live, as a worker's do
				if reactions {
					// Every server settles the turns another process left behind when its
					// lease expires (docs/server.md, "Several servers on one store"); the
					// reactions' command ids derive from their trigger, so several runners
					// take effect once between them.
					go a.reactions(cmd.ErrOrStderr()).Run(ctx)
				}
				defer a.verifyEvery(ctx, every, cmd.ErrOrStderr())()
				auth := "no token: loopback only"
				if tokens.Len() > 0 {
					auth = fmt.Sprintf("%d bearer token(s)", tokens.Len())
				}
				fmt.Fprintf(cmd.OutOrStdout(), "zuno serve: listening on http://%s (%s)\n", l.Addr(), auth)
				return srv.Serve(ctx, l)
			})
		},
	}
	cmd.Flags().String("listen", httpapi.DefaultAddr, "the address to listen on; beyond loopback only with a bearer token")
	cmd.Flags().Bool("reactions", true, "run the reactions as zuno worker does: settle turns whose lease expired, resume answered turns")
	cmd.Flags().Duration("verify-every", 0, "verify the whole log and the read models this often (at least 1m; 0: never), counted in /metrics")
	return cmd
}
