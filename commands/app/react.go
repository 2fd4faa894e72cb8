package app

import (
	"context"
	"fmt"
	"time"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/react"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/lease"
	"github.com/zuno-run/zuno/events"
)

// Reactions are the application's reactions (docs/turns.md, "Reactions"): a resumption when an
// answer arrives. What no event triggers (an expired lease) is found by Sweep.
func Reactions() []react.Reaction { return []react.Reaction{react.AnswerResumes()} }

// React issues a reaction's command. A command that finds nothing to do (no turn waits, the
// turn is held by a live process, an ask is still unanswered) is react.Skipped: the trigger
// is done with, and a later event or sweep brings what it waits for.
func (c *Commands) React(ctx context.Context, cmd react.Command) error {
	meta := commands.Meta{CommandID: cmd.ID, Actor: "reaction", CorrelationID: cmd.SessionID, CausationID: cmd.Trigger}
	switch cmd.Kind {
	case react.KindResume:
		_, err := c.ResumeTurn(ctx, ResumeTurn{Meta: meta, SessionID: cmd.SessionID, Interactive: true, Suspend: true})
		return skipped(err)
	case react.KindRecoverJobs:
		return skipped(c.jobs().Recover(ctx, cmd.SessionID))
	case react.KindSettle:
		out, err := c.SettleTurn(ctx, meta, cmd.SessionID, cmd.TurnID)
		if err != nil || out.Reason != turn.ReasonSuspended {
			return skipped(err)
		}
		// Its process died while it waited: if the answers are in, it goes on now (under the
		// id the answer's own reaction uses, so the two run it once between them).
		_, err = c.ResumeTurn(ctx, ResumeTurn{SessionID: cmd.SessionID, Interactive: true, Suspend: true,
			Meta: commands.Meta{Actor: "reaction", CorrelationID: cmd.SessionID, CausationID: cmd.Trigger}})
		return skipped(err)
	}
	return fmt.Errorf("react: unknown command kind %q", cmd.Kind)
}

// nothingToDo are the codes of a reaction's command that found its turn in another state
// than the trigger suggested.
var nothingToDo = map[string]bool{
	turn.CodeNoOpenTurn: true, turn.CodeTurnNotSuspended: true, CodeTurnAwaitsAnswer: true, turn.CodeSessionBusy: true,
	turn.CodeTurnInProgress: true, lease.CodeLeaseHeld: true, CodeUsage: true, domain.CodeSessionNotFound: true,
}

// skipped says what the runner does with a command's failure: one that found nothing to do,
// and any other typed refusal (a workspace that is gone, a model that cannot be opened: the
// same command would be refused again), is done with, so it never holds up the triggers after
// it; an untyped failure (the store, the network) is tried again later.
func skipped(err error) error {
	code := domain.CodeOf(err)
	switch {
	case err == nil:
		return nil
	case nothingToDo[code]:
		return fmt.Errorf("%w: %w", react.Skipped, err)
	case code != "":
		return fmt.Errorf("%w: gave up: %w", react.Skipped, err)
	}
	return err
}

// Sweep is the reaction runner's look at the state of the store, for what no event triggers:
// a settle command for each open turn whose lease has expired (react.Expired), and a resume
// for each suspended turn whose asks are all answered (an answer that landed while the turn
// was suspending, when its holder still held it and the answer's own resume found it busy).
func (c *Commands) Sweep(ctx context.Context) ([]react.Command, error) {
	expired, err := c.expiredLeases(ctx)
	if err != nil {
		return expired, err
	}
	answered, err := c.answeredSuspensions(ctx)
	if err != nil {
		return append(expired, answered...), err
	}
	lost, err := c.unsettledJobs(ctx)
	return append(append(expired, answered...), lost...), err
}

// unsettledJobs is a recover command for each parent with a queued or running job: Recover
// settles those whose process is gone and leaves the others (a live process runs them), so a
// parent that never runs again still has its lost jobs settled.
func (c *Commands) unsettledJobs(ctx context.Context) ([]react.Command, error) {
	views, err := c.queries.Jobs(ctx, "")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []react.Command
	for _, v := range views {
		if (v.Status == events.JobQueued || v.Status == events.JobRunning) && !seen[v.ParentSessionID] {
			seen[v.ParentSessionID] = true
			out = append(out, react.Command{Kind: react.KindRecoverJobs, ID: "recover-jobs/" + v.ParentSessionID,
				SessionID: v.ParentSessionID, Trigger: v.JobID})
		}
	}
	return out, nil
}

func (c *Commands) expiredLeases(ctx context.Context) ([]react.Command, error) {
	leases := c.ports.Driver.Leases
	if leases == nil {
		return nil, nil
	}
	ids, err := c.queries.SessionsWithStatus(ctx, "open")
	if err != nil {
		return nil, err
	}
	var out []react.Command
	for _, id := range ids {
		open, err := c.ports.Driver.Open(ctx, id)
		if domain.CodeOf(err) == turn.CodeNoOpenTurn {
			continue // finished since the read models said open
		}
		if err != nil {
			return out, err
		}
		l, err := leases.Current(ctx, open.Started.TurnID)
		if err != nil {
			return out, err
		}
		if cmd, ok := react.Expired(id, l, leases.Clock.Now()); ok {
			out = append(out, cmd)
		}
	}
	return out, nil
}

func (c *Commands) answeredSuspensions(ctx context.Context) ([]react.Command, error) {
	ids, err := c.queries.SessionsWithStatus(ctx, "suspended")
	if err != nil {
		return nil, err
	}
	var out []react.Command
	for _, id := range ids {
		open, err := c.ports.Driver.Open(ctx, id)
		if domain.CodeOf(err) == turn.CodeNoOpenTurn || (err == nil && !open.Suspended) {
			continue // resumed or finished since the read models said suspended
		}
		if err != nil {
			return out, err
		}
		trigger, err := c.lastAnswer(ctx, id, open)
		if err != nil {
			continue // an ask still unanswered: its answer's reaction resumes it
		}
		out = append(out, react.Command{Kind: react.KindResume, ID: ResumeCommandID(trigger), SessionID: id, Trigger: trigger})
	}
	return out, nil
}

// ReactionRunner is the reaction runner of this application (zuno worker runs it): its
// reactions, its sweep for expired leases every every, checkpoints kept in cps, each command
// told to report.
func (c *Commands) ReactionRunner(cps react.Checkpoints, every time.Duration, report func(react.Command, error)) *react.Runner {
	return &react.Runner{Log: c.ports.Log, Registry: c.ports.Driver.Registry, Checkpoints: cps, Feed: c.ports.Feed,
		Reactions: Reactions(), Sweep: c.Sweep, Dispatch: c.React, Every: every, Report: report}
}
