package app

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/react"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/events"
)

// ResumeTurn continues a session's turn that waits on permission asks once they are answered
// (docs/turns.md, "Suspended turns"), in whichever process runs it.
type ResumeTurn struct {
	// Meta.CommandID empty derives it from the answer that completed the turn's asks
	// (ResumeCommandID), so the user's resume and the reaction to the answer are one command:
	// whichever comes second returns the first's outcome and runs nothing.
	Meta      commands.Meta
	SessionID string
	// Model overrides the model the turn was started with; a turn started with a scripted
	// model needs it (the script's file is not in the log).
	Model       string
	Observer    turn.Observer
	Interactive bool
	// Suspend: a later ask nobody answered yet suspends the turn again.
	Suspend bool
	Notice  func(string)
}

// ResumeCommandID is the id of the command that resumes a turn on the answer whose event id is
// triggerEventID: the id the reaction to that answer gives it (react.AnswerResumes).
func ResumeCommandID(triggerEventID string) string {
	return react.CommandID(react.ResumeOnAnswer, triggerEventID)
}

// CodeTurnAwaitsAnswer: a resumption of a turn some of whose asks have no answer yet.
const CodeTurnAwaitsAnswer = "turn_awaits_answer"

// ResumeTurn runs the rest of the session's suspended turn.
func (c *Commands) ResumeTurn(ctx context.Context, in ResumeTurn) (TurnResult, error) {
	var again *turn.Resume
	if id := in.Meta.CommandID; id != "" {
		out, done, rerun, err := c.ports.Driver.Resumed(ctx, in.SessionID, id)
		if done || err != nil {
			head, herr := c.ports.Log.LastPosition(context.WithoutCancel(ctx))
			if err == nil {
				err = herr
			}
			return TurnResult{Outcome: out, LastPosition: head}, err
		}
		again = rerun
	}
	open, err := c.ports.Driver.Open(ctx, in.SessionID)
	if err != nil {
		return TurnResult{}, err
	}
	trigger, err := c.lastAnswer(ctx, in.SessionID, open)
	if err != nil {
		return TurnResult{}, err
	}
	if again != nil { // the same resumption again: its first trigger, so its digest is the same
		trigger = again.TriggerEventID
	}
	meta := in.Meta
	if meta.CommandID == "" {
		meta.CommandID = ResumeCommandID(trigger)
	}
	choice, err := c.resumeModel(in.Model, open.Started)
	if err != nil {
		return TurnResult{}, err
	}
	plan := turnPlan{sessionID: in.SessionID, agent: open.Started.Agent, dir: open.Directory, recorded: open.Directory}
	if plan.dir, err = workspace(plan.dir, plan.recorded); err != nil {
		return TurnResult{}, err
	}
	plan.recorded = plan.dir // a resumption never moves the session
	if err := c.settings.Own.OutsideWorkspace(filepath.ToSlash(plan.dir)); err != nil {
		return TurnResult{}, err
	}
	run := RunTurn{Meta: meta, SessionID: in.SessionID, Observer: in.Observer, Interactive: in.Interactive,
		Suspend: in.Suspend, Notice: in.Notice}
	return c.drive(ctx, run, plan, choice, &turn.Resume{TurnID: open.Started.TurnID, TriggerEventID: trigger})
}

// lastAnswer is the event id of the answer that completed the open turn's asks: the latest
// of their answers. An ask without an answer is turn_awaits_answer; a turn that waits on
// nothing is turn_not_suspended.
func (c *Commands) lastAnswer(ctx context.Context, sessionID string, open turn.OpenTurn) (string, error) {
	if len(open.Awaiting) == 0 {
		e := domain.NewError(turn.CodeTurnNotSuspended, fmt.Sprintf("turn %s of session %s is not waiting on an ask", open.Started.TurnID, sessionID),
			"check the session with zuno session show; only a turn waiting on an answer is resumed")
		e.ID = sessionID
		return "", e
	}
	var last commands.Answer
	var missing []string
	for _, a := range open.Awaiting {
		ans, ok, err := c.inbox().Find(ctx, sessionID, a.AskID)
		if err != nil {
			return "", err
		}
		if !ok {
			missing = append(missing, a.AskID)
		} else if ans.Record.Position >= last.Record.Position {
			last = ans
		}
	}
	if len(missing) > 0 {
		e := domain.NewError(CodeTurnAwaitsAnswer, fmt.Sprintf("turn %s of session %s waits for an answer to %s",
			open.Started.TurnID, sessionID, strings.Join(missing, ", ")),
			fmt.Sprintf("answer it first: zuno session answer %s %s once|always|reject", sessionID, missing[0]))
		e.ID = sessionID
		return "", e
	}
	return last.Record.ID, nil
}

// resumeModel is the model a resumed turn continues with: the one given, else the one it was
// started with; a scripted one's file is not in the log, so it must be given (or be the
// configured default).
func (c *Commands) resumeModel(given string, started events.TurnStarted) (ModelChoice, error) {
	spec := given
	switch {
	case spec != "":
	case started.Provider != "scripted" && started.Provider != "":
		spec = started.Provider + "/" + started.Model
	case strings.HasPrefix(c.settings.Model, "scripted:"):
		spec = c.settings.Model
	default:
		return ModelChoice{}, &UsageError{fmt.Sprintf("turn %s was started with a scripted model, whose script is not in the log: pass --model scripted:<file> to resume it", started.TurnID)}
	}
	return ParseModel(spec)
}

// SettleTurn settles a session's open turn whose lease expired: the reaction to an expired
// lease (docs/turns.md, "Reactions"). A turn waiting on asks is recorded suspended; one with a
// running call is recovered (the call settled uncertain, never run again).
func (c *Commands) SettleTurn(ctx context.Context, meta commands.Meta, sessionID, turnID string) (turn.Outcome, error) {
	return c.ports.Driver.Settle(ctx, meta, sessionID, turnID, c.inbox())
}
