package commands

import (
	"context"

	"github.com/zuno-run/zuno/domain/goal"
	"github.com/zuno-run/zuno/domain/verification"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
)

// The Goal of a root session lives in its work stream (docs/goals.md). Every Goal command
// is decided against one revision of that stream, so the Goal, the Plan and the Todo items
// a completion checks are one state; the jobs are read from the session's job ledger just
// before each decision, and the completion records the ledger revision it read.

// UpdateGoal is goal_update (and zuno goal complete, which is an UpdateGoal with status
// complete) for the session SessionID; a child session's call acts on its root's Goal.
type UpdateGoal struct {
	Meta
	SessionID string      `json:"sessionId"`
	Update    goal.Update `json:"update"`
}

// RequestGoalInput is goal_request_input.
type RequestGoalInput struct {
	Meta
	SessionID string            `json:"sessionId"`
	Request   goal.RequestInput `json:"request"`
}

// AnswerGoalInput is a real answer to a Goal's input request: zuno goal answer, or the
// questions' answer port (GoalInputPort).
type AnswerGoalInput struct {
	Meta
	SessionID string      `json:"sessionId"`
	Answer    goal.Answer `json:"answer"`
}

// ResumeGoal is /goal resume.
type ResumeGoal struct {
	Meta
	SessionID string      `json:"sessionId"`
	Resume    goal.Resume `json:"resume"`
}

// ObserveGoal is the auto-continuation driver's observation (host, commands/turn).
type ObserveGoal struct {
	Meta
	SessionID string       `json:"sessionId"`
	Observe   goal.Observe `json:"observe"`
}

func goalView(s *work.State) any { return s.Goal().View() }

// UpdateGoal handles UpdateGoal; the view is the Goal after it.
func (h *Handlers) UpdateGoal(ctx context.Context, c *UpdateGoal) (Result, error) {
	u := c.Update
	return h.goalCommand(ctx, "UpdateGoal", c.Meta, c.SessionID, c, func(root string) any {
		u.SessionID = root
		return u
	}), nil
}

// RequestGoalInput handles RequestGoalInput.
func (h *Handlers) RequestGoalInput(ctx context.Context, c *RequestGoalInput) (Result, error) {
	r := c.Request
	return h.goalCommand(ctx, "RequestGoalInput", c.Meta, c.SessionID, c, func(root string) any {
		r.SessionID = root
		return r
	}), nil
}

// AnswerGoalInput handles AnswerGoalInput.
func (h *Handlers) AnswerGoalInput(ctx context.Context, c *AnswerGoalInput) (Result, error) {
	a := c.Answer
	return h.goalCommand(ctx, "AnswerGoalInput", c.Meta, c.SessionID, c, func(root string) any {
		a.SessionID = root
		return a
	}), nil
}

// ResumeGoal handles ResumeGoal.
func (h *Handlers) ResumeGoal(ctx context.Context, c *ResumeGoal) (Result, error) {
	r := c.Resume
	return h.goalCommand(ctx, "ResumeGoal", c.Meta, c.SessionID, c, func(root string) any {
		r.SessionID = root
		return r
	}), nil
}

// ObserveGoal handles ObserveGoal.
func (h *Handlers) ObserveGoal(ctx context.Context, c *ObserveGoal) (Result, error) {
	o := c.Observe
	return h.goalCommand(ctx, "ObserveGoal", c.Meta, c.SessionID, c, func(root string) any {
		o.SessionID = root
		return o
	}), nil
}

// goalCommand runs a Goal command on the root's work stream. A completion reads the
// barrier's facts again at each decision, so a decision retried after a lost race sees the
// jobs as they are then.
func (h *Handlers) goalCommand(ctx context.Context, name string, meta Meta, sessionID string, body any, cmdOf func(root string) any) Result {
	root, err := RootSession(ctx, h.store, h.registry, sessionID)
	if err != nil {
		return Result{CommandID: meta.CommandID, Stream: WorkStream(sessionID), Revision: -1, Error: NewErrorReply(err)}
	}
	cmd := cmdOf(root)
	x := execution[*work.State]{
		meta: meta, stream: WorkStream(root),
		newState: func() *work.State { return &work.State{} },
		decide: func(s *work.State) ([]events.Payload, error) {
			var f goal.Facts
			if u, ok := cmd.(goal.Update); ok && u.Status == events.GoalComplete {
				var err error
				if f, err = h.barrierFacts(ctx, root, s, u.Evidence); err != nil {
					return nil, err
				}
			}
			return goal.Decide(s.Goal(), cmd, f)
		},
	}
	return h.workAppend(ctx, name, root, x, body, goalView)
}

