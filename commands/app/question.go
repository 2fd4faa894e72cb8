package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/question"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// DefaultQuestionDefer is the native deferral period of a waiting question (seeds 000): the
// first half silent, the second half a countdown a face shows.
const DefaultQuestionDefer = 120 * time.Second

// Codes of the question port.
const (
	// CodeQuestionOutsideTurn: a question tool was called outside a turn this process runs.
	CodeQuestionOutsideTurn = "question_outside_turn"
	// CodeQuestionToParent: a delegated child's question; it is a blocker for its parent and
	// is never put to the user (docs/delegation.md, "A child asks its parent").
	CodeQuestionToParent = question.CodeQuestionToParent
)

// QuestionRequest is a question request as the port returns it (the faces name the type
// without reaching into the domain).
type QuestionRequest = question.Request

// CodeStaleRevision: an answer named a revision the request has moved past; read it again.
const CodeStaleRevision = domain.CodeStaleRevision

// AsksUser reports whether a call of tool publishes a question request (question,
// question_async, plan_exit).
func AsksUser(tool string) bool {
	return tool == tools.NameQuestion || tool == tools.NameQuestionAsync || tool == tools.NamePlanExit
}

// Questions is the application's QuestionPort (docs/questions.md): the tools publish and wait
// through it, and every face (zuno run at a terminal, zuno question, the HTTP API) lists,
// answers and defers through it, so all meet the same commands and the same typed refusals.
// Publishing, reading, answering and waiting are separate operations.
type Questions struct {
	c *Commands
	// Defer is the deferral period of a waiting question; 0 is DefaultQuestionDefer.
	Defer time.Duration
	now   func() time.Time
}

// Questions returns the process's question port.
func (c *Commands) Questions() *Questions {
	c.questionsOnce.Do(func() { c.questionPort = &Questions{c: c, Defer: c.settings.QuestionDefer, now: time.Now} })
	return c.questionPort
}

// goalActive reports whether the session's root has an active Goal, read from the work
// stream (the Goal lives there, docs/goals.md); with one, question publishes and returns a
// receipt even in the Plan agent (seeds 000).
func (q *Questions) goalActive(ctx context.Context, sessionID string) (bool, error) {
	st, err := q.c.ports.Work(ctx, sessionID)
	if err != nil {
		return false, err
	}
	g := st.Goal().Goal()
	return g != nil && g.Status == events.GoalActive, nil
}

// RequestID is the stable id of the request a tool call publishes: derived from the session
// and the call, so a call executed again names the same request.
func RequestID(sessionID, callID string) string {
	return "qst_" + derived("question", sessionID+"/"+callID)
}

// Ask publishes one tool call's request and, for the Plan agent's question (no active Goal),
// waits for its first response. A delegated child's question is not published: it becomes a
// blocker its parent reads in the child's report.
func (q *Questions) Ask(ctx context.Context, inv tools.Invocation, a question.Ask) (question.Receipt, error) {
	comp, ok := q.c.jobs().compositionOf(inv.SessionID)
	if !ok {
		return question.Receipt{}, domain.NewError(CodeQuestionOutsideTurn, a.Tool+" was called outside a running turn of this process",
			"ask from a turn: the question tools run only inside one")
	}
	if _, depth, err := commands.Ancestry(ctx, q.c.ports.Log, q.c.ports.Driver.Registry, inv.SessionID); err != nil {
		return question.Receipt{}, err
	} else if depth > 0 {
		return question.Receipt{Outcome: question.AskParent, Blocker: blocker(a)}, nil
	}
	p := events.QuestionPublished{SessionID: inv.SessionID, RequestID: RequestID(inv.SessionID, inv.CallID),
		Kind: events.QuestionKindQuestion, Mode: events.QuestionModeReceipt, Tool: a.Tool, CallID: inv.CallID,
		TurnID: inv.TurnID, Agent: comp.agent.Name, Title: a.Title, Items: a.Items}
	wait, err := q.waits(ctx, inv.SessionID, a.Tool, comp.agent.Collaboration)
	if err != nil {
		return question.Receipt{}, err
	}
	if wait {
		now := q.now().UTC()
		p.Mode = events.QuestionModeWait
		p.DeferAt, p.CountdownAt = stamp(now.Add(q.period())), stamp(now.Add(q.period()/2))
	}
	if a.Tool == tools.NamePlanExit {
		if p.PlanExit, err = q.binding(ctx, inv, comp); err != nil {
			return question.Receipt{}, err
		}
		p.Kind = events.QuestionKindPlanExit
	}
	r, err := q.publish(ctx, p)
	if err != nil {
		return question.Receipt{}, err
	}
	if r.Mode == events.QuestionModeWait && r.Revision == 1 {
		if r, err = q.Wait(ctx, inv.SessionID, r.RequestID); err != nil {
			return question.Receipt{}, err
		}
	}
	return receipt(r), nil
}

