package turn

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/live"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/job"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/domain/transcript"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
)

// Driver runs turns against one event store. It is safe for concurrent use across sessions;
// two turns of one session race for its revision and one of them fails with session_busy.
type Driver struct {
	Store    commands.EventStore
	Registry *events.Registry
	Clock    commands.Clock
	// NewID returns a fresh unique id (requests, receipts); uuid.NewString when nil.
	NewID func() string
	// Owner is recorded on the turns this driver starts.
	Owner *events.TurnOwner
	// Alive reports whether the process that owns an open turn still runs. A run of a session
	// whose open turn is alive is refused (session_busy) instead of recovering it; nil treats
	// every open turn as left behind by a dead process.
	Alive func(events.TurnOwner) bool
	// Leases, when set, holds a lease on every turn this driver runs (docs/turns.md,
	// "Leases"): an open turn whose lease is live is not taken over, one whose lease expired
	// is; nil decides by Alive alone (the replay, tests).
	Leases *commands.Leases
	// Feed is the process's live feed, where the driver watches for an interrupt of its turn;
	// nil watches nothing.
	Feed *live.Feed
	// Metrics, when set, count what the turns record.
	Metrics *Metrics
	// Sleep waits d or until ctx is done, whichever is first, returning ctx's error then; a
	// timer when nil. Jitter returns a number in [0,1) spreading retry waits; math/rand when
	// nil. Tests replace both so retries take no real time (docs/turns.md, "Retries").
	Sleep  func(ctx context.Context, d time.Duration) error
	Jitter func() float64
}

// Request is one user input to drive, with everything resolved: the agent, the provider and
// the tools.
type Request struct {
	// Meta identifies the turn's command: the turn id, the message id and every event id
	// derive from its CommandID, so a re-delivered turn starts nothing new.
	Meta      commands.Meta
	SessionID string
	Text      string
	Agent     agent.Agent
	// Provider answers the model requests; ProviderName is how it is recorded.
	Provider     model.Provider
	ProviderName string
	// Retry is how failed requests are sent again; the zero value sends each once.
	Retry     model.RetryPolicy
	Model     model.ModelInfo
	MaxTokens int
	// Tools are the runtime's tools; the tools config (ToolsConfig) and the agent's allowlist
	// narrow them to the tools offered (agent.Offer).
	Tools       []Tool
	ToolsConfig map[string]bool
	// ToolCalls is concurrency.tool_calls (1..=64); 0 means the default.
	ToolCalls int
	// Bounds are the tool output limits in effect, recorded on the turn's start (nil: none
	// recorded).
	Bounds *events.Bounds
	// Directory, when set and not the session's recorded workspace, moves the session there
	// (recorded before the turn starts).
	Directory string
	// Config is the configuration files the turn's settings came from, recorded on its start.
	Config []events.ConfigFile
	// GlobalAgents and ProjectAgents are the AGENTS.md files, read by the caller.
	GlobalAgents  *prompt.InstructionFile
	ProjectAgents []prompt.InstructionFile
	// Skills fills the Skill lanes and Memory the memory lane, resolved by the caller before
	// anything is recorded (docs/skills.md, docs/memory.md); nil adds none.
	Skills   *prompt.SkillsPrompt
	Memory   *prompt.MemoryPrompt
	Observer Observer
	// ForceRecover recovers an open turn even when its owner seems alive (its process is on
	// another host, or its pid was reused).
	ForceRecover bool
	// Gate decides each call before it runs (nil allows every call); an ask waits for its
	// answer in Inbox.
	Gate  Gate
	Inbox Inbox
	// Suspend makes the turn suspend at an ask the inbox holds no answer to yet, instead of
	// waiting for it in this process: it records what it awaits (session.turn.suspended.1),
	// gives its lease back and returns with Outcome.Reason ReasonSuspended.
	Suspend bool
	// Report, when set, makes the turn's user message the delivery of a job's report from
	// the session's inbox (Text is its rendering; docs/delegation.md).
	Report *Report
	// Inputs, when set, delivers inbox inputs that arrive while the turn runs, at its
	// tool-safe boundaries.
	Inputs Inputs
	// Resume, when set, continues the session's open turn that waits on asks, instead of
	// starting a turn from Text (docs/turns.md, "Suspended turns").
	Resume *Resume
}

// Report is one input of the session's inbox delivered as a turn's input: a job's report,
// another session's peer message (Peer set, Report empty), or the user's steering message
// (Steer set, Report empty), which the transcript records as an ordinary user message with its
// input id.
type Report struct {
	InputID string
	Report  events.TaskReport
	Peer    *events.PeerMessage
	Steer   bool
}

