// Package queries is the application's read side: what the CLI (and later an HTTP face) asks
// of the event log and the read models. Answers that decisions depend on (a session's agent
// and workspace, a receipt, the plan) are folded from the log, which is authoritative; lists
// and ad-hoc SQL read the projections, once they have reached the log's head as it was when
// the query began (read-your-writes by position, docs/storage.md).
package queries

import (
	"context"
	"fmt"
	"github.com/zuno-run/zuno/domain/bounds"
	"math"
	"strings"
	"time"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/domain/taskcontext"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/projections"
)

// Log is what the queries read of the event store.
type Log interface {
	commands.StreamReader
	ReadAll(ctx context.Context, after uint64, limit int) ([]events.Recorded, error)
}

// Table is a query's result: column names and values in column order.
type Table struct {
	Columns []string
	Rows    [][]any
}

// Header and Row make a Table the sink of a user query that keeps the whole result (what
// a table format needs to align its columns), within the query's bounds.
func (t *Table) Header(columns []string) error {
	t.Columns, t.Rows = columns, [][]any{}
	return nil
}

func (t *Table) Row(values []any) error {
	t.Rows = append(t.Rows, values)
	return nil
}

// RowSink receives a user query's result as it is read: the column names once, then each row.
type RowSink interface {
	Header(columns []string) error
	Row(values []any) error
}

// UserBounds bound a query a user typed (docs/config.md, "Bounds"): at most Limit rows
// (0: none), MaxBytes of values (0: none; past it the query ends with result_too_large), and
// Timeout (0: the adapter's default).
type UserBounds struct {
	Limit    int
	MaxBytes int64
	Timeout  time.Duration
}

// The defaults and ceilings of UserBounds' limits (domain/bounds; the timeout's in
// milliseconds), for the faces that take them from a user.
var (
	UserRowsLimit    = bounds.DBRows
	UserBytesLimit   = bounds.DBBytes
	UserTimeoutLimit = bounds.DBTimeout
)

// UserSummary is what a user query passed to its sink; More: it had rows past the limit.
type UserSummary struct {
	Rows  int
	Bytes int64
	More  bool
}

// ReadModels runs read-only SQL over the read models; limit 0 returns every row. Query runs
// Zuno's own SQL, with its values as '?' parameters, never spliced into the text; UserQuery
// runs SQL a user typed, which may be hostile, on a connection that cannot write, within its
// bounds, streaming rows into sink as they are read.
type ReadModels interface {
	Query(ctx context.Context, sql string, limit int, args ...any) (Table, error)
	UserQuery(ctx context.Context, sql string, b UserBounds, sink RowSink) (UserSummary, error)
}

// Projections is the process's projection runner, as the queries wait on it: Head is the
// log's last position now, and WaitFor returns once the read models have applied a position
// (projections.Runner).
type Projections interface {
	Head(ctx context.Context) (uint64, error)
	WaitFor(ctx context.Context, position uint64) error
	// Status is each projector's checkpoint and lag (`zuno projections status`).
	Status(ctx context.Context) ([]projections.Status, error)
}

// Queries answers the application's questions.
type Queries struct {
	log      Log
	registry *events.Registry
	rm       ReadModels
	proj     Projections
}

// New returns the queries over a log, its read models and the runner that projects them.
func New(log Log, registry *events.Registry, rm ReadModels, proj Projections) *Queries {
	return &Queries{log: log, registry: registry, rm: rm, proj: proj}
}

// WaitFor returns once the read models have applied the event at position: a command returns
// its last position (commands.Result.LastPosition, app.TurnResult.LastPosition), and a caller
// that must then read its effect from the read models waits for it.
func (q *Queries) WaitFor(ctx context.Context, position uint64) error {
	return q.proj.WaitFor(ctx, position)
}

// Head is the log's last position now: what a face records before it starts a command, to
// tell the command's new events from those an earlier delivery of it recorded.
func (q *Queries) Head(ctx context.Context) (uint64, error) { return q.proj.Head(ctx) }

// ProjectionStatus is each projector's checkpoint, the log's head and the lag between them,
// as they are now (it does not wait: a lag is what it reports).
func (q *Queries) ProjectionStatus(ctx context.Context) ([]projections.Status, error) {
	return q.proj.Status(ctx)
}

// current waits until the read models hold every event the log held when the query began:
// whatever wrote them (this process, another, one that has ended), a query sees it.
func (q *Queries) current(ctx context.Context) error {
	head, err := q.proj.Head(ctx)
	if err != nil {
		return err
	}
	return q.proj.WaitFor(ctx, head)
}

// SQL runs Zuno's read-only SQL over the read models, once they are current; args are its
// '?' parameters.
func (q *Queries) SQL(ctx context.Context, sql string, limit int, args ...any) (Table, error) {
	if err := q.current(ctx); err != nil {
		return Table{}, err
	}
	return q.rm.Query(ctx, sql, limit, args...)
}

