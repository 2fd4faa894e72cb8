package turn

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/domain/transcript"
	"github.com/zuno-run/zuno/events"
)

// Driver runs turns against one event store. It is safe for concurrent use across sessions;
// two turns of one session race for its revision and one of them fails with session_busy.
type Driver struct {
	Store    commands.EventStore
	Registry *events.Registry
	Clock    commands.Clock
	// NewID returns a fresh unique id (turns, requests, receipts); uuid.NewString when nil.
	NewID func() string
	// Owner is recorded on the turns this driver starts.
	Owner *events.TurnOwner
	// Alive reports whether the process that owns an open turn still runs. A run of a session
	// whose open turn is alive is refused (session_busy) instead of recovering it; nil treats
	// every open turn as left behind by a dead process.
	Alive func(events.TurnOwner) bool
	// Metrics, when set, count what the turns record.
	Metrics *Metrics
}

// Request is one user input to drive.
type Request struct {
	SessionID string
	// MessageID identifies the user message; a fresh id when empty.
	MessageID string
	Text      string
	Agent     agent.Agent
	// Provider answers the model requests; ProviderName is how it is recorded.
	Provider     model.Provider
	ProviderName string
	Model        model.ModelInfo
	MaxTokens    int
	// Tools are the runtime's tools (already narrowed by the tools config); the agent's
	// allowlist narrows them further.
	Tools []Tool
	// ToolCalls is concurrency.tool_calls (1..=64); 0 means the default.
	ToolCalls int
	// GlobalAgents and ProjectAgents are the AGENTS.md files, read by the caller.
	GlobalAgents  *prompt.InstructionFile
	ProjectAgents []prompt.InstructionFile
	Observer      Observer
	// ForceRecover recovers an open turn even when its owner seems alive (its process is on
	// another host, or its pid was reused).
	ForceRecover bool
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
	s := e.Info.Code + ": " + e.Info.Message
	if e.Info.Fix != "" {
		s += "; " + e.Info.Fix
	}
	return s
}

// Code returns the failure's stable code.
func (e *Error) Code() string { return e.Info.Code }

// CodeSessionBusy is the stable code of a turn that lost its session to another writer.
const CodeSessionBusy = "session_busy"

// FinalizationInstruction is the host-owned instruction of the step-limit finalisation
// request (seeds 002 §8).
const FinalizationInstruction = "The step limit for this turn has been reached and tools are now closed. " +
	"Do not ask for more tool calls. Reply with a final summary: what was completed, what was not, the " +
	"evidence for each (commands run and their results, files inspected), and what blocks the rest."

// Run drives one user input to the end of its turn. It records the turn whatever happens; the
// returned error is for failures to record (the store), while a turn that ended in a typed
// failure (provider error, context overflow) is an Outcome with Error set.
func (d *Driver) Run(ctx context.Context, req Request) (Outcome, error) {
	if req.Observer == nil {
		req.Observer = NopObserver{}
	}
	if req.ToolCalls == 0 {
		req.ToolCalls = tools.DefaultToolCalls
	}
	if err := tools.CheckConcurrency("concurrency.tool_calls", req.ToolCalls); err != nil {
		return Outcome{}, err
	}
	r, err := d.load(ctx, req)
	if err != nil {
		return Outcome{}, err
	}
	if err := r.recover(ctx); err != nil {
		return Outcome{}, err
	}
	return r.drive(ctx)
}

// run is one turn in progress.
type run struct {
	d        *Driver
	req      Request
	stream   string
	revision int64 // -1: empty stream
	sess     session.State
	tr       *transcript.State
	turnID   string
	seq      int
	staged   []events.Payload
	tools    map[string]Tool
	registry *tools.Registry
	decls    []prompt.ToolDecl
	// history caches the conversation's encoding between steps; prev is the last full
	// receipt, which the next one is stored relative to.
	history prompt.History
	prev    *prompt.Receipt
	prevID  string
}

