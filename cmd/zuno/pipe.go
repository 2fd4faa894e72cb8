package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// errOutputClosed is the cause of a run stopped because whatever read its output went away
// (zuno run … | head): the turn ends interrupted and recorded, as on Ctrl-C.
var errOutputClosed = errors.New("the output was closed: its reader went away")

// watchOutput returns w, which ends ctx (with errOutputClosed) when a write finds the reader of
// the output gone, and the context to run under. Without it, the first write to a closed pipe
// kills the process with SIGPIPE (exit 141) and leaves the turn open in the log; with SIGPIPE
// handled (signal.Notify), the write fails with EPIPE instead and the run can end cleanly.
// Later writes are dropped: nobody reads them.
func watchOutput(ctx context.Context, w io.Writer) (context.Context, io.Writer, func()) {
	sigpipe := make(chan os.Signal, 1)
	signal.Notify(sigpipe, syscall.SIGPIPE)
	ctx, cancel := context.WithCancelCause(ctx)
	g := &pipeGuard{w: w, cancel: cancel}
	return ctx, g, func() { signal.Stop(sigpipe); cancel(nil) }
}

type pipeGuard struct {
	w      io.Writer
	cancel context.CancelCauseFunc
	closed atomic.Bool
}

func (g *pipeGuard) Write(b []byte) (int, error) {
	if g.closed.Load() {
		return len(b), nil
	}
	n, err := g.w.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		g.closed.Store(true)
		g.cancel(errOutputClosed)
		return len(b), nil
	}
	return n, err
}