// UserSQL runs SQL a user typed (`zuno db`) over the read models, once they are current: one
// query, read-only by construction, within its bounds, its rows streamed into sink
// (docs/readmodels.md).
func (q *Queries) UserSQL(ctx context.Context, sql string, b UserBounds, sink RowSink) (UserSummary, error) {
	if err := q.current(ctx); err != nil {
		return UserSummary{}, err
	}
	return q.rm.UserQuery(ctx, sql, b, sink)
}

// Sessions lists the live sessions newest first: a pruned one is left out.
func (q *Queries) Sessions(ctx context.Context, limit int) (Table, error) {
	query, args := projections.SessionsQuery(limit, false)
	return q.SQL(ctx, query, 0, args...)
}

// AllSessions lists every session newest first, the pruned ones included (their status is
// archived or deleted).
func (q *Queries) AllSessions(ctx context.Context, limit int) (Table, error) {
	query, args := projections.SessionsQuery(limit, true)
	return q.SQL(ctx, query, 0, args...)
}

// Workspaces lists every directory a recorded session works in.
func (q *Queries) Workspaces(ctx context.Context) ([]string, error) {
	t, err := q.SQL(ctx, projections.WorkspacesQuery(), 0)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(t.Rows))
	for _, r := range t.Rows {
		out = append(out, fmt.Sprint(r[0]))
	}
	return out, nil
}

// LatestSession is the most recently active session working in dir, or of all sessions when
// dir is "".
func (q *Queries) LatestSession(ctx context.Context, dir string) (string, error) {
	query, args := projections.LatestSessionQuery(dir)
	t, err := q.SQL(ctx, query, 1, args...)
	if err != nil {
		return "", err
	}
	if len(t.Rows) == 0 {
		where := ""
		if dir != "" {
			where = " works in " + dir
		}
		return "", &NotFoundError{Message: "no session" + where + " yet; start one with zuno run PROMPT"}
	}
	return fmt.Sprint(t.Rows[0][0]), nil
}

// SessionsWithStatus are the sessions whose status (open, suspended, or how their latest
// turn finished) is status, as the read models have them.
func (q *Queries) SessionsWithStatus(ctx context.Context, status string) ([]string, error) {
	t, err := q.SQL(ctx, projections.SessionsWithStatusQuery, 0, status)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(t.Rows))
	for _, row := range t.Rows {
		ids = append(ids, fmt.Sprint(row[0]))
	}
	return ids, nil
}

// SessionInfo is what a session was created as, where it works now, and its turns.
type SessionInfo struct {
	SessionID string       `json:"sessionId"`
	Title     string       `json:"title"`
	Agent     string       `json:"agent"`
	Directory string       `json:"directory,omitempty"`
	Messages  int          `json:"messageCount"`
	Turns     []TurnStatus `json:"turns"`
	// Pruned is archive or delete once the session was pruned.
	Pruned string `json:"pruned,omitempty"`
	// StandingGrants are the "always" answers its next turn would honour, folded as the
	// turn's gate folds them (docs/permissions.md, "Standing approvals").
	StandingGrants []permission.Grant `json:"standingGrants"`
}

// TurnStatus is one turn of a session: "open" until it finishes, then its finish reason.
type TurnStatus struct {
	TurnID   string `json:"turnId"`
	Agent    string `json:"agent"`
	Model    string `json:"model"`
	Status   string `json:"status"`
	Steps    int    `json:"steps"`
	Error    string `json:"error,omitempty"`
	Position uint64 `json:"position"`
}

// TurnOpen is the status of a turn that has not finished (running, or cut short by a crash
// and not yet recovered).
const TurnOpen = "open"

// Session folds a session's stream into what a turn and a person need to know of it.
func (q *Queries) Session(ctx context.Context, sessionID string) (SessionInfo, error) {
	var s session.State
	var standing permission.Standing
	info := SessionInfo{Turns: []TurnStatus{}}
	_, err := commands.Load(ctx, q.log, q.registry, commands.SessionStream(sessionID), 0,
		func(rec events.Recorded, p events.Payload) error {
			info.foldTurn(rec, p)
			standing.Evolve(p)
			return s.Evolve(p)
		})
	if err != nil {
		return SessionInfo{}, err
	}
	if !s.Exists {
		return SessionInfo{}, sessionNotFound(sessionID)
	}
	info.SessionID, info.Title, info.Agent, info.Directory, info.Messages = s.SessionID, s.Title, s.Agent, s.Directory, s.MessageCount
	info.Pruned, info.StandingGrants = s.Pruned, append([]permission.Grant{}, standing.Grants()...)
	return info, nil
}

// SessionPlace is what starting a turn needs of a session: its agent and its workspace, and
// whether it was pruned.
type SessionPlace struct {
	Agent, Directory string
	Pruned           string
}

