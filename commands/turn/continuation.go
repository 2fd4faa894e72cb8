package turn

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/bgtask"
	"github.com/zuno-run/zuno/domain/goal"
	"github.com/zuno-run/zuno/domain/job"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
)

// The work state's refresh and the Goal's auto-continuation (docs/goals.md).

// CodeWorkStateUnavailable: the durable work state could not be read again before a
// request; the turn stops rather than send a snapshot it knows may be stale.
const CodeWorkStateUnavailable = "work_state_unavailable"

// CodeNoProgress: an active Goal's continuation observed the same durable work state
// goal.NoProgressRepeats times in a row after a final answer.
const CodeNoProgress = "no_progress"

// Finish reasons of a turn whose final answer left an active Goal: no progress, or only
// background work left, which wakes the session when it ends.
const (
	FinishNoProgress        = events.ProgressNoProgress
	FinishWaitingBackground = events.ProgressWaitingBackground
)

// refreshWork folds what the root's work stream gained since it was read: the Plan, Todo
// and Goal tools, and a user's zuno plan|todo|goal, change it between steps. It runs
// before every request (one read from the last revision, nothing when nothing changed), so
// the work state a request shows is never older than the request.
func (r *run) refreshWork(ctx context.Context) error {
	if err := r.readWork(ctx); err != nil {
		return domain.NewError(CodeWorkStateUnavailable, "the durable work state could not be read before the request: "+err.Error(),
			"nothing was sent; continue the session with zuno run --session once the store answers again")
	}
	return nil
}

// workStateReceipt is the previous prompt receipt runtime.work_state names: the receipt of
// the step before the work state last changed (or of the first step that had one). Naming
// the latest receipt at every step would make the section differ at every step, and a
// section that differs invalidates every prefix cache after it: the request's History and
// digest, the provider's conversation check, the provider's prompt cache. A step after 1,000
// steps then costs twice one after 10 (docs/goals.md, "Benchmarks"). Every receipt still
// names its predecessor in the receipt chain.
func (r *run) workStateReceipt() string {
	if now := [2]int64{r.workRevision, r.jobsRevision}; r.shownReceipt == "" || r.shownRevisions != now {
		r.shownReceipt, r.shownRevisions = r.prevID, now
	}
	return r.shownReceipt
}

// promptGoal is the Goal as runtime.work_state shows it, nil when the session never had one.
func promptGoal(w *work.State) *prompt.Goal {
	gs := w.Goal()
	g := gs.Goal()
	if g == nil {
		return nil
	}
	return &prompt.Goal{ID: g.GoalID, Revision: gs.Revision(), Status: g.Status, Objective: g.Objective,
		OwnerTurnID: g.OwnerTurnID, Criteria: g.Criteria, Waiting: g.Waiting}
}

// afterFinal decides what a final answer (a response without tool calls) does. An ordinary
// final ends the turn: no extra request, and the Plan and Todos stay as they are. Only an
// active Goal owned by this turn (or by none: a resumed one), with work to do now
// (goal.Actionable) or running in the background, continues it, one host message at a time, each after a durable observation of the work state's fingerprint; the third
// identical observation ends it with no_progress, and background work that will wake the
// session ends it with waiting_background.
func (r *run) afterFinal(ctx context.Context, out *Outcome) (bool, error) {
	if r.workRoot != r.req.SessionID { // a delegated child reports to its parent; the Goal is the root's
		return true, r.finish(ctx, out, events.FinishCompleted, nil)
	}
	if err := r.refreshWork(ctx); err != nil {
		return true, r.finish(ctx, out, events.FinishFailed, errorInfo(err))
	}
	if !r.work.Goal().Continues(r.turnID) {
		return true, r.finish(ctx, out, events.FinishCompleted, nil)
	}
	if _, background, err := r.progress(ctx); err != nil {
		return true, err
	} else if !background && !goal.Actionable(r.work.Plans(), r.work.Items()) {
		// Nothing to do now and nothing running: continuing would only ask the model again.
		return true, r.finish(ctx, out, events.FinishCompleted, nil)
	}
	obs, err := r.observeGoal(ctx)
	if err != nil {
		return true, err
	}
	switch obs.Outcome {
	case events.ProgressNoProgress:
		return true, r.finish(ctx, out, FinishNoProgress, &events.ErrorInfo{Code: CodeNoProgress,
			Message: fmt.Sprintf("the Goal's work state did not change over %d final answers in a row", obs.Repeats),
			Fix:     "record progress in the Plan, Todos or Goal, complete or pause the Goal, or give new input with zuno run --session"})
	case events.ProgressWaitingBackground:
		return true, r.finish(ctx, out, FinishWaitingBackground, nil)
	}
	return false, r.continueGoal(ctx, obs)
}

