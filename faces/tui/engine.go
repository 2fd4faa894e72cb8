// Package tui is Zuno's interactive terminal face, `zuno chat` (docs/tui.md): a full-screen
// session on Bubble Tea at a terminal, and plain lines anywhere else. It is thin: every turn,
// answer, interruption and Goal control is a command of the Application (commands/app), and
// it answers permission asks and questions through the same ports the HTTP face uses, with
// the same outcome when another face answered first (docs/server.md, "Permission replies").
package tui

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/question"
	"github.com/zuno-run/zuno/events"
)

// Face is what a turn's observer hands to the chat instead of printing: the permission asks
// and the question calls the person answers, and every call the gate decided (an ask another
// face answered is then no longer the person's to answer).
type Face interface {
	// Ask is a permission ask of the chat's turn; why says which gate asked and why, view is
	// what it shows under its line (an edit's change).
	Ask(e events.PermissionAsked, why string, view []string)
	// Question is a call of a tool that asks the user (question, question_async, plan_exit).
	Question(e events.ToolStarted)
	// Decided is a call that started or was blocked: an ask about it is settled.
	Decided(callID string)
}

// Config is one chat.
type Config struct {
	App *app.Application
	// Session continues a session; empty starts a new one with the first prompt.
	Session string
	// Agent and Model are the first turn's; /agent and /model change them.
	Agent, Model string
	// Dir is the workspace of a new session (empty: Cwd); Cwd is the process's directory.
	Dir, Cwd string
	// Observe builds a turn's observer: it writes the turn's transcript (streamed text, a
	// line per tool call and its preview) to w and hands asks and question calls to f.
	// The session is the turn's (new: not recorded yet).
	Observe func(session string, w io.Writer, f Face) turn.Observer
}

// Engine runs the chat's turns and answers for a face. Its output goes to emit, one
// message at a time, from whichever goroutine produced it.
type Engine struct {
	cfg  Config
	emit func(any)

	mu      sync.Mutex
	session string
	agent   string
	model   string
	running bool
	base    context.Context // the chat's, from the last Submit: what the engine's own waits end with
	cancel  context.CancelFunc
	done    chan struct{}
	asks    map[string]string // pending asks shown to the person: call id → ask id
	steers  map[string]string // steers admitted and not yet taken: input id → text
	// interrupting: the person pressed Ctrl-C during this run; a turn of the session that
	// starts before the run ends (a steer's) is interrupted too (steer.go).
	interrupting bool
}

// The messages an Engine emits.
type (
	// transcriptMsg is turn output: streamed text and whole lines.
	transcriptMsg string
	// noteMsg is a line of the chat's own (a command's result, a refusal).
	noteMsg string
	// askMsg is a permission ask to put to the person.
	askMsg struct {
		Ask  events.PermissionAsked
		Why  string
		View []string
		// shown numbers the ask on the screen that received it (confirm.go): an ask id is
		// the model's call id, which another session's ask may spell the same.
		shown uint64
	}
	// askSettledMsg: the ask's call was decided (answered here or elsewhere).
	askSettledMsg struct{ AskID string }
	// questionMsg is a published question request to put to the person.
	questionMsg struct{ Req *app.QuestionRequest }
	// turnDoneMsg: the turn ended; Summary is its closing line.
	turnDoneMsg struct {
		Summary string
		Err     error
	}
	// stateMsg: the session, agent, model or running state changed.
	stateMsg struct{}
)

// NewEngine makes the engine of one chat.
func NewEngine(cfg Config, emit func(any)) *Engine {
	return &Engine{cfg: cfg, emit: emit, session: cfg.Session, agent: cfg.Agent, model: cfg.Model, asks: map[string]string{},
		steers: map[string]string{}}
}

// State is what the header shows.
type State struct {
	Session, Agent, Model string
	Running               bool
}

// State reads the chat's state.
func (e *Engine) State() State {
	e.mu.Lock()
	defer e.mu.Unlock()
	return State{Session: e.session, Agent: e.agent, Model: e.model, Running: e.running}
}

func meta() commands.Meta { return commands.Meta{CommandID: app.NewID("cmd_"), Actor: "user"} }

// Submit starts a turn on prompt. It is refused while a turn runs: the face keeps the line.
func (e *Engine) Submit(ctx context.Context, prompt string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.running {
		return fmt.Errorf("a turn is running: wait for it, or press Ctrl-C to interrupt it")
	}
	m := meta()
	in := app.RunTurn{Meta: m, SessionID: e.session, Prompt: prompt, Model: e.model, Agent: e.agent, Cwd: e.cfg.Cwd,
		Interactive: true}
	if e.session == "" {
		// The new session's id derives from the command's (app.NewSessionID): the chat knows
		// it before the first event, so an interrupt can name it.
		in.Dir, e.session = e.cfg.Dir, app.NewSessionID(m.CommandID)
	}
	in.Observer = watch{Observer: e.cfg.Observe(e.session, transcript{e}, e), e: e, session: e.session}
	tctx, cancel := context.WithCancel(ctx)
	e.running, e.cancel, e.done, e.base = true, cancel, make(chan struct{}), ctx
	go e.run(tctx, in, e.done)
	e.emit(stateMsg{})
	return nil
}

