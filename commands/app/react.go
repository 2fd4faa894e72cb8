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
)

// Reactions are the application's reactions (docs/turns.md, "Reactions"): a resumption when an
// answer arrives. The sweep for expired leases is ExpiredLeases.
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

func skipped(err error) error {
	if err != nil && nothingToDo[domain.CodeOf(err)] {
		return fmt.Errorf("%w: %w", react.Skipped, err)
	}
	return err
}

// ExpiredLeases is the reaction runner's sweep: a settle command for each session whose open
// turn's lease has expired (react.Expired).
func (c *Commands) ExpiredLeases(ctx context.Context) ([]react.Command, error) {
	leases := c.ports.Driver.Leases
	if leases == nil {
		return nil, nil
	}
	ids, err := c.queries.OpenSessions(ctx)
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

// ReactionRunner is the reaction runner of this application (zuno worker runs it): its
// reactions, its sweep for expired leases every every, checkpoints kept in cps, each command
// told to report.
func (c *Commands) ReactionRunner(cps react.Checkpoints, every time.Duration, report func(react.Command, error)) *react.Runner {
	return &react.Runner{Log: c.ports.Log, Registry: c.ports.Driver.Registry, Checkpoints: cps, Feed: c.ports.Feed,
		Reactions: Reactions(), Sweep: c.ExpiredLeases, Dispatch: c.React, Every: every, Report: report}
}
