package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/zuno-run/zuno/adapters/tools/schema"
	"github.com/zuno-run/zuno/commands/react"
	"github.com/zuno-run/zuno/projections"
)

func newWorkerCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "worker",
		Short: "Handle commands from the durable bus (ZUNO_BUS_URL), run the reactions, and keep the read models live",
		Long: `Run one worker until interrupted: it takes commands from the durable bus on Postgres
(ZUNO_BUS_URL) and handles them against the event store, follows the log into the read models,
and runs the reactions (docs/turns.md, "Reactions"): it resumes a suspended turn when the answer
to its ask arrives, and settles a turn whose lease expired (its running call uncertain, never
run again; a turn that was waiting on an ask suspended, and resumed if it is answered).
Run several on one store: each command is handled by exactly one of them, and the reactions'
commands, whose ids derive from their trigger, take effect once between them. Without
ZUNO_BUS_URL every zuno command handles its own commands, and the worker runs the reactions
and the read models only.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if err := schema.CompileDeferred(); err != nil { // a long-running process compiles its tools' validators once, at start
				return err
			}
			a, err := openWorker(ctx)
			if err != nil {
				return err
			}
			defer a.Close()
			out := cmd.OutOrStdout()
			if a.cfg.BusURL != "" {
				fmt.Fprintf(out, "zuno worker: handling commands from %s\n", redact(a.cfg.BusURL))
			} else {
				fmt.Fprintln(out, "zuno worker: no ZUNO_BUS_URL: running the reactions and the read models (each zuno command handles its own commands)")
			}
			g, ctx := errgroup.WithContext(ctx)
			g.Go(func() error { // the deployment's projector, or a follower of it: the one loop the process's waits use too
				a.runner.Start(ctx)
				<-ctx.Done()
				return ctx.Err()
			})
			g.Go(func() error { return a.reactions(cmd.ErrOrStderr()).Run(ctx) })
			if err := g.Wait(); !errors.Is(err, context.Canceled) {
				return err
			}
			return nil
		},
	}
}

// reactions is the worker's reaction runner: the application's reactions, its sweep for
// expired leases every half lease, checkpoints in the read-model database.
func (a *app) reactions(log io.Writer) *react.Runner {
	return a.Commands.ReactionRunner(projections.ReactionCheckpoints{DB: a.rm.Writer}, a.turns.Leases.TTL/2,
		func(c react.Command, err error) {
			switch {
			case c.ID == "":
				fmt.Fprintf(log, "zuno worker: reactions: %v\n", err)
			case err == nil:
				fmt.Fprintf(log, "zuno worker: %s %s: done\n", c.Kind, c.ID)
			case errors.Is(err, react.Skipped):
				fmt.Fprintf(log, "zuno worker: %s %s: %v\n", c.Kind, c.ID, err)
			default:
				fmt.Fprintf(log, "zuno worker: %s %s: will try again: %v\n", c.Kind, c.ID, err)
			}
		})
}