// run drives the turn, then waits until the read models hold it (the session picker reads
// them), and says how it ended.
func (e *Engine) run(ctx context.Context, in app.RunTurn, done chan struct{}) {
	defer close(done)
	res, err := e.cfg.App.Commands.RunTurn(ctx, in)
	if err == nil {
		// The turn ends when the work it delegated has been delivered (docs/delegation.md).
		res.LastPosition, err = e.cfg.App.Commands.SettleJobs(ctx)
	}
	if res.LastPosition > 0 {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		e.cfg.App.Queries.WaitFor(wctx, res.LastPosition)
		cancel()
	}
	e.mu.Lock()
	e.running, e.cancel = false, nil
	if res.SessionID != "" {
		e.session = res.SessionID
	} else if err != nil && in.SessionID == "" {
		e.session = "" // refused before the session was created: the next prompt starts it
	}
	clear(e.asks)
	left := len(e.steers)
	clear(e.steers)
	e.interrupting = false
	e.mu.Unlock()
	if left > 0 { // the run was stopped before they were delivered: they are durable in the inbox
		e.emit(noteMsg(fmt.Sprintf("· %d steer%s not taken: in the session's inbox for its next run", left, plural(left))))
	}
	msg := turnDoneMsg{Err: err}
	if err != nil && ctx.Err() != nil && res.TurnID == "" {
		// Interrupted before the driver started the turn: nothing ran.
		msg = turnDoneMsg{Summary: "[interrupted before the turn started]"}
	}
	if err == nil {
		msg.Summary = summary(res.Outcome)
		if res.Reason != events.FinishInterrupted { // the summary says it; its fix names zuno run, and here the next line continues
			msg.Err = res.Err()
		}
	}
	e.emit(msg)
	e.emit(stateMsg{})
}