// carry sets on msg what the input is: its input id, and the report or the peer message it
// delivers (nothing more for a steer).
func (rep Report) carry(msg *session.AppendUserMessage) {
	msg.InputID = rep.InputID
	switch {
	case rep.Peer != nil:
		msg.PeerMessage = rep.Peer
	case !rep.Steer:
		msg.TaskReport = &rep.Report
	}
}

// Outcome is how a turn ended.
type Outcome struct {
	SessionID string
	TurnID    string
	Reason    string
	Steps     int
	Text      string
	Usage     events.Usage
	Error     *events.ErrorInfo
	// Duplicate is set when the turn's command had been handled before: nothing new ran, and
	// this is the first outcome.
	Duplicate bool
	// Awaiting is, for a suspended turn (Reason ReasonSuspended), what it waits for.
	Awaiting []events.Awaited
}

// Err returns the turn's failure as an error, nil when it completed.
func (o Outcome) Err() error {
	if o.Error == nil {
		return nil
	}
	return &Error{Info: *o.Error}
}

// Error is a turn that ended in a typed failure.
type Error struct{ Info events.ErrorInfo }

func (e *Error) Error() string {
	return domain.FormatError(e.Info.Code, "", "", e.Info.Message, e.Info.Fix)
}

// Code returns the failure's stable code.
func (e *Error) Code() string { return e.Info.Code }

const (
	// CodeSessionBusy is the stable code of a turn that lost its session to another writer.
	CodeSessionBusy = "session_busy"
	// CodeTurnInProgress: a turn's command came again while the turn it started still runs.
	CodeTurnInProgress = "turn_in_progress"
)

// FinalizationInstruction is the host-owned instruction of the step-limit finalisation
// request (docs/turns.md).
const FinalizationInstruction = "The step limit for this turn has been reached and tools are now closed. " +
	"Do not ask for more tool calls. Reply with a final summary: what was completed, what was not, the " +
	"evidence for each (commands run and their results, files inspected), and what blocks the rest."

// Run drives one user input to the end of its turn. It records the turn whatever happens; the
// returned error is for failures to record (the store), while a turn that ended in a typed
// failure (provider error, context overflow) is an Outcome with Error set. A request whose
// command already started a turn returns that turn's outcome and starts nothing.
func (d *Driver) Run(ctx context.Context, req Request) (Outcome, error) {
	switch req.Observer.(type) {
	case nil, NopObserver:
		req.Observer = NopObserver{}
	default:
		n := newNotifier(req.Observer)
		defer n.close()
		req.Observer = n
	}
	if req.ToolCalls == 0 {
		req.ToolCalls = tools.DefaultToolCalls
	}
	if err := tools.CheckConcurrency("concurrency.tool_calls", req.ToolCalls); err != nil {
		return Outcome{}, err
	}
	if req.Meta.CommandID == "" {
		return Outcome{}, domain.Invalid("command_id", "is empty", "give every turn a command id: it makes a retried turn recognisable")
	}
	r, err := d.load(ctx, req)
	if err != nil {
		return Outcome{}, err
	}
	if err := r.offerTools(); err != nil {
		return Outcome{}, err
	}
	if r.prior.seen && !r.resumesAgain() {
		return r.repeat(ctx)
	}
	if req.Resume != nil {
		if err := r.resumable(); err != nil {
			return Outcome{}, err
		}
	} else if err := r.recover(ctx); err != nil {
		return Outcome{}, err
	}
	held, release, err := r.hold(ctx)
	if err != nil {
		return Outcome{}, err
	}
	defer release()
	return r.drive(held)
}

