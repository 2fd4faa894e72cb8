package app

import (
	"context"
	"strings"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/job"
	"github.com/zuno-run/zuno/events"
)

// Deliveries of a steering message (Steered.Delivery).
const (
	// DeliverySteering: the message is an input of the session's inbox, for the running turn's
	// next tool-safe boundary, or the session's next turn when that turn ends first.
	DeliverySteering = "steering"
	// DeliveryTurn: no turn of the session runs (or the running one is this command's own):
	// the message is the next turn's prompt, as a message without steer is.
	DeliveryTurn = "turn"
)

// Steered is where a steering message went.
type Steered struct {
	Delivery string `json:"delivery"`
	// InputID names the message in the session's inbox (steering only).
	InputID string `json:"inputId,omitempty"`
	// TurnID is the turn that was running when the message was admitted (steering only).
	TurnID string `json:"turnId,omitempty"`
	// Status is queued until a user message of the session delivers the input, then consumed.
	Status string `json:"status,omitempty"`
}

// Steer sends the user's message to the session's running turn (docs/server.md, "Steering a
// running turn"). The message is admitted to the session's inbox, durable in the log, and this
// process's turn of the session records it at its next tool-safe boundary; when the turn ends
// first, it is the session's next turn. A turn of the session running in another process
// takes it at the session's next run (the inbox is recovered at every run's start). With no
// turn running, Steer admits nothing and answers DeliveryTurn: the caller runs the message as
// a turn (RunTurn with the same command). The input's id derives from the command id, so the
// same command sent again admits nothing new and answers the same.
func (c *Commands) Steer(ctx context.Context, meta commands.Meta, sessionID, text string) (Steered, error) {
	if strings.TrimSpace(text) == "" {
		return Steered{}, domain.Invalid("text", "is empty", "send the user's message as prompt")
	}
	if err := c.queries.RequireSession(ctx, sessionID); err != nil {
		return Steered{}, err
	}
	inputID := SteerInputID(sessionID, meta.CommandID)
	l, _, err := commands.LoadJobs(ctx, c.ports.Log, c.ports.Driver.Registry, sessionID)
	if err != nil {
		return Steered{}, err
	}
	if m := admitted(l, inputID); m != nil { // this command, sent again
		if m.Text != text {
			return Steered{}, &commands.CommandIDReusedError{CommandID: meta.CommandID, Stream: commands.JobStream(sessionID)}
		}
		return steered(m), nil
	}
	open, err := c.ports.Driver.Open(ctx, sessionID)
	switch {
	case domain.CodeOf(err) == turn.CodeNoOpenTurn:
		return Steered{Delivery: DeliveryTurn}, nil
	case err != nil:
		return Steered{}, err
	case open.Started.TurnID == turn.TurnID(meta.CommandID):
		return Steered{Delivery: DeliveryTurn}, nil // this command's own turn: RunTurn answers it
	}
	msg := events.InboxMessageAdmitted{SessionID: sessionID, InputID: inputID, Text: text, Steer: true}
	jm := meta
	jm.CommandID, jm.CorrelationID, jm.CausationID = "steer/"+meta.CommandID, sessionID, meta.CommandID
	res, _ := c.ports.Jobs.HandleJob(ctx, &commands.JobCommand{Meta: jm, ParentSessionID: sessionID,
		Cmd: job.AdmitMessage{InboxMessageAdmitted: msg}})
	if err := res.Err(); err != nil {
		return Steered{}, err
	}
	// The running turn takes it at its next boundary when it runs here; otherwise a delivery
	// is tried now and, while the session is busy elsewhere, left to its next run.
	c.jobs().wake(sessionID)
	return Steered{Delivery: DeliverySteering, InputID: inputID, TurnID: open.Started.TurnID, Status: "queued"}, nil
}

// SteerInputID is the inbox input a steering command admits: derived from the session and
// the command id, so a retry names the same input.
func SteerInputID(sessionID, commandID string) string {
	return "input_" + derived("steer", sessionID+"/"+commandID)
}

func admitted(l *job.Ledger, inputID string) *job.Message {
	for _, m := range l.Messages() {
		if m.InputID == inputID {
			return m
		}
	}
	return nil
}

func steered(m *job.Message) Steered {
	s := Steered{Delivery: DeliverySteering, InputID: m.InputID, Status: "queued"}
	if m.Consumed {
		s.Status = "consumed"
	}
	return s
}

// watchInbox marks session for a delivery at its running turn's next tool-safe boundary
// whenever any process admits an input to its inbox: a steer sent to another server, or a
// report that another process settled. The turn takes inputs only when marked (Take); a
// process learns of its own admissions directly (wake), of others' only from the log.
// The returned stop ends the watch.
func (j *Jobs) watchInbox(session string) (stop func()) {
	feed := j.c.ports.Feed
	if feed == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		after, err := feed.Seen(ctx)
		if err != nil {
			return
		}
		stream := commands.JobStream(session)
		for {
			rec, err := feed.Wait(ctx, after, func(r events.Recorded) bool {
				return r.Stream == stream && (r.Type == events.TypeInboxMessageAdmitted || r.Type == events.TypeJobReportAdmitted)
			})
			if err != nil {
				return
			}
			j.mark(session)
			after = rec.Position
		}
	}()
	return func() { cancel(); <-done }
}
