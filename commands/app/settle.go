package app

import (
	"context"
	"fmt"

	"github.com/zuno-run/zuno/domain"
)

func (j *Jobs) begin() {
	j.mu.Lock()
	j.work++
	j.mu.Unlock()
}

func (j *Jobs) end() {
	j.mu.Lock()
	j.work--
	j.idle.Broadcast()
	j.mu.Unlock()
}

// Settle waits until this process runs no background job and no wake: `zuno run` returns
// when the work its turn delegated has been delivered, not while a child still runs.
// When ctx is cancelled (Ctrl-C, SIGTERM), the background children are cancelled instead:
// each records its turn interrupted and its job cancelled, and no report starts a new turn;
// the reports wait in the inbox for the parent's next run.
// It reports whether the stop cancelled work that was running.
func (j *Jobs) Settle(ctx context.Context) (cancelled bool) {
	stopping := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(stopping)
		j.mu.Lock()
		j.stopped = true
		cancelled = j.work > 0
		j.mu.Unlock()
		j.stop()
	})
	defer func() {
		// A stop that began (ctx was done, maybe before the wait) is waited for: its result is
		// this call's, and the children are cancelled when Settle returns.
		if !stop() {
			<-stopping
		}
	}()
	j.mu.Lock()
	defer j.mu.Unlock()
	for j.work > 0 {
		j.idle.Wait()
	}
	return cancelled
}

// SettleJobs waits for the background jobs and report deliveries of this process (Jobs.Settle)
// and returns the log's head after them, for a caller that reads the read models next.
// A run stopped while they ran is the interrupted error, after they were cancelled.
func (c *Commands) SettleJobs(ctx context.Context) (uint64, error) {
	cancelled := c.jobs().Settle(ctx)
	head, err := c.ports.Log.LastPosition(context.WithoutCancel(ctx))
	switch {
	case err != nil || ctx.Err() == nil:
	case cancelled:
		err = domain.NewError(CodeInterrupted, "the run was stopped while delegated jobs ran: they were cancelled, and their reports wait in the session's inbox",
			"continue with zuno run --session SESSION: its next run delivers them")
	default:
		err = domain.NewError(CodeInterrupted, fmt.Sprintf("the run was stopped (%v); its turn is recorded interrupted", context.Cause(ctx)),
			"continue with zuno run --session SESSION")
	}
	return head, err
}

// StopJobs cancels the background jobs and report deliveries of this process and waits until
// each has recorded its end (Jobs.Settle on a stopped context): the process's Close calls it
// before the stores they write to close. A process that never used the job runtime pays
// nothing.
func (c *Commands) StopJobs() {
	if !c.jobsMade.Load() {
		return
	}
	stopped, stop := context.WithCancel(context.Background())
	stop()
	c.jobs().Settle(stopped)
}

// CodeInterrupted: the run was stopped (Ctrl-C, SIGTERM) before its delegated work ended.
const CodeInterrupted = "interrupted"