// run is one turn in progress.
type run struct {
	d      *Driver
	req    Request
	w      commands.Writer
	sess   session.State
	tr     *transcript.State
	turnID string
	// work is the session's durable work state (Goal, plan, todos), kept current at every
	// step for the prompt's runtime.work_state section; workRevision is how far its stream
	// was read. It is read when the turn starts and folded forward before every request
	// (refreshWork, docs/goals.md), so a change by a tool or by the user is never missed.
	work         *work.State
	workRoot     string // the root session, whose work stream this is
	workRevision int64
	// jobs is the session's own job ledger (its jobs and their reports) for the same
	// section, read and folded forward with work; jobsRevision is how far its stream was read.
	jobs         *job.Ledger
	jobsRevision int64
	// shownReceipt is the previous receipt id runtime.work_state names, taken when the work
	// state last changed (shownRevisions): see workStateReceipt.
	shownReceipt   string
	shownRevisions [2]int64
	// lastWire is the wire exchange of the latest request sent (nil when none left).
	lastWire *events.WireExchange
	// settled are the session's earlier tool results, in log order, kept for the tools that
	// restore their state from them (read credentials, refused patches); output text is
	// dropped to keep them small.
	settled  []events.ToolSettled
	prior    priorTurn
	staged   []events.Payload
	tools    map[string]Tool
	registry *tools.Registry
	decls    []prompt.ToolDecl
	// deferral holds back the schemas of deferred tools until tool_search activates them.
	deferral deferral
	// history caches the conversation's encoding between steps; prev is the last full
	// receipt, which the next one is stored relative to.
	history prompt.History
	prev    *prompt.Receipt
	prevID  string
	// resumed folds the receipts a resumed turn restores its prompt base from; nil otherwise.
	resumed *receiptFold
	// awaiting is the ask the turn suspended at.
	awaiting []events.Awaited
	// closing are the asks of calls staged settled unanswered, closed by the next commit
	// (askclose.go).
	closing []events.PermissionClosed
	// loop counts identical read-only observations (stagnant.go).
	loop stagnation
	// summarising is set while a compaction request streams: its text is a summary for the
	// transcript, not an answer to show (docs/compaction.md).
	summarising bool
}

// priorTurn is what the log holds of this request's command, if it was handled before.
type priorTurn struct {
	seen     bool
	finished *events.TurnFinished
	text     string
}

