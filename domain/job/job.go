// Package job is the job ledger of one parent session (stream "jobs-<parentSessionId>"): the
// agent jobs it delegated with the task tool and the reports they deliver to its inbox
// (docs/delegation.md). Every rule that spans a parent's jobs is decided here against one
// revision: one logical task at a time (seeds 002 §7.5), a child continued only by its own
// parent, a job settled once, an uncertain job reconciled only on an authority's word.
package job

import (
	"fmt"
	"slices"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/events"
)

// Error codes of the ledger's refusals.
const (
	// CodeDuplicateTask: the same agent and contract is already delegated and not done with.
	CodeDuplicateTask = "duplicate_task"
	// CodeJobNotFound: no job of this parent has that id.
	CodeJobNotFound = "job_not_found"
	// CodeJobState: the job is not in a state the command applies to.
	CodeJobState = "job_state"
	// CodeNotYourChild: task_id names a session that is not a child of this parent.
	CodeNotYourChild = "not_your_child"
)

// Job is one job as the ledger holds it.
type Job struct {
	events.JobState
	Contract       events.DelegationContract
	Result         *events.TaskReport
	Error          string
	ReportConsumed bool
	// Owner is the process that started the job's child (job.started.1).
	Owner events.TurnOwner
	// ParentTurnID is the turn whose task call admitted the job, ParentRequestID the
	// provider request whose response made that call.
	ParentTurnID, ParentRequestID string
	// WorkContext is the Plan step the job works for, captured at admission; nil when the
	// parent had no current plan.
	WorkContext *events.WorkContext
	// Reconciliation is the authority that settled the job once it was uncertain; empty
	// when it never was.
	Reconciliation string
}

// Ledger is the jobs of one parent. The zero value has none; Evolve it with the stream's
// events in order. Decide never changes it.
type Ledger struct {
	jobs  map[string]*Job
	order []string
	// messages are the peer messages admitted to this session's inbox, in order.
	messages []*Message
}

// Message is one peer message of the inbox (session_message).
type Message struct {
	events.InboxMessageAdmitted
	Consumed bool
}

// Messages returns the inbox's peer messages in admission order; read them, never change them.
func (l *Ledger) Messages() []*Message { return l.messages }

// AdmitMessage admits a peer message to the inbox; an input admitted already is not again.
type AdmitMessage struct {
	events.InboxMessageAdmitted
}

// ConsumeMessage records that the session's transcript holds the peer message InputID.
type ConsumeMessage struct {
	InputID, MessageID string
}

// Job returns the job with id, nil when the ledger has none.
func (l *Ledger) Job(id string) *Job { return l.jobs[id] }

// Jobs returns the jobs in admission order; read them, never change them.
func (l *Ledger) Jobs() []*Job {
	out := make([]*Job, 0, len(l.order))
	for _, id := range l.order {
		out = append(out, l.jobs[id])
	}
	return out
}

// Blocking reports whether j still holds its logical task (seeds 002 §7.5): queued, running
// or uncertain, or ended with a nextStep report the parent has not consumed.
func (j *Job) Blocking() bool {
	switch j.Status {
	case events.JobQueued, events.JobRunning, events.JobUncertain:
		return true
	}
	return j.ReportDelivery == events.DeliveryNextStep && j.ReportInputID != "" && !j.ReportConsumed
}

// Terminal reports whether a status ends a job (uncertain does not: it waits for
// reconciliation).
func Terminal(status string) bool {
	return status == events.JobCompleted || status == events.JobFailed || status == events.JobCancelled
}

// Evolve applies one event of the ledger's stream.
func (l *Ledger) Evolve(p events.Payload) error {
	if l.jobs == nil {
		l.jobs = map[string]*Job{}
	}
	switch e := p.(type) {
	case events.JobAdmitted:
		l.jobs[e.JobID] = &Job{JobState: e.JobState, Contract: e.Contract, ParentTurnID: e.ParentTurnID, ParentRequestID: e.ParentRequestID,
			WorkContext: e.WorkContext}
		l.order = append(l.order, e.JobID)
	case events.JobStarted:
		return l.update(e.JobState, func(j *Job) { j.Owner = e.Owner })
	case events.JobSettled:
		return l.update(e.JobState, func(j *Job) { j.Result, j.Error = e.Result, e.Error })
	case events.JobReportAdmitted:
		return l.update(e.JobState, func(j *Job) { j.ReportConsumed = false })
	case events.JobReportConsumed:
		return l.update(e.JobState, func(j *Job) { j.ReportConsumed = true })
	case events.JobReconciled:
		return l.update(e.JobState, func(j *Job) { j.Error, j.Result, j.Reconciliation = e.Error, &e.Result, e.Authority })
	case events.InboxMessageAdmitted:
		l.messages = append(l.messages, &Message{InboxMessageAdmitted: e})
	case events.InboxMessageConsumed:
		if m := l.message(e.InputID); m != nil {
			m.Consumed = true
		}
	default:
		if events.IsQuestionEvent(p) { // questions share the inbox stream (docs/questions.md)
			return nil
		}
		return domain.UnexpectedEvent("job ledger", p)
	}
	return nil
}

