package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	zapp "github.com/zuno-run/zuno/commands/app"
)

// minVerifyEvery is the shortest period of `zuno serve --verify-every`: a run of the whole log
// replays it into a scratch read model, which on a large log takes minutes of a core.
const minVerifyEvery = time.Minute

// verifyEveryFlag is --verify-every: 0 (the default) is off, else at least minVerifyEvery.
func verifyEveryFlag(cmd *cobra.Command) (time.Duration, error) {
	every, _ := cmd.Flags().GetDuration("verify-every")
	if every != 0 && every < minVerifyEvery {
		return 0, usagef("--verify-every %v: use 0 (off) or at least %v, such as 1h", every, minVerifyEvery)
	}
	return every, nil
}

// verifyEvery verifies the whole log and the read models every period, as `zuno verify` does,
// so that the alert on zuno_verify_runs_total sees an altered log without anyone running a
// command (docs/server.md, "Metrics"). The first run is one period after the start: several
// processes restarted together do not all replay the log at once. Each verdict is one line on
// log. The returned stop ends the loop and waits for a run in progress to end (before the
// store it reads is closed).
func (a *app) verifyEvery(ctx context.Context, every time.Duration, log io.Writer) (stop func()) {
	if every <= 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			rep, err := a.Commands.Verify(ctx, zapp.VerifyRequest{})
			switch {
			case ctx.Err() != nil:
				return
			case err != nil:
				fmt.Fprintf(log, "zuno serve: verify: %v\n", err)
			default:
				fmt.Fprintf(log, "zuno serve: verify: %d events in %d streams and the read models verified\n", rep.Events, rep.Streams)
			}
		}
	}()
	return func() { cancel(); <-done }
}
