package app

import (
	"context"
	"fmt"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/question"
	"github.com/zuno-run/zuno/events"
)

// Why a plan_exit approval does not authorise (Approval.Reason), and the void reasons.
const (
	PlanExitNotApproved     = "not_approved"     // no answer yet, or rejected
	PlanExitAwaitingHandoff = "awaiting_handoff" // approved early: the source Plan turn has not finished
	PlanExitPlanChanged     = "plan_changed"     // the Plan's id or revision moved since the request
	PlanExitIdentityChanged = "identity_changed" // a later turn runs another agent or model
	PlanExitTurnInterrupted = "turn_interrupted" // the source Plan turn ended other than completed
	PlanExitVoided          = "voided"           // voided before
	CodeNotPlanExit         = "question_not_plan_exit"
)

// Approval is whether a plan_exit request authorises the Plan it showed now.
type Approval struct {
	RequestID string                  `json:"requestId"`
	Decision  string                  `json:"decision,omitempty"`
	Effective bool                    `json:"effective"`
	Reason    string                  `json:"reason,omitempty"`
	Binding   *events.PlanExitBinding `json:"binding"`
}

// PlanExitApproval judges a plan_exit request now (seeds 000): only an explicit approve
// authorises, and only the exact Plan revision and agent/model identity it showed; an early
// approval takes effect once the source Plan turn finished completed. A Plan change, an
// identity change or an interrupted source turn voids the request, recorded as
// question.voided.1 so that every face sees it closed.
func (q *Questions) PlanExitApproval(ctx context.Context, sessionID, requestID string) (Approval, error) {
	r, err := q.Get(ctx, sessionID, requestID)
	if err != nil {
		return Approval{}, err
	}
	if r.Kind != events.QuestionKindPlanExit || r.PlanExit == nil {
		e := domain.NewError(CodeNotPlanExit, fmt.Sprintf("request %s is not a plan_exit request", requestID), "judge a plan_exit request")
		e.ID = requestID
		return Approval{}, e
	}
	a := Approval{RequestID: requestID, Decision: r.Decision(), Binding: r.PlanExit}
	if r.Voided != "" {
		a.Reason = PlanExitVoided + ": " + r.Voided
		return a, nil
	}
	void, err := q.planExitVoid(ctx, sessionID, r.PlanExit)
	if err != nil {
		return a, err
	}
	if void != "" {
		a.Reason = void
		res, _ := q.c.ports.Jobs.HandleQuestion(ctx, &commands.QuestionCommand{
			Meta:      commands.Meta{CommandID: "question-void/" + requestID, Actor: "host", CorrelationID: sessionID, CausationID: requestID},
			SessionID: sessionID, RequestID: requestID, Cmd: question.Void{SessionID: sessionID, RequestID: requestID, Reason: void}})
		return a, res.Err()
	}
	switch finished, reason, err := q.turnEnd(ctx, sessionID, r.PlanExit.TurnID); {
	case err != nil:
		return a, err
	case a.Decision != question.Approve:
		a.Reason = PlanExitNotApproved
	case !finished:
		a.Reason = PlanExitAwaitingHandoff
	case reason == "completed":
		a.Effective = true
	}
	return a, nil
}

// planExitVoid is why the binding no longer holds, "" while it does: the focused Plan and its
// revision, the identity of the session's latest turn, and how the source turn ended.
func (q *Questions) planExitVoid(ctx context.Context, sessionID string, b *events.PlanExitBinding) (string, error) {
	st, err := q.c.ports.Work(ctx, sessionID)
	if err != nil {
		return "", err
	}
	if v := st.PlanView(); v == nil || v.PlanID != b.PlanID || st.PlanRevision() != b.PlanRevision {
		return PlanExitPlanChanged, nil
	}
	agentName, model, err := q.latestIdentity(ctx, sessionID)
	if err != nil {
		return "", err
	}
	if agentName != b.Agent || model != b.Model {
		return PlanExitIdentityChanged, nil
	}
	finished, reason, err := q.turnEnd(ctx, sessionID, b.TurnID)
	if err != nil {
		return "", err
	}
	if finished && reason != "completed" {
		return PlanExitTurnInterrupted, nil
	}
	return "", nil
}

// Identity is a turn's agent and model ("provider/model") as its turn.started records them.
func Identity(t events.TurnStarted) (agentName, model string) {
	return t.Agent, t.Provider + "/" + t.Model
}

func (q *Questions) latestIdentity(ctx context.Context, sessionID string) (string, string, error) {
	var last events.TurnStarted
	_, err := commands.Load(ctx, q.c.ports.Log, q.c.ports.Driver.Registry, commands.SessionStream(sessionID), 0,
		func(_ events.Recorded, p events.Payload) error {
			if t, ok := p.(events.TurnStarted); ok {
				last = t
			}
			return nil
		})
	a, m := Identity(last)
	return a, m, err
}

// turnEnd is whether turnID finished and why.
func (q *Questions) turnEnd(ctx context.Context, sessionID, turnID string) (bool, string, error) {
	finished, reason := false, ""
	_, err := commands.Load(ctx, q.c.ports.Log, q.c.ports.Driver.Registry, commands.SessionStream(sessionID), 0,
		func(_ events.Recorded, p events.Payload) error {
			if f, ok := p.(events.TurnFinished); ok && f.TurnID == turnID {
				finished, reason = true, f.Reason
			}
			return nil
		})
	return finished, reason, err
}
