package commands

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/zuno-run/zuno/domain/job"
	"github.com/zuno-run/zuno/events"
)

// JobStream is the job ledger of a parent session: the jobs it delegated and the reports
// they deliver to its inbox (docs/delegation.md).
func JobStream(parentSessionID string) string { return "jobs-" + parentSessionID }

// JobCommand is one command of a parent's job ledger: Cmd is a job.Admit, job.Start,
// job.Settle, job.Consume or job.Reconcile. Its events' ids derive from Meta.CommandID, so a
// command sent again (a re-executed tool call, a retried settlement) appends nothing and
// answers with its first result.
type JobCommand struct {
	Meta
	ParentSessionID string `json:"parentSessionId"`
	Cmd             any    `json:"cmd"`
}

// jobRounds bounds how often HandleJob sends a command again after losing its races: a
// parent's ledger is a hot stream by design (up to concurrency.delegations children settle
// into it at once), and a settlement that gave up would leave its job running for good.
const jobRounds = 32

// HandleJob runs one ledger command and returns the result with the ledger after it. A
// command that lost every race of a round (contention) is sent again, with the same command
// id, after a short random pause, up to jobRounds rounds.
func (h *Handlers) HandleJob(ctx context.Context, c *JobCommand) (Result, *job.Ledger) {
	for round := 1; ; round++ {
		res, l := h.handleJob(ctx, c)
		if res.Error == nil || res.Error.Code != CodeContention || round == jobRounds || ctx.Err() != nil {
			return res, l
		}
		time.Sleep(time.Duration(1+rand.IntN(4*round)) * time.Millisecond)
	}
}

func (h *Handlers) handleJob(ctx context.Context, c *JobCommand) (Result, *job.Ledger) {
	var after *job.Ledger
	x := execution[*job.Ledger]{
		meta: c.Meta, stream: JobStream(c.ParentSessionID),
		newState: func() *job.Ledger { return &job.Ledger{} },
		decide:   func(l *job.Ledger) ([]events.Payload, error) { return job.Decide(l, c.Cmd) },
	}
	res := Measured(h.metrics, "Job", func(ctx context.Context, c *JobCommand) (Result, error) {
		r := handle(ctx, h, "Job", x, c.Cmd, func(l *job.Ledger) any { after = l; return nil })
		return r, nil
	})
	r, _ := res(ctx, c)
	return r, after
}

// LoadJobs folds a parent's job ledger from its stream.
func LoadJobs(ctx context.Context, store StreamReader, registry *events.Registry, parent string) (*job.Ledger, int64, error) {
	l := &job.Ledger{}
	rev, err := Load(ctx, store, registry, JobStream(parent), 0, func(_ events.Recorded, p events.Payload) error { return l.Evolve(p) })
	return l, rev, err
}
