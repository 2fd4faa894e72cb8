package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/delegation"
	"github.com/zuno-run/zuno/domain/job"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// Jobs is the job runtime of this process (docs/delegation.md): it admits the task tool's
// jobs to the parent's ledger, runs their children (a foreground one in the calling turn, a
// background one on its own goroutine, at most concurrency.delegations at a time), settles
// them with their reports, and wakes the parent for a nextStep report. Every step is an
// append to the parent's job ledger first; this process's memory only says which turns and
// jobs it is running now.
type Jobs struct {
	c     *Commands
	slots chan struct{}

	mu sync.Mutex
	// comps are the compositions of the turns this process runs, by session: a child
	// inherits its parent turn's (seeds 002 §5).
	comps map[string]composition
	// wakes are the (session, input) wakes in flight (seeds 002 §7.1); missed are the
	// sessions a report arrived for while their turn ran here; last is each session's
	// latest composition, which the turn that delivers a report runs with.
	wakes map[string]bool
	// taken are the inputs a running turn claimed (Take) until it recorded them.
	taken  map[string]*input
	missed map[string]bool
	// delivering are the sessions a deliverer runs for; true when a wake asked it to look
	// again.
	delivering map[string]bool
	// running are the jobs this process admitted and has not settled.
	running map[string]bool
	last    map[string]composition
	// work counts the background jobs and wakes this process has in flight; idle is
	// signalled whenever it drops.
	work int
	idle *sync.Cond
	// background is the context of background children; stop cancels it (Settle, when the
	// run is stopped), and stopped then keeps their reports from starting new turns.
	background context.Context
	stop       context.CancelFunc
	stopped    bool
}

// composition is what a turn ran with, for the children it delegates.
type composition struct {
	model       string // the model spec, as RunTurn takes it
	agent       agent.Agent
	offered     []string
	dir         string
	interactive bool
	observer    turn.Observer
}

// CodeNotDelegating: the task tool was called outside a turn this process runs.
const CodeNotDelegating = "not_delegating"

func (c *Commands) jobs() *Jobs {
	c.jobsOnce.Do(func() {
		n := c.settings.Delegations
		if n == 0 {
			n = tools.DefaultDelegations
		}
		c.jobRuntime = &Jobs{c: c, slots: make(chan struct{}, n), comps: map[string]composition{}, wakes: map[string]bool{},
			missed: map[string]bool{}, taken: map[string]*input{}, delivering: map[string]bool{}, last: map[string]composition{}, running: map[string]bool{}}
		c.jobRuntime.idle = sync.NewCond(&c.jobRuntime.mu)
		c.jobRuntime.background, c.jobRuntime.stop = context.WithCancel(context.Background())
		c.jobsMade.Store(true)
	})
	return c.jobRuntime
}

// Jobs is the job runtime, the task, job and job_reconcile tools' port.
func (c *Commands) Jobs() *Jobs { return c.jobs() }

// composed records the composition of a turn of session while it runs.
func (j *Jobs) composed(session string, comp composition) (done func()) {
	j.mu.Lock()
	j.comps[session], j.last[session] = comp, comp
	j.mu.Unlock()
	unwatch := j.watchInbox(session)
	return func() {
		unwatch()
		j.mu.Lock()
		delete(j.comps, session)
		j.mu.Unlock()
		j.afterTurn(session)
	}
}

func (j *Jobs) composition(session string) (composition, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	comp, ok := j.comps[session]
	if !ok {
		return comp, domain.NewError(CodeNotDelegating, "task was called outside a running turn of this process",
			"delegate from a turn: the task tool runs only inside one")
	}
	return comp, nil
}

// compositionOf is the composition of session's turn running in this process.
func (j *Jobs) compositionOf(session string) (composition, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	comp, ok := j.comps[session]
	return comp, ok
}