// observeGoal records one observation of the work state on the work stream, deciding it
// against the revision read last; another writer's event in between is read and the
// observation decided again.
func (r *run) observeGoal(ctx context.Context) (events.GoalProgressObserved, error) {
	for attempt := 1; ; attempt++ {
		fp, background, err := r.progress(ctx)
		if err != nil {
			return events.GoalProgressObserved{}, err
		}
		cmd := goal.Observe{SessionID: r.workRoot, TurnID: r.turnID, Fingerprint: fp, Background: background}
		ps, err := goal.Decide(r.work.Goal(), cmd, goal.Facts{})
		if err != nil {
			return events.GoalProgressObserved{}, err
		}
		id := fmt.Sprintf("goal-observe/%s/%d", r.turnID, r.tr.Steps)
		dg, err := commands.Digest("ObserveGoal", cmd)
		if err != nil {
			return events.GoalProgressObserved{}, err
		}
		w := commands.Writer{Store: r.d.Store, Stream: commands.WorkStream(r.workRoot), Clock: r.d.Clock, Digest: dg,
			Meta: commands.Meta{CommandID: id, Actor: "host", CorrelationID: r.req.SessionID, CausationID: r.turnID}, Revision: r.workRevision}
		_, err = w.Append(context.WithoutCancel(ctx), ps...)
		var wrong *events.WrongExpectedRevisionError
		if errors.As(err, &wrong) && attempt < commands.MaxDecideAttempts {
			if err := r.refreshWork(ctx); err != nil {
				return events.GoalProgressObserved{}, err
			}
			continue
		}
		if err != nil {
			return events.GoalProgressObserved{}, err
		}
		if err := r.readWork(ctx); err != nil {
			return events.GoalProgressObserved{}, err
		}
		return ps[0].(events.GoalProgressObserved), nil
	}
}

// progress is the fingerprint of the durable work state (the Goal without its owner, the
// Plan, the Todos and the session's jobs) and whether what remains is background work:
// a job queued or running, or a background command still running, while the work is not
// finished.
func (r *run) progress(ctx context.Context) (string, bool, error) {
	ledger, _, err := commands.LoadJobs(ctx, r.d.Store, r.d.Registry, r.req.SessionID)
	if err != nil {
		return "", false, err
	}
	var bg bgtask.State
	if _, err := commands.Load(ctx, r.d.Store, r.d.Registry, commands.BackgroundStream(r.req.SessionID), 0,
		func(_ events.Recorded, p events.Payload) error { return bg.Evolve(p) }); err != nil {
		return "", false, err
	}
	facts := goal.Facts{Plans: r.work.Plans(), Todos: r.work.Items()}
	running := false
	for _, j := range ledger.Jobs() {
		facts.Jobs = append(facts.Jobs, barrierJob(j))
		running = running || j.Status == events.JobQueued || j.Status == events.JobRunning
	}
	for _, t := range bg.Tasks() {
		running = running || t.Completion == nil
	}
	view := r.work.Goal().View()
	if view != nil {
		v := *view
		v.OwnerTurnID = "" // claiming the Goal is not progress
		view = &v
	}
	b, err := json.Marshal(struct {
		Goal  *goal.View     `json:"goal"`
		Plan  *work.PlanView `json:"plan"`
		Todos work.TodoView  `json:"todos"`
		Jobs  []goal.Job     `json:"jobs"`
	}{view, r.work.PlanView(), r.work.TodoView(), facts.Jobs})
	if err != nil {
		return "", false, err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), running && len(goal.Blockers(facts)) > 0, nil
}

func barrierJob(j *job.Job) goal.Job {
	return goal.Job{ID: j.JobID, Status: j.Status, ReportDelivery: j.ReportDelivery, ReportInputID: j.ReportInputID,
		ReportConsumed: j.ReportConsumed}
}

// ContinuationText is the host message that continues a turn owning an active Goal.
func ContinuationText(goalID string, revision uint64, repeats int) string {
	return fmt.Sprintf("[zuno host] The Goal %s (revision %d) is still active and this turn owns it: continue working "+
		"toward its objective. When every criterion is met and nothing blocks, complete it with goal_update status=complete, "+
		"citing [verification rcp_…] ids for the criteria that need evidence. If the user's input is required, call "+
		"goal_request_input; if the Goal cannot go on, set status=paused and say why. Progress check %d of %d: the durable "+
		"work state (Goal, Plan, Todos, jobs) must change between final answers, or the continuation stops with no_progress.",
		goalID, revision, repeats, goal.NoProgressRepeats)
}

// continueGoal records the continuation as a host message of the turn, durable before the
// next request is assembled from it.
func (r *run) continueGoal(ctx context.Context, obs events.GoalProgressObserved) error {
	msgID := "msg_" + derivedHex("goal-continuation", fmt.Sprintf("%s\n%d", r.req.Meta.CommandID, r.tr.Steps))
	msg := session.AppendUserMessage{SessionID: r.req.SessionID, MessageID: msgID,
		Text: ContinuationText(obs.GoalID, r.work.Goal().Revision(), obs.Repeats)}
	ps, err := session.Decide(&r.sess, msg)
	for _, p := range ps {
		if err == nil {
			err = r.sess.Evolve(p)
		}
	}
	if err == nil {
		err = r.stage(ps...)
	}
	if err != nil {
		return err
	}
	actor := r.w.ActorOf
	r.w.ActorOf = func(p events.Payload) string {
		if m, ok := p.(events.UserMessageAppended); ok && m.MessageID == msgID {
			return "host" // the host continues the Goal; no user said this
		}
		return actor(p)
	}
	defer func() { r.w.ActorOf = actor }()
	return r.commit(ctx)
}