// waits decides how the call waits: only question, in a Plan-collaboration agent, with no
// active Goal, waits for the first response.
func (q *Questions) waits(ctx context.Context, sessionID, tool, collaboration string) (bool, error) {
	if tool != tools.NameQuestion || collaboration != "plan" {
		return false, nil
	}
	active, err := q.goalActive(ctx, sessionID)
	return !active, err
}

func (q *Questions) period() time.Duration {
	if q.Defer > 0 {
		return q.Defer
	}
	return DefaultQuestionDefer
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// binding is what a plan_exit request binds: the focused Plan as it is now and the agent and
// model that would carry it out.
func (q *Questions) binding(ctx context.Context, inv tools.Invocation, comp composition) (*events.PlanExitBinding, error) {
	st, err := q.c.ports.Work(ctx, inv.SessionID)
	if err != nil {
		return nil, err
	}
	view := st.PlanView()
	if view == nil {
		return nil, domain.NewError(domain.CodeNoPlan, "there is no plan to approve",
			"write the plan with plan_update first, then ask for its approval")
	}
	// The identity is the asking turn's own, as its turn.started records it: the one a later
	// turn is compared with (PlanExitApproval).
	agentName, model, err := q.latestIdentity(ctx, inv.SessionID)
	if err != nil {
		return nil, err
	}
	if agentName == "" {
		agentName = comp.agent.Name
	}
	return &events.PlanExitBinding{PlanID: view.PlanID, PlanRevision: st.PlanRevision(), Agent: agentName,
		Model: model, TurnID: inv.TurnID}, nil
}

func (q *Questions) publish(ctx context.Context, p events.QuestionPublished) (*question.Request, error) {
	res, b := q.c.ports.Jobs.HandleQuestion(ctx, &commands.QuestionCommand{
		Meta:      commands.Meta{CommandID: "question-publish/" + p.RequestID, Actor: "agent", CorrelationID: p.SessionID, CausationID: p.CallID},
		SessionID: p.SessionID, RequestID: p.RequestID, Cmd: question.Publish{QuestionPublished: p}})
	if err := res.Err(); err != nil {
		return nil, err
	}
	return b.Get(p.RequestID), nil
}

func receipt(r *question.Request) question.Receipt {
	out := question.Receipt{RequestID: r.RequestID, Revision: r.Revision, Status: r.Status(), Pending: r.Pending(),
		DeferAt: r.DeferAt, PlanExit: r.PlanExit, Outcome: question.AskPublished}
	for _, it := range r.Items {
		out.Items = append(out.Items, it.ID)
	}
	if r.Mode == events.QuestionModeWait {
		switch {
		case r.Voided != "":
			out.Outcome = question.AskVoided
		case len(r.Answers) > 0:
			out.Outcome = question.AskAnswered
		case r.Deferred != "":
			out.Outcome = question.AskDeferred
		}
	}
	return out
}

// blocker is a child's question as its parent reads it.
func blocker(a question.Ask) string {
	var b strings.Builder
	b.WriteString("The child needs a decision it may not ask the user for")
	if a.Title != "" {
		fmt.Fprintf(&b, " (%q)", a.Title)
	}
	b.WriteString(":")
	for _, it := range a.Items {
		fmt.Fprintf(&b, " [%s] %s", it.ID, it.Question)
		if len(it.Options) > 0 {
			var labels []string
			for _, o := range it.Options {
				labels = append(labels, o.Label)
			}
			fmt.Fprintf(&b, " (options: %s)", strings.Join(labels, " | "))
		}
	}
	return b.String()
}

// Wait waits for the first response to a waiting request: an answer, a deferral or a void.
// A request with a deadline and no response yet is deferred at its stored deadline (DeferAt),
// whichever process waits: one that waits again after a restart waits for the original
// instant. The deferral is a command against the request's first revision, so a deferral
// racing an answer loses to it (stale_revision) and the answer stands.
func (q *Questions) Wait(ctx context.Context, sessionID, requestID string) (*question.Request, error) {
	for {
		after, err := q.head(ctx)
		if err != nil {
			return nil, err
		}
		r, err := q.Get(ctx, sessionID, requestID)
		if err != nil {
			return nil, err
		}
		if r.Revision > 1 || r.DeferAt == "" {
			return r, nil
		}
		deadline, err := time.Parse(time.RFC3339Nano, r.DeferAt)
		if err != nil {
			return nil, fmt.Errorf("question %s: stored deadline %q: %w", requestID, r.DeferAt, err)
		}
		if !q.now().Before(deadline) {
			if err := q.defer1(ctx, r, events.DeferTimeout, "question-timeout/"+requestID); err != nil {
				return nil, err
			}
			continue
		}
		if err := q.until(ctx, after, deadline, sessionID); err != nil {
			return nil, err
		}
	}
}

func (q *Questions) head(ctx context.Context) (uint64, error) {
	if q.c.ports.Feed == nil {
		return 0, nil
	}
	return q.c.ports.Feed.Head(ctx)
}

// until returns when the session's inbox stream gains an event after position after, or at
// deadline, whichever is first; a cancelled ctx is an error.
func (q *Questions) until(ctx context.Context, after uint64, deadline time.Time, sessionID string) error {
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	if q.c.ports.Feed == nil { // no live feed: look again after a short pause
		t := time.NewTimer(min(200*time.Millisecond, time.Until(deadline)))
		defer t.Stop()
		select {
		case <-t.C:
		case <-wctx.Done():
		}
		return ctx.Err()
	}
	stream := commands.JobStream(sessionID)
	_, err := q.c.ports.Feed.Wait(wctx, after, func(r events.Recorded) bool { return r.Stream == stream })
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// defer1 records a deferral against the request's current revision; losing the race to
// another response (stale_revision, question_closed) is no error: the request has had its
// response.
func (q *Questions) defer1(ctx context.Context, r *question.Request, reason, commandID string) error {
	res, _ := q.c.ports.Jobs.HandleQuestion(ctx, &commands.QuestionCommand{
		Meta:      commands.Meta{CommandID: commandID, Actor: "host", CorrelationID: r.SessionID, CausationID: r.RequestID},
		SessionID: r.SessionID, RequestID: r.RequestID,
		Cmd: question.Defer{SessionID: r.SessionID, RequestID: r.RequestID, ExpectedRevision: r.Revision, Reason: reason}})
	switch err := res.Err(); domain.CodeOf(err) {
	case "", domain.CodeStaleRevision, question.CodeQuestionClosed:
		return nil
	default:
		return err
	}
}

// Get returns one request as the log has it (never a lagging read model: a face that answers
// must name the revision the request is at).
func (q *Questions) Get(ctx context.Context, sessionID, requestID string) (*question.Request, error) {
	b, _, err := commands.LoadQuestions(ctx, q.c.ports.Log, q.c.ports.Driver.Registry, sessionID)
	if err != nil {
		return nil, err
	}
	r := b.Get(requestID)
	if r == nil {
		e := domain.NewError(question.CodeQuestionNotFound, fmt.Sprintf("session %s has no question request %s", sessionID, requestID),
			"list the session's questions (zuno question list)")
		e.ID = requestID
		return nil, e
	}
	return r, nil
}

// List returns the session's requests in publication order; open only leaves out the
// answered and voided ones.
func (q *Questions) List(ctx context.Context, sessionID string, open bool) ([]*question.Request, error) {
	if err := q.c.queries.RequireSession(ctx, sessionID); err != nil {
		return nil, err
	}
	b, _, err := commands.LoadQuestions(ctx, q.c.ports.Log, q.c.ports.Driver.Registry, sessionID)
	if err != nil {
		return nil, err
	}
	var out []*question.Request
	for _, r := range b.Requests() {
		if !open || r.Open() {
			out = append(out, r)
		}
	}
	return out, nil
}

// AnswerInputID is the inbox input an answer command admits: derived from the request and
// the command id, so the same command sent again names the same input.
func AnswerInputID(requestID, commandID string) string {
	return "input_" + derived("question-answer", requestID+"/"+commandID)
}

// Answer records a real answer to some or all of a request's items (meta.CommandID is the
// face's command id; expectedRevision the revision it showed). The answer and the inbox input
// that carries it to the model are one append; a session this process runs is woken so that
// its running turn takes the input at its next tool-safe boundary, or a turn of its own
// delivers it.
func (q *Questions) Answer(ctx context.Context, meta commands.Meta, sessionID, requestID string, expectedRevision uint64,
	answers []events.QuestionItemAnswer, source string) (commands.QuestionView, error) {
	if meta.CommandID == "" {
		return commands.QuestionView{}, domain.Invalid("commandId", "is empty", "send a command id: the same id makes a retry safe")
	}
	if err := q.c.queries.RequireSession(ctx, sessionID); err != nil {
		return commands.QuestionView{}, err
	}
	meta.CorrelationID, meta.CausationID = sessionID, requestID
	res, b := q.c.ports.Jobs.HandleQuestion(ctx, &commands.QuestionCommand{Meta: meta, SessionID: sessionID, RequestID: requestID,
		Cmd: question.Answer{SessionID: sessionID, RequestID: requestID, ExpectedRevision: expectedRevision, Answers: answers,
			Source: source, InputID: AnswerInputID(requestID, meta.CommandID)}})
	if err := res.Err(); err != nil {
		return commands.QuestionView{}, err
	}
	// A session this process runs or ran is driven with the answer now; another process's
	// running turn takes it from its inbox watch, and an idle session at its next run
	// (docs/delegation.md, "Peer messages"): a process that only answers (zuno question
	// answer) never runs the session's turn itself.
	j := q.c.jobs()
	j.mu.Lock()
	_, known := j.last[sessionID]
	j.mu.Unlock()
	if known {
		j.wake(sessionID)
	}
	return *commands.ViewOf(b.Get(requestID)), nil
}

// Later releases the wait on a request without answering it (the user's "later", a snooze):
// the request stays open, nothing reaches the model.
func (q *Questions) Later(ctx context.Context, meta commands.Meta, sessionID, requestID string, expectedRevision uint64) (commands.QuestionView, error) {
	if meta.CommandID == "" {
		return commands.QuestionView{}, domain.Invalid("commandId", "is empty", "send a command id: the same id makes a retry safe")
	}
	if err := q.c.queries.RequireSession(ctx, sessionID); err != nil {
		return commands.QuestionView{}, err
	}
	meta.CorrelationID, meta.CausationID = sessionID, requestID
	res, b := q.c.ports.Jobs.HandleQuestion(ctx, &commands.QuestionCommand{Meta: meta, SessionID: sessionID, RequestID: requestID,
		Cmd: question.Defer{SessionID: sessionID, RequestID: requestID, ExpectedRevision: expectedRevision, Reason: events.DeferLater}})
	if err := res.Err(); err != nil {
		return commands.QuestionView{}, err
	}
	return *commands.ViewOf(b.Get(requestID)), nil
}

// Answered reports whether request requestID of the session has a real answer (an answer to
// at least one of its items; a deferral, a snooze, a timeout or a void is none). It is the
// check a wait satisfied only by a real answer to that exact request builds on (the Goal's
// goal_request_input; docs/questions.md).
func (q *Questions) Answered(ctx context.Context, sessionID, requestID string) (bool, error) {
	r, err := q.Get(ctx, sessionID, requestID)
	if err != nil {
		return false, err
	}
	return len(r.Answers) > 0, nil
}

// RequestView is a request as the faces show it (zuno question, the HTTP API).
type RequestView struct {
	RequestID   string                               `json:"requestId"`
	SessionID   string                               `json:"sessionId"`
	Kind        string                               `json:"kind"`
	Mode        string                               `json:"mode"`
	Tool        string                               `json:"tool"`
	CallID      string                               `json:"callId"`
	TurnID      string                               `json:"turnId,omitempty"`
	Agent       string                               `json:"agent,omitempty"`
	Title       string                               `json:"title,omitempty"`
	Status      string                               `json:"status"`
	Revision    uint64                               `json:"revision"`
	Items       []events.QuestionItem                `json:"items"`
	Answers     map[string]events.QuestionItemAnswer `json:"answers"`
	Pending     []string                             `json:"pending"`
	Deferred    string                               `json:"deferred,omitempty"`
	DeferAt     string                               `json:"deferAt,omitempty"`
	CountdownAt string                               `json:"countdownAt,omitempty"`
	Voided      string                               `json:"voided,omitempty"`
	PlanExit    *events.PlanExitBinding              `json:"planExit,omitempty"`
}

// ViewRequest is r as the faces show it.
func ViewRequest(r *question.Request) RequestView {
	pending := r.Pending()
	if pending == nil {
		pending = []string{}
	}
	return RequestView{RequestID: r.RequestID, SessionID: r.SessionID, Kind: r.Kind, Mode: r.Mode, Tool: r.Tool, CallID: r.CallID,
		TurnID: r.TurnID, Agent: r.Agent, Title: r.Title, Status: r.Status(), Revision: r.Revision, Items: r.Items,
		Answers: r.Answers, Pending: pending, Deferred: r.Deferred, DeferAt: r.DeferAt, CountdownAt: r.CountdownAt,
		Voided: r.Voided, PlanExit: r.PlanExit}
}

// ParseAnswers turns a face's item=value pairs into item answers for r: a value that is one
// of the item's option labels selects it, anything else is free text (which the domain
// refuses for an item that takes options only).
func ParseAnswers(r *question.Request, pairs []string) ([]events.QuestionItemAnswer, error) {
	var out []events.QuestionItemAnswer
	for _, p := range pairs {
		id, value, ok := strings.Cut(p, "=")
		if !ok || id == "" {
			return nil, domain.Invalid("answer", fmt.Sprintf("%q is not ITEM=VALUE", p),
				"answer as ITEM=VALUE, for example db=Postgres (the item ids are in zuno question list)")
		}
		a := events.QuestionItemAnswer{ItemID: id, Text: value}
		for _, it := range r.Items {
			if it.ID != id {
				continue
			}
			for _, o := range it.Options {
				if o.Label == value {
					a = events.QuestionItemAnswer{ItemID: id, Selected: []string{value}}
				}
			}
		}
		out = append(out, a)
	}
	return out, nil
}