func summary(o turn.Outcome) string {
	s := fmt.Sprintf("[%s · %d provider request%s · tokens in %d out %d]", o.Reason, o.Steps, plural(o.Steps),
		o.Usage.InputTokens, o.Usage.OutputTokens)
	if o.Duplicate {
		s += " (handled before: nothing ran again)"
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Interrupt stops the running turn as any face does, with the InterruptTurn command (the
// process driving it records the interruption, docs/turns.md "Leases"); if the turn has not
// ended a few seconds later, or the command could not be sent (the turn had not started yet),
// its context is cancelled, which records the same. It reports whether a turn was running.
func (e *Engine) Interrupt(ctx context.Context) bool {
	e.mu.Lock()
	running, session, cancel, done := e.running, e.session, e.cancel, e.done
	e.mu.Unlock()
	if !running {
		return false
	}
	e.mu.Lock()
	e.interrupting = true
	e.mu.Unlock()
	e.emit(noteMsg("· interrupting the turn"))
	go func() {
		if _, err := e.cfg.App.Commands.InterruptTurn(ctx, meta(), session, ""); err != nil {
			cancel()
			return
		}
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cancel()
		}
	}()
	return true
}

// Stop cancels the running turn, if any, and waits until it has recorded its end.
func (e *Engine) Stop() {
	e.mu.Lock()
	cancel, done := e.cancel, e.done
	e.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// Wait waits for the running turn, if any, to end.
func (e *Engine) Wait() {
	e.mu.Lock()
	done := e.done
	e.mu.Unlock()
	if done != nil {
		<-done
	}
}

// transcript is the writer a turn's observer prints to.
type transcript struct{ e *Engine }

func (t transcript) Write(p []byte) (int, error) {
	t.e.emit(transcriptMsg(p))
	return len(p), nil
}

// Ask implements Face.
func (e *Engine) Ask(a events.PermissionAsked, why string, view []string) {
	e.mu.Lock()
	e.asks[a.CallID] = a.AskID
	e.mu.Unlock()
	e.emit(askMsg{Ask: a, Why: why, View: view})
}

// Decided implements Face: the call's ask, if the person was shown one, is settled.
func (e *Engine) Decided(callID string) {
	e.mu.Lock()
	ask, ok := e.asks[callID]
	delete(e.asks, callID)
	e.mu.Unlock()
	if ok {
		e.emit(askSettledMsg{AskID: ask})
	}
}

// Question implements Face: the request the call publishes is put to the person once it is
// published (up to 30 s: a call the port refused publishes nothing).
func (e *Engine) Question(call events.ToolStarted) {
	id := app.RequestID(call.SessionID, call.CallID)
	e.mu.Lock()
	ctx := e.base
	e.mu.Unlock()
	go func() {
		port := e.cfg.App.Commands.Questions()
		for range 600 {
			if r, err := port.Get(ctx, call.SessionID, id); err == nil {
				if r.Open() {
					e.emit(questionMsg{Req: r})
				}
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
}

// CodeAskNotPending: the chat answered an ask that takes no answer any more: another face
// answered it first, or it was never asked. The HTTP face's 404 of the same name
// (docs/server.md, "Permission replies"): a committed reply is final.
const CodeAskNotPending = "ask_not_pending"

// CodeQuestionNotPending: the chat answered a question request that takes no answer: answered
// in full (by any face) or voided. The HTTP face's 404 of the same name (docs/questions.md).
const CodeQuestionNotPending = "question_not_pending"

// NotPendingError is a reply to an ask or a question that was not waiting for one.
type NotPendingError struct{ code, msg string }

func (n *NotPendingError) Error() string { return n.code + ": " + n.msg }

// Code is the stable code.
func (n *NotPendingError) Code() string { return n.code }

// AnswerAsk records the person's reply (once, always or reject) to a pending ask, as the HTTP
// face's reply does: refused with ask_not_pending when the ask is not pending (answered by
// another face, whichever reply won a race), never recorded twice.
func (e *Engine) AnswerAsk(ctx context.Context, session, askID, reply string) error {
	asks, err := e.cfg.App.Queries.Asks(ctx, session)
	if err != nil {
		return err
	}
	callID := ""
	for _, a := range asks {
		if a.AskID == askID && a.Pending {
			callID = a.CallID
		}
	}
	notPending := &NotPendingError{CodeAskNotPending, fmt.Sprintf("session %s has no pending ask %s: another face answered it", session, askID)}
	if callID == "" {
		return notPending
	}
	res, err := e.cfg.App.Commands.AnswerPermission(ctx, meta(), session, askID, callID, reply)
	switch {
	case app.CodeOf(err) == "already_answered":
		return notPending
	case err != nil:
		return err
	case res.Events == 0 && !res.Duplicate:
		return notPending
	}
	return res.Err()
}

// AnswerQuestion records answers to some items of a request against its current revision
// (read again: a deferral may have moved it), or defers it ("later") when there are none;
// refused with question_not_pending when the request takes no answer.
func (e *Engine) AnswerQuestion(ctx context.Context, r *app.QuestionRequest, answers []events.QuestionItemAnswer) error {
	port := e.cfg.App.Commands.Questions()
	notPending := &NotPendingError{CodeQuestionNotPending, fmt.Sprintf("session %s has no open question request %s: another face answered it", r.SessionID, r.RequestID)}
	for range 3 {
		cur, err := port.Get(ctx, r.SessionID, r.RequestID)
		if app.CodeOf(err) == question.CodeQuestionNotFound || (err == nil && !cur.Open()) {
			return notPending
		}
		if err != nil {
			return err
		}
		if len(answers) == 0 {
			_, err = port.Later(ctx, meta(), r.SessionID, r.RequestID, cur.Revision)
		} else {
			_, err = port.Answer(ctx, meta(), r.SessionID, r.RequestID, cur.Revision, answers, "terminal")
		}
		switch app.CodeOf(err) {
		case app.CodeStaleRevision:
			continue
		case question.CodeQuestionClosed, question.CodeQuestionNotFound:
			return notPending
		}
		return err
	}
	return fmt.Errorf("the request %s kept changing; answer again", r.RequestID)
}

// QuestionOpen reports whether the request still takes an answer (another face may have
// answered it while it was shown).
func (e *Engine) QuestionOpen(ctx context.Context, r *app.QuestionRequest) bool {
	cur, err := e.cfg.App.Commands.Questions().Get(ctx, r.SessionID, r.RequestID)
	return err != nil || cur.Open() // a read that fails leaves it shown
}

// QuestionOption resolves what the person typed for an item: an option's number or label
// selects it; other text is free text where the item allows it.
func QuestionOption(it events.QuestionItem, line string) (events.QuestionItemAnswer, bool) {
	line = strings.TrimSpace(line)
	if line == "" {
		return events.QuestionItemAnswer{}, false
	}
	var n int
	if _, err := fmt.Sscanf(line, "%d", &n); err == nil && fmt.Sprint(n) == line && n >= 1 && n <= len(it.Options) {
		return events.QuestionItemAnswer{ItemID: it.ID, Selected: []string{it.Options[n-1].Label}}, true
	}
	for _, o := range it.Options {
		if strings.EqualFold(o.Label, line) {
			return events.QuestionItemAnswer{ItemID: it.ID, Selected: []string{o.Label}}, true
		}
	}
	if it.Custom || len(it.Options) == 0 {
		return events.QuestionItemAnswer{ItemID: it.ID, Text: line}, true
	}
	return events.QuestionItemAnswer{}, false
}