// Delegate admits one task call's job and, for a foreground task, runs the child to its end.
func (j *Jobs) Delegate(ctx context.Context, inv tools.Invocation, req delegation.Request) (delegation.Outcome, error) {
	comp, err := j.composition(inv.SessionID)
	if err != nil {
		return delegation.Outcome{}, err
	}
	if err := delegation.Check(req, comp.agent.Delegates); err != nil {
		return delegation.Outcome{}, err
	}
	if err := j.checkDepth(ctx, inv.SessionID); err != nil {
		return delegation.Outcome{}, err
	}
	adm, err := j.admission(ctx, inv, req)
	if err != nil {
		return delegation.Outcome{}, err
	}
	// The job is this process's before its admission is durable: a Recover of the same parent
	// (another of its turns starting here) that reads the admission must not judge it lost.
	claimed := j.claim(adm.JobID)
	res, ledger := j.c.ports.Jobs.HandleJob(ctx, &commands.JobCommand{Meta: jobMeta("job-admit/"+adm.JobID, inv.SessionID, inv.CallID),
		ParentSessionID: inv.SessionID, Cmd: job.Admit{JobAdmitted: adm}})
	if err := res.Err(); err != nil || res.Duplicate {
		if claimed {
			j.unclaim(adm.JobID)
		}
		if err != nil {
			return delegation.Outcome{}, err
		}
		// The call ran before (a re-executed call): answer with its job as it is now.
		return j.outcomeOf(ledger.Job(adm.JobID)), nil
	}
	if !req.Background {
		return j.run(ctx, comp, adm)
	}
	j.begin()
	go func() {
		defer j.end()
		// A background child outlives the turn that started it, not the process's run: Settle
		// cancels it when the run is stopped, and it settles cancelled.
		_, _ = j.run(j.background, comp, adm) // its outcome is in the ledger
	}()
	return delegation.Outcome{JobID: adm.JobID, SessionID: adm.ChildSessionID, Status: events.JobQueued}, nil
}

// claim marks a job as run by this process; false when it already was.
func (j *Jobs) claim(id string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.running[id] {
		return false
	}
	j.running[id] = true
	return true
}

func (j *Jobs) unclaim(id string) {
	j.mu.Lock()
	delete(j.running, id)
	j.mu.Unlock()
}

// admission is the job a task call asks for: its id derives from the call, so the same
// call executed again is the same job.
func (j *Jobs) admission(ctx context.Context, inv tools.Invocation, req delegation.Request) (events.JobAdmitted, error) {
	id := "job_" + derived("job", inv.SessionID+"/"+inv.CallID)
	delivery := req.Delivery()
	adm := events.JobAdmitted{JobState: events.JobState{JobID: id, ParentSessionID: inv.SessionID,
		ChildSessionID: "ses_" + derived("child", id), Agent: req.Contract.Agent, Background: req.Background,
		ReportDelivery: delivery, LogicalKey: delegation.LogicalKey(req.Contract)},
		Contract: req.Contract, ParentTurnID: inv.TurnID, ParentRequestID: inv.RequestID, ToolCallID: inv.CallID}
	if req.TaskID != "" {
		adm.ChildSessionID, adm.Continued = req.TaskID, true
		last, err := commands.Load(ctx, j.c.ports.Log, j.c.ports.Driver.Registry, commands.SessionStream(req.TaskID), 0,
			func(events.Recorded, events.Payload) error { return nil })
		if err != nil {
			return adm, err
		}
		adm.EvidenceFrom = uint64(last + 1) // the child's events so far are its earlier jobs' evidence
	}
	wc, err := j.workContext(ctx, inv.SessionID)
	adm.WorkContext = wc
	return adm, err
}

// workContext is the Plan step the parent's work is on: the focused plan's step in
// progress (seeds 002 §6), nil without a plan.
func (j *Jobs) workContext(ctx context.Context, session string) (*events.WorkContext, error) {
	st, err := j.c.ports.Work(ctx, session)
	if err != nil || st == nil {
		return nil, err
	}
	plans := st.Plans()
	if len(plans) == 0 {
		return nil, nil
	}
	p := plans[len(plans)-1]
	wc := &events.WorkContext{SchemaVersion: 1, PlanID: p.PlanID, PlanRevision: st.PlanRevision()}
	for _, s := range p.Steps {
		if s.Status == "in_progress" {
			wc.PlanStepID = s.ID
			break
		}
	}
	return wc, nil
}