func (l *Ledger) update(st events.JobState, more func(*Job)) error {
	j := l.jobs[st.JobID]
	if j == nil {
		return fmt.Errorf("job ledger: event for unknown job %s", st.JobID)
	}
	j.JobState = st
	if more != nil {
		more(j)
	}
	return nil
}

// Admit admits one job (seeds 002 §7.5): refused while a job of the same logical key blocks,
// or when TaskID names a session this parent never delegated to.
type Admit struct {
	events.JobAdmitted
}

// Start records that the job's child turn began in Owner's process.
type Start struct {
	JobID string
	Owner events.TurnOwner
}

// Settle ends a queued or running job. InputID, for a nextStep job that reports, admits its
// report to the parent's inbox in the same append.
type Settle struct {
	JobID     string
	Status    string
	Result    *events.TaskReport
	Error     string
	Recovered bool
	InputID   string
}

// Consume records that the parent's transcript holds the report InputID.
type Consume struct {
	JobID, InputID, MessageID string
}

// Reconcile settles an uncertain job on an authority's word; InputID admits the replacement
// report of a nextStep job.
type Reconcile struct {
	events.JobReconciled
	Result  events.TaskReport
	InputID string
}

// Decide returns the events cmd appends, or the typed refusal.
func Decide(l *Ledger, cmd any) ([]events.Payload, error) {
	switch c := cmd.(type) {
	case Admit:
		return l.admit(c)
	case Start:
		j, err := l.find(c.JobID, events.JobQueued)
		if err != nil {
			return nil, err
		}
		st := j.JobState
		st.Status = events.JobRunning
		return []events.Payload{events.JobStarted{JobState: st, Owner: c.Owner}}, nil
	case Settle:
		return l.settle(c)
	case Consume:
		return l.consume(c)
	case Reconcile:
		return l.reconcile(c)
	case AdmitMessage:
		if l.message(c.InputID) != nil {
			return nil, nil
		}
		return []events.Payload{c.InboxMessageAdmitted}, nil
	case ConsumeMessage:
		m := l.message(c.InputID)
		if m == nil || m.Consumed {
			return nil, nil
		}
		return []events.Payload{events.InboxMessageConsumed{SessionID: m.SessionID, InputID: c.InputID, MessageID: c.MessageID}}, nil
	}
	return nil, fmt.Errorf("job ledger: unknown command %T", cmd)
}

func (l *Ledger) admit(c Admit) ([]events.Payload, error) {
	if l.jobs[c.JobID] != nil {
		return nil, stateError(l.jobs[c.JobID], "is admitted already")
	}
	for _, id := range l.order {
		j := l.jobs[id]
		if j.LogicalKey == c.LogicalKey && (j.Blocking() || sameResponse(j, c.JobAdmitted)) {
			e := domain.NewError(CodeDuplicateTask,
				fmt.Sprintf("the same task (agent %s, same contract) is job %s, which is %s", j.Agent, j.JobID, blockingWhy(j)),
				"wait for its report (it arrives as your next input), read it with the job tool, or send a different contract")
			e.ID = j.JobID
			return nil, e
		}
	}
	if c.Continued {
		if !l.childOf(c.ChildSessionID) {
			e := domain.NewError(CodeNotYourChild, fmt.Sprintf("task_id %s is not a child session of this session", c.ChildSessionID),
				"send task_id only with the sessionId of a task this session delegated (the job tool lists them), or leave it out to start a new child")
			e.Field = "task_id"
			return nil, e
		}
		if busy := l.running(c.ChildSessionID); busy != nil {
			return nil, stateError(busy, "still runs that child; wait for it before continuing the child")
		}
	}
	st := c.JobState
	st.Status = events.JobQueued
	c.JobAdmitted.JobState = st
	return []events.Payload{c.JobAdmitted}, nil
}