func (d *Driver) sleep(ctx context.Context, wait time.Duration) error {
	if d.Sleep != nil {
		return d.Sleep(ctx, wait)
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (d *Driver) jitter() float64 {
	if d.Jitter != nil {
		return d.Jitter()
	}
	return rand.Float64()
}

func (d *Driver) newID() string {
	if d.NewID != nil {
		return d.NewID()
	}
	return uuid.NewString()
}

// TurnID is the id of the turn a command starts: derived from the command id, so a retried
// command names the turn it already started.
func TurnID(commandID string) string { return events.TurnIDOf(commandID) }

// MessageID is the id of the user message a turn's command records.
func MessageID(commandID string) string { return "msg_" + derivedHex("message", commandID) }

func derivedHex(kind, commandID string) string {
	sum := sha256.Sum256([]byte(kind + "\n" + commandID))
	return hex.EncodeToString(sum[:16])
}

// digest identifies what a turn's command asks for; the recovery flag is how, not what.
func digest(req Request) (string, error) {
	if rs := req.Resume; rs != nil { // whoever resumes it, with whichever model: one resumption
		return commands.Digest("ResumeTurn", struct{ SessionID, TurnID, TriggerEventID string }{req.SessionID, rs.TurnID, rs.TriggerEventID})
	}
	return commands.Digest("RunTurn", struct {
		SessionID, Text, Agent, Provider, Model, Directory string
	}{req.SessionID, req.Text, req.Agent.Name, req.ProviderName, req.Model.ID, req.Directory})
}

// load folds the session stream once; the turn keeps it current from then on.
func (d *Driver) load(ctx context.Context, req Request) (*run, error) {
	dg, err := digest(req)
	if err != nil {
		return nil, err
	}
	stream := commands.SessionStream(req.SessionID)
	meta := req.Meta
	if meta.CorrelationID == "" {
		meta.CorrelationID = req.SessionID
	}
	turnID := TurnID(req.Meta.CommandID)
	if req.Resume != nil {
		turnID = req.Resume.TurnID
	}
	r := &run{d: d, req: req, tr: transcript.New(), turnID: turnID, resumed: newReceiptFold(req.Resume),
		w: commands.Writer{Store: d.Store, Stream: stream, Meta: meta, Digest: dg, Clock: d.Clock, ActorOf: actorOf(req)}}
	r.w.Revision, err = commands.Load(ctx, d.Store, d.Registry, stream, 0, r.fold)
	if err != nil {
		return nil, err
	}
	if err := r.loadWork(ctx); err != nil {
		return nil, err
	}
	if !r.sess.Exists {
		e := domain.NewError(domain.CodeSessionNotFound, fmt.Sprintf("session %s does not exist", req.SessionID),
			"create it first (zuno run without --session creates one), or check the id with zuno session list")
		e.ID = req.SessionID
		return nil, e
	}
	return r, nil
}

// fold applies one stored event: the session, the transcript, the gate's standing approvals,
// and what this command did before if it was handled already.
func (r *run) fold(rec events.Recorded, p events.Payload) error {
	if rec.Metadata.CommandID == r.req.Meta.CommandID {
		if rec.Metadata.CommandDigest != "" && rec.Metadata.CommandDigest != r.w.Digest { // only the first event has it
			return &commands.CommandIDReusedError{CommandID: r.req.Meta.CommandID, Stream: r.w.Stream}
		}
		r.prior.seen = true
		r.w.Next++ // a re-run continues the command's event ids after those it wrote
	}
	if r.resumed != nil {
		r.resumed.fold(r.turnID, p)
	}
	r.deferral.observe(p)
	switch e := p.(type) {
	case events.ToolSettled:
		e.Output = "" // the tools restore from the typed metadata, never from the text
		r.settled = append(r.settled, e)
	case events.DirectoryChanged:
		r.settled = r.settled[:0] // what was read in another workspace says nothing of this one
	case events.ProviderRequest:
		if e.TurnID == r.turnID && e.Response != nil {
			r.prior.text = e.Response.Text
		}
	case events.TurnFinished:
		if e.TurnID == r.turnID {
			r.prior.finished = &e
		}
	}
	if err := r.sess.Evolve(p); err != nil {
		return err
	}
	if r.req.Gate != nil {
		r.req.Gate.Fold(p)
	}
	return r.tr.Evolve(p)
}

// loadWork reads the work state of the session's root (a child session works on its root's
// plan and todos), from the latest snapshot of it.
func (r *run) loadWork(ctx context.Context) error {
	r.workRoot = r.req.SessionID
	if parent := r.sess.ParentSessionID; parent != "" {
		root, err := commands.RootSession(ctx, r.d.Store, r.d.Registry, parent)
		if err != nil {
			return err
		}
		r.workRoot = root
	}
	var err error
	r.work, r.workRevision, err = commands.LoadWork(ctx, r.d.Store, r.d.Registry, r.workRoot)
	if err != nil {
		return err
	}
	r.jobs, r.jobsRevision, err = commands.LoadJobs(ctx, r.d.Store, r.d.Registry, r.req.SessionID)
	return err
}

// readWork folds what the root's work stream and the session's job ledger gained since they
// were last read: the plan, todo and Goal tools (or a user's zuno plan update) change the
// first between steps, task calls and settling children the second.
func (r *run) readWork(ctx context.Context) error {
	rev, err := commands.Load(ctx, r.d.Store, r.d.Registry, commands.WorkStream(r.workRoot), uint64(r.workRevision+1),
		func(_ events.Recorded, p events.Payload) error { return r.work.Evolve(p) })
	r.workRevision = max(rev, r.workRevision)
	if err != nil {
		return err
	}
	rev, err = commands.Load(ctx, r.d.Store, r.d.Registry, commands.JobStream(r.req.SessionID), uint64(r.jobsRevision+1),
		func(_ events.Recorded, p events.Payload) error { return r.jobs.Evolve(p) })
	r.jobsRevision = max(rev, r.jobsRevision)
	return err
}

// workState is the runtime.work_state input of the next prompt, nil while there is no Goal,
// no plan, no todo and no job.
func (r *run) workState() *prompt.WorkState {
	g := promptGoal(r.work)
	jobs, reports := promptJobs(r.jobs)
	if len(r.work.Plans()) == 0 && len(r.work.Items()) == 0 && g == nil && len(jobs) == 0 && len(reports) == 0 {
		return nil
	}
	return &prompt.WorkState{PreviousReceiptID: r.workStateReceipt(), PlanRevision: r.work.PlanRevision(), Plans: r.work.Plans(),
		TodoRevision: r.work.TodoRevision(), Todos: r.work.Items(), Goal: g, Jobs: jobs, Reports: reports}
}

// repeat answers a command that was handled before: the finished turn's outcome, or, when its
// turn is still open, the turn in progress (or its recovery if its process is gone).
func (r *run) repeat(ctx context.Context) (Outcome, error) {
	out := Outcome{SessionID: r.req.SessionID, TurnID: r.turnID, Duplicate: true}
	if f := r.prior.finished; f != nil {
		out.Reason, out.Steps, out.Usage, out.Error, out.Text = f.Reason, f.Steps, f.Usage, f.Error, r.prior.text
		return out, nil
	}
	if open := r.tr.Open; open != nil && open.TurnID == r.turnID && open.Suspended {
		// The command suspended the turn again; a re-delivery leaves it suspended.
		out.Reason, out.Awaiting, out.Steps, out.Usage = ReasonSuspended, open.Awaiting(), open.Steps, open.Usage
		return out, nil
	}
	if open := r.tr.Open; open == nil || open.TurnID != r.turnID {
		return out, fmt.Errorf("session %s: command %s recorded events but no turn %s; inspect the log with zuno events read",
			r.req.SessionID, r.req.Meta.CommandID, r.turnID)
	}
	if err := r.recover(ctx); err != nil {
		var de *domain.Error
		if errors.As(err, &de) && de.Code() == CodeSessionBusy {
			e := domain.NewError(CodeTurnInProgress, fmt.Sprintf("turn %s of this command is still running", r.turnID),
				"wait for it to finish; the same command id then returns its outcome")
			e.ID = r.turnID
			return out, e
		}
		return out, err
	}
	f := r.prior.finished
	out.Reason, out.Steps, out.Usage, out.Error = f.Reason, f.Steps, f.Usage, f.Error
	return out, nil
}

// recover settles what a crashed run left open.
func (r *run) recover(ctx context.Context) error {
	open := r.tr.Open
	if open == nil {
		return nil
	}
	leased, err := r.openTurnBinds(ctx, open.TurnID, open.Owner)
	if err != nil {
		return err
	}
	if len(open.Awaiting()) > 0 && !r.req.ForceRecover { // suspended, or its process stopped while it waited
		if closed, err := r.awaitsClosed(ctx, open); err != nil {
			return err
		} else if !closed {
			return r.suspendedError(open)
		}
	}
	release, err := r.takeOver(ctx, open.TurnID, leased)
	if err != nil {
		return err
	}
	defer release()
	closing, err := r.recovery(ctx, true)
	if err != nil {
		return err
	}
	if err := r.stage(closing...); err != nil {
		return err
	}
	return r.commit(ctx)
}

// stage checks and folds events to be appended by the next commit. Folding at once keeps the
// transcript current for the decisions in between; commit makes them durable before anything
// outside (a provider, a tool) depends on them.
func (r *run) stage(ps ...events.Payload) error {
	for _, p := range ps {
		if err := r.tr.Check(p); err != nil {
			return err
		}
		r.noteClosing(p)
		if err := r.tr.Evolve(p); err != nil {
			return err
		}
		if r.req.Gate != nil {
			r.req.Gate.Fold(p)
		}
		if f, ok := p.(events.TurnFinished); ok && f.TurnID == r.turnID {
			r.prior.finished = &f
		}
		r.loop.staged(p)
		r.deferral.observe(p)
		r.staged = append(r.staged, p)
	}
	return nil
}

// commit appends the staged events through the command's writer, with the exact expected
// revision.
func (r *run) commit(ctx context.Context) error {
	if len(r.staged) == 0 {
		return nil
	}
	first := closesFirst(ctx)
	if first {
		if err := r.closeAsks(ctx); err != nil {
			return err
		}
	}
	// The records must land even when the run was cancelled: they are how the cancellation
	// itself is remembered.
	recs, err := r.w.Append(context.WithoutCancel(ctx), r.staged...)
	if err == nil && !first {
		err = r.closeAsks(ctx)
	}
	var wrong *events.WrongExpectedRevisionError
	if errors.As(err, &wrong) {
		e := domain.NewError(CodeSessionBusy, fmt.Sprintf("session %s was changed by another writer during this turn", r.req.SessionID),
			"run one turn of a session at a time; continue it afterwards with zuno run --session")
		e.ID = r.req.SessionID
		return e
	}
	if err != nil {
		return err
	}
	for i, rec := range recs {
		r.req.Observer.Recorded(rec, r.staged[i])
		r.d.Metrics.observe(r.staged[i])
	}
	r.staged = r.staged[:0]
	return nil
}

// actorOf says who each of a turn's events is recorded as acting: the sender of the turn's
// command (the user, or a reaction) for the message, a move of the workspace and a
// resumption, the agent for the rest.
func actorOf(req Request) func(events.Payload) string {
	agentActor := "host"
	if req.Agent.Name != "" {
		agentActor = "agent:" + req.Agent.Name
	}
	sender := req.Meta.Actor
	if sender == "" {
		sender = "user"
	}
	return func(p events.Payload) string {
		switch e := p.(type) {
		case events.UserMessageAppended:
			if e.InputID != "" && e.MessageID != MessageID(req.Meta.CommandID) {
				return "host" // an input delivered inside the turn: the host delivered it
			}
			return sender
		case events.DirectoryChanged, events.TurnResumed:
			return sender
		}
		return agentActor
	}
}

// elapsedMs is a duration for the record; it is informational, never a decision input.
func elapsedMs(since time.Time) int64 { return time.Since(since).Milliseconds() }