func (d *Driver) newID() string {
	if d.NewID != nil {
		return d.NewID()
	}
	return uuid.NewString()
}

// load folds the session stream once; the turn keeps it current from then on.
func (d *Driver) load(ctx context.Context, req Request) (*run, error) {
	r := &run{d: d, req: req, stream: commands.SessionStream(req.SessionID), revision: -1, tr: transcript.New()}
	const page = 1024
	var from uint64
	for {
		recs, err := d.Store.ReadStream(ctx, r.stream, from, page)
		if err != nil {
			return nil, fmt.Errorf("load session %s: %w", req.SessionID, err)
		}
		for _, rec := range recs {
			p, err := d.Registry.Decode(rec)
			if err != nil {
				return nil, err
			}
			r.sess.Evolve(p)
			r.tr.Evolve(p)
			r.revision = int64(rec.StreamRevision)
		}
		if len(recs) < page {
			break
		}
		from = recs[len(recs)-1].StreamRevision + 1
	}
	if !r.sess.Exists {
		e := domain.NewError(domain.CodeSessionNotFound, fmt.Sprintf("session %s does not exist", req.SessionID),
			"create it first (zuno run without --session creates one), or check the id with zuno session list")
		e.ID = req.SessionID
		return nil, e
	}
	return r, nil
}

// recover settles what a crashed run left open.
func (r *run) recover(ctx context.Context) error {
	open := r.tr.Open
	if open == nil {
		return nil
	}
	if o := open.Owner; o != nil && !r.req.ForceRecover && r.d.Alive != nil && r.d.Alive(*o) {
		e := domain.NewError(CodeSessionBusy,
			fmt.Sprintf("turn %s of session %s is still running (process %d on %s)", open.TurnID, r.req.SessionID, o.PID, o.Host),
			"wait for it to finish or stop it; if that process is gone, continue with --recover")
		e.ID = r.req.SessionID
		return e
	}
	r.turnID = open.TurnID
	r.seq = 1 << 20 // recovery events get ids of their own, apart from the crashed run's
	if err := r.stage(r.tr.Recover(true)...); err != nil {
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
		r.tr.Evolve(p)
		r.staged = append(r.staged, p)
	}
	return nil
}

// commit appends the staged events with the exact expected revision.
func (r *run) commit(ctx context.Context) error {
	if len(r.staged) == 0 {
		return nil
	}
	md := events.Metadata{CorrelationID: r.req.SessionID, Actor: r.actor(), Time: r.d.Clock.Now()}
	evs := make([]events.Event, len(r.staged))
	for i, p := range r.staged {
		md.CommandID = fmt.Sprintf("turn:%s:%d", r.turnID, r.seq)
		r.seq++
		ev, err := events.Encode(events.DeriveID(md.CommandID, 0), p, md)
		if err != nil {
			return err
		}
		evs[i] = ev
	}
	expected := events.NoStream
	if r.revision >= 0 {
		expected = events.Exact(uint64(r.revision))
	}
	// The records must land even when the run was cancelled: they are how the cancellation
	// itself is remembered.
	res, err := r.d.Store.Append(context.WithoutCancel(ctx), r.stream, expected, evs...)
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
	first := res.NextRevision + 1 - uint64(len(evs))
	for i, ev := range evs {
		rec := events.Recorded{Event: ev, Stream: r.stream, StreamRevision: first + uint64(i), Position: res.FirstPosition + uint64(i)}
		r.req.Observer.Recorded(rec, r.staged[i])
		r.d.Metrics.observe(r.staged[i])
	}
	r.revision = int64(res.NextRevision)
	r.staged = r.staged[:0]
	return nil
}

func (r *run) actor() string {
	if r.req.Agent.Name != "" {
		return "agent:" + r.req.Agent.Name
	}
	return "host"
}

// elapsedMs is a duration for the record; it is informational, never a decision input.
func elapsedMs(since time.Time) int64 { return time.Since(since).Milliseconds() }
