package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/answers"
	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
)

// Commands as they travel on the bus. Each embeds Meta and the domain command.

// CreateSession creates a session.
type CreateSession struct {
	Meta
	session.Create
}

// SetSessionTitle renames a session.
type SetSessionTitle struct {
	Meta
	session.SetTitle
}

// AppendUserMessage records a user message.
type AppendUserMessage struct {
	Meta
	session.AppendUserMessage
}

// UpdatePlan is plan_update for the root session SessionID.
type UpdatePlan struct {
	Meta
	SessionID string          `json:"sessionId"`
	Update    work.PlanUpdate `json:"update"`
}

// UpdateTodos is todo_update for the root session SessionID.
type UpdateTodos struct {
	Meta
	SessionID string          `json:"sessionId"`
	Update    work.TodoUpdate `json:"update"`
}

// AnswerPermission answers a permission ask of a turn.
type AnswerPermission struct {
	Meta
	answers.Answer
}

// RevokeGrants ends the standing approvals of a session (docs/permissions.md, "Standing
// approvals").
type RevokeGrants struct {
	Meta
	permission.Revoke
}

// Handlers executes commands against an event store. Its methods are what the bus calls; they
// are safe for concurrent use, and concurrency between handlers (or between processes) is
// settled by the store's expected revisions.
type Handlers struct {
	store    EventStore
	registry *events.Registry
	clock    Clock
	metrics  *Metrics
}

// NewHandlers returns handlers over store. metrics may be nil.
func NewHandlers(store EventStore, registry *events.Registry, clock Clock, metrics *Metrics) *Handlers {
	if metrics == nil {
		metrics = NewMetrics(nil)
	}
	return &Handlers{store: store, registry: registry, clock: clock, metrics: metrics}
}

// handle runs x and fills the result's view and error; every handler ends here. body is what
// the command asks for, hashed into its digest.
func handle[S aggregate](ctx context.Context, h *Handlers, name string, x execution[S], body any, view func(S) any) Result {
	started := time.Now()
	x.store, x.registry, x.clock = h.store, h.registry, h.clock
	var (
		state S
		res   = Result{CommandID: x.meta.CommandID, Stream: x.stream, Revision: -1}
		err   error
	)
	if x.digest, err = Digest(name, body); err == nil {
		state, res, err = x.run(ctx)
	}
	if err != nil {
		res.Error = NewErrorReply(err)
	} else if v, merr := json.Marshal(view(state)); merr != nil {
		res.Error = NewErrorReply(merr)
	} else {
		res.View = v
	}
	h.metrics.observe(name, started, res)
	return res
}

// sessionExecution prepares a session command.
func sessionExecution(meta Meta, sessionID string, cmd session.Command) execution[*session.State] {
	return execution[*session.State]{
		meta: meta, stream: SessionStream(sessionID),
		newState: func() *session.State { return &session.State{} },
		decide:   func(s *session.State) ([]events.Payload, error) { return session.Decide(s, cmd) },
	}
}

// SessionView is what session commands return.
type SessionView struct {
	SessionID       string `json:"sessionId"`
	Title           string `json:"title"`
	Agent           string `json:"agent"`
	ParentSessionID string `json:"parentSessionId,omitempty"`
	Directory       string `json:"directory,omitempty"`
	MessageCount    int    `json:"messageCount"`
}

func sessionView(s *session.State) any {
	if !s.Exists {
		return nil
	}
	return SessionView{SessionID: s.SessionID, Title: s.Title, Agent: s.Agent,
		ParentSessionID: s.ParentSessionID, Directory: s.Directory, MessageCount: s.MessageCount}
}

// CreateSession handles CreateSession.
func (h *Handlers) CreateSession(ctx context.Context, c *CreateSession) (Result, error) {
	return handle(ctx, h, "CreateSession", sessionExecution(c.Meta, c.SessionID, c.Create), c.Create, sessionView), nil
}

// SetSessionTitle handles SetSessionTitle.
func (h *Handlers) SetSessionTitle(ctx context.Context, c *SetSessionTitle) (Result, error) {
	return handle(ctx, h, "SetSessionTitle", sessionExecution(c.Meta, c.SessionID, c.SetTitle), c.SetTitle, sessionView), nil
}

// AppendUserMessage handles AppendUserMessage.
func (h *Handlers) AppendUserMessage(ctx context.Context, c *AppendUserMessage) (Result, error) {
	return handle(ctx, h, "AppendUserMessage", sessionExecution(c.Meta, c.SessionID, c.AppendUserMessage), c.AppendUserMessage, sessionView), nil
}

func workExecution(meta Meta, sessionID string, cmd work.Command) execution[*work.State] {
	return execution[*work.State]{
		meta: meta, stream: WorkStream(sessionID),
		newState: func() *work.State { return &work.State{} },
		decide:   func(s *work.State) ([]events.Payload, error) { return work.Decide(s, cmd) },
	}
}

func planView(s *work.State) any { return s.PlanView() }
func todoView(s *work.State) any { return s.TodoView() }