// sameResponse: the job was asked for by the same provider response, which the seeds count
// as one logical task even after the first call's foreground child finished (seeds 002 §7.5).
func sameResponse(j *Job, c events.JobAdmitted) bool {
	return c.ParentRequestID != "" && j.ParentRequestID == c.ParentRequestID
}

func blockingWhy(j *Job) string {
	if Terminal(j.Status) && j.ReportDelivery == events.DeliveryNextStep && !j.ReportConsumed {
		return j.Status + " with a report you have not read yet"
	}
	if Terminal(j.Status) {
		return j.Status + ", asked for by this same response: its result is the other call's"
	}
	return j.Status
}

func (l *Ledger) childOf(session string) bool {
	for _, j := range l.jobs {
		if j.ChildSessionID == session {
			return true
		}
	}
	return false
}

func (l *Ledger) running(session string) *Job {
	for _, id := range l.order {
		if j := l.jobs[id]; j.ChildSessionID == session && (j.Status == events.JobQueued || j.Status == events.JobRunning) {
			return j
		}
	}
	return nil
}

func (l *Ledger) settle(c Settle) ([]events.Payload, error) {
	j, err := l.find(c.JobID, events.JobQueued, events.JobRunning)
	if err != nil {
		return nil, err
	}
	if !slices.Contains([]string{events.JobCompleted, events.JobFailed, events.JobCancelled, events.JobUncertain}, c.Status) {
		return nil, fmt.Errorf("job ledger: settle %s as %q", c.JobID, c.Status)
	}
	st := j.JobState
	st.Status = c.Status
	out := []events.Payload{}
	reports := c.InputID != "" && c.Result != nil && j.ReportDelivery == events.DeliveryNextStep
	if reports {
		st.ReportInputID = c.InputID
	}
	out = append(out, events.JobSettled{JobState: st, Result: c.Result, Error: c.Error, Recovered: c.Recovered})
	if reports {
		out = append(out, events.JobReportAdmitted{JobState: st, InputID: c.InputID, Report: *c.Result})
	}
	return out, nil
}

func (l *Ledger) consume(c Consume) ([]events.Payload, error) {
	j := l.jobs[c.JobID]
	if j == nil {
		return nil, NotFound(c.JobID)
	}
	if j.ReportInputID != c.InputID || j.ReportConsumed {
		return nil, nil // an older report, or consumed already: nothing to record
	}
	return []events.Payload{events.JobReportConsumed{JobState: j.JobState, InputID: c.InputID, MessageID: c.MessageID}}, nil
}

func (l *Ledger) reconcile(c Reconcile) ([]events.Payload, error) {
	j, err := l.find(c.JobID, events.JobUncertain)
	if err != nil {
		return nil, err
	}
	st := j.JobState
	st.Status = c.Outcome
	replaced := st.ReportInputID
	if j.ReportDelivery == events.DeliveryNextStep && c.InputID != "" {
		st.ReportInputID = c.InputID
	}
	rec := c.JobReconciled
	rec.JobState, rec.Result = st, c.Result
	out := []events.Payload{rec}
	if j.ReportDelivery == events.DeliveryNextStep && c.InputID != "" {
		out = append(out, events.JobReportAdmitted{JobState: st, InputID: c.InputID, Report: c.Result, Replaces: replaced})
	}
	return out, nil
}

// find returns the job, refused unless its status is one of want.
func (l *Ledger) find(id string, want ...string) (*Job, error) {
	j := l.jobs[id]
	if j == nil {
		return nil, NotFound(id)
	}
	if !slices.Contains(want, j.Status) {
		return nil, stateError(j, fmt.Sprintf("is %s, not %s", j.Status, joinOr(want)))
	}
	return j, nil
}

// NotFound is the refusal of a job id this parent does not have (the job tool, job_reconcile).
func NotFound(id string) *domain.Error {
	e := domain.NewError(CodeJobNotFound, fmt.Sprintf("this session has no job %s", id),
		"send a jobID the job tool lists for this session")
	e.Field, e.ID = "jobID", id
	return e
}

func stateError(j *Job, why string) *domain.Error {
	e := domain.NewError(CodeJobState, fmt.Sprintf("job %s %s", j.JobID, why), "read the job with the job tool and act on its status")
	e.ID = j.JobID
	return e
}

func joinOr(s []string) string {
	switch len(s) {
	case 1:
		return s[0]
	case 2:
		return s[0] + " or " + s[1]
	}
	return fmt.Sprint(s)
}

func (l *Ledger) message(input string) *Message {
	for _, m := range l.messages {
		if m.InputID == input {
			return m
		}
	}
	return nil
}
