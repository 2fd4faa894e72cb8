package tui

import (
	"context"

	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/events"
)

// The messages of steering (docs/tui.md, "Steering").
type (
	// steeredMsg is where a line typed while the turn ran went (Commands.Steer's answer).
	steeredMsg struct {
		Text    string
		Steered app.Steered
		Err     error
	}
	// steerTakenMsg: a turn of the chat's session recorded the steer as its user message
	// (session.user_message.appended.1 naming the input): the input is consumed.
	steerTakenMsg struct {
		InputID, Text string
	}
)

// Steer sends a line typed while the chat's turn runs to that turn through the application's
// port (Commands.Steer, docs/server.md "Steering a running turn"): admitted to the session's
// inbox, durable at once, taken at the turn's next tool-safe boundary, or the session's next
// turn when the turn ends first. When no turn of the session is open (it has not opened yet,
// or just ended) Steer admits nothing and answers DeliveryTurn: the face queues the line as
// the next turn's prompt.
func (e *Engine) Steer(ctx context.Context, text string) (app.Steered, error) {
	e.mu.Lock()
	session, running := e.session, e.running
	e.mu.Unlock()
	if !running || session == "" {
		return app.Steered{Delivery: app.DeliveryTurn}, nil
	}
	st, err := e.cfg.App.Commands.Steer(ctx, meta(), session, text)
	if domain.CodeOf(err) == domain.CodeSessionNotFound {
		// The chat's first turn has not recorded its new session yet: nothing runs to steer.
		return app.Steered{Delivery: app.DeliveryTurn}, nil
	}
	if err == nil && st.Delivery == app.DeliverySteering {
		e.mu.Lock()
		e.steers[st.InputID] = text
		e.mu.Unlock()
	}
	return st, err
}

// watch wraps a turn's observer: it reports the chat's steers as their turn takes them, and
// while the person's Ctrl-C stands (interrupting), interrupts every turn of the session that
// starts before the chat's run ends: a steer not taken before the interrupt is the session's
// next turn (docs/server.md), and the interrupt stops that one too, as it drops the prompts the
// chat queued (docs/tui.md, "Keys").
type watch struct {
	turn.Observer
	e       *Engine
	session string
}

func (w watch) Recorded(rec events.Recorded, p events.Payload) {
	if rec.Stream == "session-"+w.session {
		switch ev := p.(type) {
		case events.UserMessageAppended:
			w.e.taken(ev.InputID)
		case events.TurnStarted:
			w.e.turnStarted(ev)
		}
	}
	w.Observer.Recorded(rec, p)
}

func (e *Engine) taken(inputID string) {
	if inputID == "" {
		return
	}
	e.mu.Lock()
	text, ours := e.steers[inputID]
	delete(e.steers, inputID)
	e.mu.Unlock()
	if ours {
		e.emit(steerTakenMsg{InputID: inputID, Text: text})
	}
}

func (e *Engine) turnStarted(ev events.TurnStarted) {
	e.mu.Lock()
	interrupting, ctx := e.interrupting, e.base
	e.mu.Unlock()
	if !interrupting {
		return
	}
	e.emit(noteMsg("· interrupting the next turn too (it started after the Ctrl-C): " + ev.TurnID))
	go e.cfg.App.Commands.InterruptTurn(ctx, meta(), ev.SessionID, ev.TurnID)
}