// UpdatePlan handles UpdatePlan (plan_update); the view is the plan after the update.
func (h *Handlers) UpdatePlan(ctx context.Context, c *UpdatePlan) (Result, error) {
	u := c.Update
	u.SessionID = c.SessionID
	return handle(ctx, h, "UpdatePlan", workExecution(c.Meta, c.SessionID, u), c, planView), nil
}

// UpdateTodos handles UpdateTodos (todo_update); the view is the todo list after the update.
func (h *Handlers) UpdateTodos(ctx context.Context, c *UpdateTodos) (Result, error) {
	u := c.Update
	u.SessionID = c.SessionID
	return handle(ctx, h, "UpdateTodos", workExecution(c.Meta, c.SessionID, u), c, todoView), nil
}

// AnswerPermission handles AnswerPermission: the reply lands in the session's inbox, where the
// waiting turn reads it; the view is the recorded reply.
func (h *Handlers) AnswerPermission(ctx context.Context, c *AnswerPermission) (Result, error) {
	if err := h.requireAsk(ctx, c.SessionID, c.AskID); err != nil {
		return Result{CommandID: c.CommandID, Stream: InboxStream(c.SessionID), Revision: -1, Error: NewErrorReply(err)}, nil
	}
	x := execution[*answers.State]{meta: c.Meta, stream: InboxStream(c.SessionID),
		newState: func() *answers.State { return &answers.State{} },
		decide:   func(s *answers.State) ([]events.Payload, error) { return answers.Decide(s, c.Answer) }}
	view := func(s *answers.State) any {
		r, _ := s.Reply(c.AskID)
		return map[string]string{"askId": c.AskID, "reply": r}
	}
	return handle(ctx, h, "AnswerPermission", x, c.Answer, view), nil
}

// RevokeGrants handles RevokeGrants: the revocation lands on the session's stream, where every
// later turn folds it; the view is the approvals it ended (none when there were none).
func (h *Handlers) RevokeGrants(ctx context.Context, c *RevokeGrants) (Result, error) {
	var revoked []events.StandingGrant
	x := execution[*permission.SessionGrants]{meta: c.Meta, stream: SessionStream(c.SessionID),
		newState: func() *permission.SessionGrants { return &permission.SessionGrants{} },
		decide: func(s *permission.SessionGrants) ([]events.Payload, error) {
			out, err := permission.DecideRevoke(s, c.Revoke)
			revoked = nil
			for _, p := range out {
				revoked = append(revoked, p.(events.PermissionRevoked).Grants...)
			}
			return out, err
		}}
	view := func(*permission.SessionGrants) any {
		return map[string]any{"sessionId": c.SessionID, "revoked": append([]events.StandingGrant{}, revoked...)}
	}
	return handle(ctx, h, "RevokeGrants", x, c.Revoke, view), nil
}

// CodeAskNotFound is an answer to an ask the session never put: an answer cannot wait in the
// inbox for a call that does not exist yet, so nobody can approve a call in advance.
const CodeAskNotFound = "ask_not_found"

// requireAsk checks that the session's log holds the ask being answered.
func (h *Handlers) requireAsk(ctx context.Context, sessionID, askID string) error {
	found := false
	_, err := Load(ctx, h.store, h.registry, SessionStream(sessionID), 0, func(_ events.Recorded, p events.Payload) error {
		if a, ok := p.(events.PermissionAsked); ok && a.AskID == askID {
			found = true
		}
		return nil
	})
	if err != nil || found {
		return err
	}
	e := domain.NewError(CodeAskNotFound, fmt.Sprintf("session %s has no ask %s", sessionID, askID),
		"answer an ask the session recorded (session.permission.asked.1 names its askId)")
	e.ID = askID
	return e
}

// Work reads the authoritative work state of a root session from its stream (plan_get and
// todo_get read here, not from projections, so a model never sees a lagging plan).
func (h *Handlers) Work(ctx context.Context, sessionID string) (*work.State, error) {
	x := execution[*work.State]{store: h.store, registry: h.registry, stream: WorkStream(sessionID),
		newState: func() *work.State { return &work.State{} }}
	l, err := x.load(ctx)
	return l.state, err
}

// Metrics are the command layer's collectors.
type Metrics struct {
	handled *prometheus.CounterVec
	seconds *prometheus.HistogramVec
}

// NewMetrics creates the collectors, registered with reg when it is not nil.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		handled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zuno_commands_handled_total",
			Help: "Commands handled, by command and outcome (ok, duplicate, or the error code).",
		}, []string{"command", "outcome"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "zuno_command_handling_seconds",
			Help:    "Time from a command reaching its handler to its result, by command.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}, []string{"command"}),
	}
	if reg != nil {
		reg.MustRegister(m.handled, m.seconds)
	}
	return m
}

func (m *Metrics) observe(command string, started time.Time, res Result) {
	outcome := "ok"
	switch {
	case res.Error != nil:
		outcome = res.Error.Code
	case res.Duplicate:
		outcome = "duplicate"
	}
	m.handled.WithLabelValues(command, outcome).Inc()
	m.seconds.WithLabelValues(command).Observe(time.Since(started).Seconds())
}
