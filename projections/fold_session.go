package projections

import (
	"context"

	"github.com/zuno-run/zuno/events"
)

// sessionRow is a session row held by a rebuild's fold, its values typed as Sessions' statements
// bind them.
type sessionRow struct {
	id, title, agent  string
	parent, directory any // NULL or text
	messageCount      int64
	status            string
	created, updated  string
}

var sessionColumns = []string{"id", "title", "agent", "parent_session_id", "directory", "message_count", "status",
	"time_created", "time_updated"}

func sessionValues(r *sessionRow, args []any) []any {
	return append(args, r.id, r.title, r.agent, r.parent, r.directory, r.messageCount, r.status, r.created, r.updated)
}

// sessionRefused: message_count is an INTEGER.
func sessionRefused(r sessionRow) bool {
	return pastInt32(r.messageCount) || anyNUL(r.id, r.title, r.agent, r.status, r.created, r.updated) || hasNUL(r.parent, r.directory)
}

// sessionStatusDefault is the status column's default (migrations 0003): a created session's
// status until its first turn.
const sessionStatusDefault = "idle"

// sessionFold is Sessions' rebuild-only mode (fold.go): the rules of Sessions.Apply on rows in
// memory.
type sessionFold struct{ rows *rowFold[string, sessionRow] }

func (Sessions) fold() fold {
	return &sessionFold{rows: newRowFold[string](`session`, sessionColumns, sessionValues, sessionRefused)}
}

func (f *sessionFold) flush(ctx context.Context, tx *Tx) error { return f.rows.flush(ctx, tx) }

func (f *sessionFold) Apply(ctx context.Context, tx *Tx, ev events.Recorded, p events.Payload) error {
	at := tx.eventTime(ev)
	switch e := p.(type) {
	case events.SessionCreated:
		return f.insert(ctx, tx, ev, p, sessionRow{id: e.SessionID, title: e.Title, agent: e.Agent,
			parent: nullable(e.ParentSessionID), directory: nullable(e.Directory), status: sessionStatusDefault,
			created: at, updated: at})
	case events.SessionForked:
		return f.insert(ctx, tx, ev, p, sessionRow{id: e.SessionID, title: e.Title, agent: e.Agent,
			directory: nullable(e.Directory), messageCount: int64(e.MessageCount), status: sessionStatusDefault,
			created: at, updated: at})
	}
	id, change := sessionChange(p)
	if change == nil {
		return nil
	}
	switch r, state := f.rows.row(id); state {
	case rowAbsent:
		// The statement's UPDATE finds no row; it binds the values all the same.
		probe := change(sessionRow{id: id})
		if !f.rows.unheldable(&probe) {
			return nil
		}
	case rowHeld:
		next := change(*r)
		next.updated = at
		if !f.rows.unheldable(&next) {
			*r = next
			return nil
		}
		if err := f.rows.flush(ctx, tx); err != nil {
			return err
		}
	}
	return Sessions{}.Apply(ctx, tx, ev, p)
}

// insert holds a new session's row. A second row with the same id is the statement's to
// refuse, in its words: the held rows are written first.
func (f *sessionFold) insert(ctx context.Context, tx *Tx, ev events.Recorded, p events.Payload, r sessionRow) error {
	if _, state := f.rows.row(r.id); state == rowAbsent && !f.rows.unheldable(&r) {
		return f.rows.create(ctx, tx, r.id, r)
	}
	if err := f.rows.flush(ctx, tx); err != nil {
		return err
	}
	if err := (Sessions{}).Apply(ctx, tx, ev, p); err != nil {
		return err
	}
	f.rows.wrote(r.id)
	return nil
}

// sessionChange is what an event other than a creation changes of its session's row, as
// Sessions.Apply's UPDATE does (time_updated aside, which every one sets); nil for an event
// that changes no session. The change takes and returns the row by value: a pointer given to a
// function value escapes, and each event would allocate its row on the heap.
func sessionChange(p events.Payload) (string, func(sessionRow) sessionRow) {
	switch e := p.(type) {
	case events.SessionTitled:
		return e.SessionID, func(r sessionRow) sessionRow { r.title = e.Title; return r }
	case events.DirectoryChanged:
		return e.SessionID, func(r sessionRow) sessionRow { r.directory = e.Directory; return r }
	case events.UserMessageAppended:
		return e.SessionID, func(r sessionRow) sessionRow { r.messageCount++; return r }
	case events.TurnStarted:
		return e.SessionID, func(r sessionRow) sessionRow { r.status = "open"; return r }
	case events.TurnSuspended:
		return e.SessionID, func(r sessionRow) sessionRow { r.status = "suspended"; return r }
	case events.TurnResumed:
		return e.SessionID, func(r sessionRow) sessionRow { r.status = "open"; return r }
	case events.TurnFinished:
		return e.SessionID, func(r sessionRow) sessionRow { r.status = e.Reason; return r }
	case events.SessionPruned:
		return e.SessionID, func(r sessionRow) sessionRow { r.status = PrunedStatus(e.Mode); return r }
	}
	return "", nil
}