// barrierFacts reads what the completion barrier checks besides the work state: the root's
// job ledger and the verification receipts the completion cites.
func (h *Handlers) barrierFacts(ctx context.Context, root string, s *work.State, cited map[string]string) (goal.Facts, error) {
	f := goal.Facts{Plans: s.Plans(), Todos: s.Items()}
	l, rev, err := LoadJobs(ctx, h.store, h.registry, root)
	if err != nil {
		return f, err
	}
	f.JobsRevision = rev
	sessions := []string{root}
	for _, j := range l.Jobs() {
		f.Jobs = append(f.Jobs, goal.Job{ID: j.JobID, Status: j.Status, ReportDelivery: j.ReportDelivery,
			ReportInputID: j.ReportInputID, ReportConsumed: j.ReportConsumed})
		sessions = append(sessions, j.ChildSessionID)
	}
	if len(cited) == 0 {
		return f, nil
	}
	f.Receipts, err = h.receipts(ctx, sessions, cited)
	return f, err
}

// receipts finds the cited receipts in the streams of the root and of its jobs' children:
// evidence is what a shell call of this work recorded, not anything the model recalls.
func (h *Handlers) receipts(ctx context.Context, sessions []string, cited map[string]string) (map[string]verification.Receipt, error) {
	want := map[string]bool{}
	for _, id := range cited {
		if verification.ValidReceiptID(id) {
			want[id] = true
		}
	}
	out := map[string]verification.Receipt{}
	seen := map[string]bool{}
	for _, sid := range sessions {
		if len(out) == len(want) {
			break
		}
		if seen[sid] || sid == "" {
			continue
		}
		seen[sid] = true
		_, err := Load(ctx, h.store, h.registry, SessionStream(sid), 0, func(_ events.Recorded, p events.Payload) error {
			if r, ok := p.(events.VerificationReceipt); ok && want[r.ReceiptID] {
				out[r.ReceiptID] = r
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// GoalCommands are the Goal commands as the goal tools and the turn driver call them:
// straight to their handlers, through the metrics decorator.
type GoalCommands struct{ h *Handlers }

// GoalCommands returns the decorated Goal commands.
func (h *Handlers) GoalCommands() GoalCommands { return GoalCommands{h} }

// UpdateGoal handles UpdateGoal, measured.
func (g GoalCommands) UpdateGoal(ctx context.Context, c *UpdateGoal) (Result, error) {
	return Measured(g.h.metrics, "UpdateGoal", g.h.UpdateGoal)(ctx, c)
}

// RequestGoalInput handles RequestGoalInput, measured.
func (g GoalCommands) RequestGoalInput(ctx context.Context, c *RequestGoalInput) (Result, error) {
	return Measured(g.h.metrics, "RequestGoalInput", g.h.RequestGoalInput)(ctx, c)
}

// AnswerGoalInput handles AnswerGoalInput, measured. It is the port the questions' answers
// call for a Goal's input request (docs/goals.md, "Input requests").
func (g GoalCommands) AnswerGoalInput(ctx context.Context, c *AnswerGoalInput) (Result, error) {
	return Measured(g.h.metrics, "AnswerGoalInput", g.h.AnswerGoalInput)(ctx, c)
}

// ResumeGoal handles ResumeGoal, measured.
func (g GoalCommands) ResumeGoal(ctx context.Context, c *ResumeGoal) (Result, error) {
	return Measured(g.h.metrics, "ResumeGoal", g.h.ResumeGoal)(ctx, c)
}

// ObserveGoal handles ObserveGoal, measured.
func (g GoalCommands) ObserveGoal(ctx context.Context, c *ObserveGoal) (Result, error) {
	return Measured(g.h.metrics, "ObserveGoal", g.h.ObserveGoal)(ctx, c)
}

// Work reads the authoritative work state, Goal included (a read: not measured).
func (g GoalCommands) Work(ctx context.Context, sessionID string) (*work.State, error) {
	return g.h.Work(ctx, sessionID)
}

// GoalInputPort is what the questions' answer path calls for a Goal's input request
// (docs/goals.md, "Input requests"): which request the session's Goal waits on, and the
// answer to it. Only an answer naming that exact request satisfies the wait.
type GoalInputPort interface {
	GoalWaiting(ctx context.Context, sessionID string) (*events.GoalInputRequest, error)
	AnswerGoalInput(ctx context.Context, c *AnswerGoalInput) (Result, error)
}

var _ GoalInputPort = GoalCommands{}

// GoalWaiting is the open input request of the session's Goal (of its root), nil when the
// Goal waits on none.
func (g GoalCommands) GoalWaiting(ctx context.Context, sessionID string) (*events.GoalInputRequest, error) {
	st, err := g.h.Work(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if gl := st.Goal().Goal(); gl != nil && gl.Waiting != nil {
		w := *gl.Waiting
		return &w, nil
	}
	return nil, nil
}
