package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

func newWorkerCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "worker",
		Short: "Handle commands from the durable bus (ZUNO_BUS_URL) and keep the read models live",
		Long: `Run one worker: it takes commands from the durable bus on Postgres (ZUNO_BUS_URL), handles
them against the event store, and follows the log into the read models, until interrupted.
Run several on one store: each command is handled by exactly one of them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			a, err := openWorker(ctx)
			if err != nil {
				return err
			}
			defer a.Close()
			fmt.Fprintf(cmd.OutOrStdout(), "zuno worker: handling commands from %s\n", redact(a.cfg.BusURL))
			err = a.runner.Follow(ctx) // the deployment's projector, or a follower of it

			if errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		},
	}
}