// Place reads a session's agent and workspace. A turn starts with it and the driver folds the
// whole stream right after, so only the events that set them are decoded (for a fork, its
// own first event carries both: its source's history is not read).
func (q *Queries) Place(ctx context.Context, sessionID string) (SessionPlace, error) {
	var s session.State
	for rec, err := range commands.Events(ctx, q.log, commands.SessionStream(sessionID), 0) {
		if err != nil {
			return SessionPlace{}, err
		}
		switch rec.Type {
		case events.TypeSessionCreated, events.TypeSessionForked, events.TypeDirectoryChanged, events.TypeSessionPruned:
		default:
			continue
		}
		p, err := q.registry.Decode(rec)
		if err == nil {
			err = s.Evolve(p)
		}
		if err != nil {
			return SessionPlace{}, err
		}
	}
	if !s.Exists {
		return SessionPlace{}, sessionNotFound(sessionID)
	}
	return SessionPlace{Agent: s.Agent, Directory: s.Directory, Pruned: s.Pruned}, nil
}

func (info *SessionInfo) foldTurn(rec events.Recorded, p events.Payload) {
	switch e := p.(type) {
	case events.TurnStarted:
		info.Turns = append(info.Turns, TurnStatus{TurnID: e.TurnID, Agent: e.Agent, Model: e.Model, Status: TurnOpen, Position: rec.Position})
	case events.TurnFinished:
		for i := range info.Turns {
			if t := &info.Turns[i]; t.TurnID == e.TurnID {
				t.Status, t.Steps = e.Reason, e.Steps
				if e.Error != nil {
					t.Error = e.Error.Code
				}
			}
		}
	}
}

func sessionNotFound(id string) *domain.Error {
	e := domain.NewError(domain.CodeSessionNotFound, fmt.Sprintf("session %s does not exist", id),
		"check the id with zuno session list, or run without --session to start a new one")
	e.ID = id
	return e
}

// Plan is plan_get: the focused plan of a root session, folded from its work stream (nil when
// there is none). Models and users never see a lagging projection of it.
func (q *Queries) Plan(ctx context.Context, sessionID string) (any, error) {
	st, err := q.work(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	return st.PlanView(), nil
}

// Todos is todo_get: the todo list of a root session, folded from its work stream.
func (q *Queries) Todos(ctx context.Context, sessionID string) (any, error) {
	st, err := q.work(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	return st.TodoView(), nil
}

// RequireSession answers session_not_found for a session that was never created, so that a
// read of it is a typed not-found and a write does not start a stray work stream.
func (q *Queries) RequireSession(ctx context.Context, sessionID string) error {
	first, err := q.log.ReadStream(ctx, commands.SessionStream(sessionID), 0, 1)
	if err != nil {
		return err
	}
	if len(first) == 0 {
		return sessionNotFound(sessionID)
	}
	return nil
}

// TaskContext is task_context action=get: the task context of a session's root, read from its
// stream (docs/task-context.md).
func (q *Queries) TaskContext(ctx context.Context, sessionID string) (taskcontext.View, error) {
	if err := q.RequireSession(ctx, sessionID); err != nil {
		return taskcontext.View{}, err
	}
	return commands.LoadTaskContext(ctx, q.log, q.registry, sessionID)
}

func (q *Queries) work(ctx context.Context, sessionID string) (*work.State, error) {
	if err := q.RequireSession(ctx, sessionID); err != nil {
		return nil, err
	}
	root, err := commands.RootSession(ctx, q.log, q.registry, sessionID)
	if err != nil {
		return nil, err
	}
	st, _, err := commands.LoadWork(ctx, q.log, q.registry, root)
	return st, err
}

// Events reads the log: one stream from a revision, or the whole log after a position, at most
// limit events (0: all of them). Every
// event must decode in this build: an unknown or malformed one is an error naming its type
// and position, never skipped.
func (q *Queries) Events(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	var recs []events.Recorded
	var err error
	if limit <= 0 {
		limit = math.MaxInt32
	}
	if stream != "" {
		for rec, rerr := range commands.Events(ctx, q.log, stream, from) {
			if err = rerr; err != nil || len(recs) == limit {
				break
			}
			recs = append(recs, rec)
		}
	} else {
		recs, err = q.log.ReadAll(ctx, from, limit)
	}
	if err != nil {
		return nil, err
	}
	if stream != "" && from == 0 && len(recs) == 0 {
		return nil, noStream(stream)
	}
	for _, r := range recs {
		if _, err := q.registry.Decode(r); err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// noStream says that a stream has no events, and how streams are named.
func noStream(stream string) error {
	msg := fmt.Sprintf("stream %s has no events; streams are named session-<session id> and work-<session id> (zuno session list shows the ids)", stream)
	if strings.HasPrefix(stream, "ses_") {
		msg += "; did you mean session-" + stream + "?"
	}
	return &NotFoundError{Message: msg}
}
