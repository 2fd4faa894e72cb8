// Package react is the reaction runner (docs/turns.md, "Reactions"): a checkpointed consumer
// of the log that maps events to commands. A reaction is a pure function of the event that
// triggers it; each command it asks for carries an id derived from the reaction and the
// trigger's event id, so delivering a trigger twice (a crash after the command, before the
// checkpoint) issues a command that returns its first result: at-least-once delivery, an
// exactly-once effect through the command ids every handler already honours.
package react

import (
	"fmt"
	"time"

	"github.com/zuno-run/zuno/domain/lease"
	"github.com/zuno-run/zuno/events"
)

// Kinds of command a reaction asks for.
const (
	// KindResume resumes a session's turn suspended on asks (app ResumeTurn).
	KindResume = "resume_turn"
	// KindSettle settles a session's open turn whose lease expired (app SettleTurn).
	KindSettle = "settle_turn"
	// KindRecoverJobs applies the restart rules to a parent's queued and running jobs (app
	// Jobs.Recover, docs/delegation.md "Restart").
	KindRecoverJobs = "recover_jobs"
)

// Names of the reactions; each names its checkpoint and prefixes its commands' ids.
const (
	ResumeOnAnswer      = "resume-on-answer"
	SettleExpiredLeases = "settle-expired-lease"
)

// Command is what a reaction asks for.
type Command struct {
	Kind string
	// ID is the command id: CommandID(reaction, trigger).
	ID        string
	SessionID string
	TurnID    string
	// Trigger is the event the command answers (an event id), or, for an expired lease, the
	// lease it found expired.
	Trigger string
}

// CommandID is the id of the command a reaction issues for a trigger.
func CommandID(reaction, trigger string) string { return reaction + "/" + trigger }

// Reaction maps one recorded event to the commands it calls for.
type Reaction struct {
	Name string
	// Types are the event types it reacts to; others are not decoded for it.
	Types []string
	On    func(rec events.Recorded, p events.Payload) []Command
}

// AnswerResumes is the reaction that resumes a suspended turn when the answer to its ask
// arrives. A turn that waits for the answer in a live process takes it there; the command
// then finds nothing to resume (or a busy session) and does nothing.
func AnswerResumes() Reaction {
	return Reaction{Name: ResumeOnAnswer, Types: []string{events.TypePermissionAnswered},
		On: func(rec events.Recorded, p events.Payload) []Command {
			a, ok := p.(events.PermissionAnswered)
			if !ok {
				return nil
			}
			return []Command{{Kind: KindResume, ID: CommandID(ResumeOnAnswer, rec.ID), SessionID: a.SessionID, Trigger: rec.ID}}
		}}
}

// Expired is the settle command for the turn of a session with an open turn whose lease l
// expired at now: one per expired lease (its id names the lease: turn, holder, expiry), none
// while the lease is live or was released (the turn gave it back: suspended or finished). The
// settling checks that the lease's turn is the open one.
func Expired(sessionID string, l lease.State, now time.Time) (Command, bool) {
	if l.TurnID == "" || l.Holder == "" || l.Released || l.Live(now) {
		return Command{}, false
	}
	trigger := fmt.Sprintf("%s/%s/%s/%s", sessionID, l.TurnID, l.Holder, l.ExpiresAt.UTC().Format(time.RFC3339Nano))
	return Command{Kind: KindSettle, ID: CommandID(SettleExpiredLeases, trigger), SessionID: sessionID, TurnID: l.TurnID, Trigger: trigger}, true
}