// run runs an admitted job's child turn and settles the job with its report.
func (j *Jobs) run(ctx context.Context, comp composition, adm events.JobAdmitted) (delegation.Outcome, error) {
	defer func() {
		j.mu.Lock()
		delete(j.running, adm.JobID)
		j.mu.Unlock()
	}()
	record := context.WithoutCancel(ctx) // the ledger records the job's end however the run ends
	select {
	case j.slots <- struct{}{}:
	case <-ctx.Done():
		return j.settle(record, adm, events.JobCancelled, nil, ctx.Err().Error())
	}
	defer func() { <-j.slots }()
	owner := events.TurnOwner{}
	if o := j.c.ports.Driver.Owner; o != nil {
		owner = *o
	}
	res, _ := j.c.ports.Jobs.HandleJob(record, &commands.JobCommand{Meta: jobMeta("job-start/"+adm.JobID, adm.ParentSessionID, adm.ToolCallID),
		ParentSessionID: adm.ParentSessionID, Cmd: job.Start{JobID: adm.JobID, Owner: owner}})
	if err := res.Err(); err != nil {
		return delegation.Outcome{}, err
	}
	out, err := j.c.RunTurn(ctx, j.childTurn(comp, adm))
	status, failure := job.Status(out.Reason), errorText(out.Error)
	switch {
	case err != nil && ctx.Err() != nil: // stopped before the child's turn could record its end
		status, failure = events.JobCancelled, ctx.Err().Error()
	case err != nil: // the child's turn could not run (or be recorded): the parent is told
		status, failure = events.JobFailed, err.Error()
	}
	ev, lerr := j.evidence(record, adm)
	if lerr != nil {
		return delegation.Outcome{}, lerr
	}
	report := ev.Report(adm.JobState, adm.WorkContext, status)
	if err != nil {
		report.EvidenceErrors = append(report.EvidenceErrors, failure)
	}
	return j.settle(record, adm, status, &report, failure)
}

// childTurn is the child's turn: the rendered contract, under the parent's composition.
func (j *Jobs) childTurn(comp composition, adm events.JobAdmitted) RunTurn {
	text, _ := delegation.Render(adm.Contract)
	return RunTurn{Meta: commands.Meta{CommandID: "job-run/" + adm.JobID, Actor: "agent", CorrelationID: adm.ParentSessionID,
		CausationID: adm.ToolCallID}, SessionID: childSession(adm), Prompt: text, Model: comp.model, Agent: adm.Agent,
		Title: adm.Contract.Objective, Dir: comp.dir, Cwd: comp.dir, Observer: childObserver(comp.observer),
		Child: &ChildTurn{SessionID: adm.ChildSessionID, ParentSessionID: adm.ParentSessionID, New: !adm.Continued, Within: comp.offered}}
}

func childSession(adm events.JobAdmitted) string {
	if adm.Continued {
		return adm.ChildSessionID
	}
	return ""
}

func errorText(e *events.ErrorInfo) string {
	if e == nil {
		return ""
	}
	return e.Code + ": " + e.Message
}

// evidence folds the child's stream from the job's evidence start (seeds 002 §6).
func (j *Jobs) evidence(ctx context.Context, adm events.JobAdmitted) (*job.Evidence, error) {
	ev := &job.Evidence{}
	_, err := commands.Load(ctx, j.c.ports.Log, j.c.ports.Driver.Registry, commands.SessionStream(adm.ChildSessionID), adm.EvidenceFrom,
		func(_ events.Recorded, p events.Payload) error { ev.Fold(p); return nil })
	return ev, err
}

// settle ends the job in the ledger, its nextStep report admitted in the same append, and
// then wakes the parent for the report.
func (j *Jobs) settle(ctx context.Context, adm events.JobAdmitted, status string, report *events.TaskReport, errText string) (delegation.Outcome, error) {
	input := ""
	if report != nil && adm.ReportDelivery == events.DeliveryNextStep {
		input = "input_" + derived("report", adm.JobID)
	}
	res, _ := j.c.ports.Jobs.HandleJob(ctx, &commands.JobCommand{Meta: jobMeta("job-settle/"+adm.JobID, adm.ParentSessionID, adm.ToolCallID),
		ParentSessionID: adm.ParentSessionID, Cmd: job.Settle{JobID: adm.JobID, Status: status, Result: report, Error: errText, InputID: input}})
	if err := res.Err(); err != nil {
		return delegation.Outcome{}, err
	}
	if input != "" {
		j.wake(adm.ParentSessionID)
	}
	return delegation.Outcome{JobID: adm.JobID, SessionID: adm.ChildSessionID, Status: status, Report: report}, nil
}

// outcomeOf answers a task call that ran before with its job as the ledger holds it.
func (j *Jobs) outcomeOf(jb *job.Job) delegation.Outcome {
	if jb == nil {
		return delegation.Outcome{}
	}
	return delegation.Outcome{JobID: jb.JobID, SessionID: jb.ChildSessionID, Status: jb.Status, Report: jb.Result}
}

func jobMeta(commandID, parent, call string) commands.Meta {
	return commands.Meta{CommandID: commandID, Actor: "host", CorrelationID: parent, CausationID: call}
}

func derived(kind, s string) string {
	sum := sha256.Sum256([]byte(kind + "\n" + s))
	return hex.EncodeToString(sum[:16])
}
