package commands

import (
	"context"

	"github.com/zuno-run/zuno/domain/notes"
	"github.com/zuno-run/zuno/events"
)

// NotesStream holds the notes of one session's agent (docs/tools.md, "history and notes").
func NotesStream(sessionID string) string { return "notes-" + sessionID }

// WriteNote is the notes tool's append_to_file or write_file. Its command id derives from the
// tool call, and its digest from what it asks (the request digest): a redelivered call
// returns its first result and writes nothing, the same id with other content is refused.
type WriteNote struct {
	Meta
	SessionID string      `json:"sessionId"`
	Write     notes.Write `json:"write"`
}

// NoteView is a write's result: the document's name and revision after it.
type NoteView struct {
	Name     string `json:"name"`
	Revision uint64 `json:"revision"`
	Bytes    int    `json:"bytes"`
}

// WriteNote handles WriteNote.
func (h *Handlers) WriteNote(ctx context.Context, c *WriteNote) (Result, error) {
	w := c.Write
	w.SessionID = c.SessionID
	x := execution[*notes.State]{meta: c.Meta, stream: NotesStream(c.SessionID),
		newState: func() *notes.State { return &notes.State{} },
		decide:   func(s *notes.State) ([]events.Payload, error) { return notes.Decide(s, w) }}
	return handle(ctx, h, "WriteNote", x, c, func(s *notes.State) any {
		name, _ := notes.ParseName(w.Name)
		v := NoteView{Name: name}
		if d := s.Get(name); d != nil {
			v.Revision, v.Bytes = d.Revision, len(d.Content)
		}
		return v
	}), nil
}

// Notes reads the notes of a session from its stream (reads never lag a write).
func (h *Handlers) Notes(ctx context.Context, sessionID string) (*notes.State, error) {
	st := &notes.State{}
	_, err := Load(ctx, h.store, h.registry, NotesStream(sessionID), 0, func(_ events.Recorded, p events.Payload) error { return st.Evolve(p) })
	return st, err
}

// SessionEvents folds a session's own stream, in order (the history tool's evidence).
func (h *Handlers) SessionEvents(ctx context.Context, sessionID string, fold Fold) error {
	_, err := Load(ctx, h.store, h.registry, SessionStream(sessionID), 0, fold)
	return err
}

// WriteNote handles WriteNote, measured.
func (w WorkCommands) WriteNote(ctx context.Context, c *WriteNote) (Result, error) {
	return Measured(w.h.metrics, "WriteNote", w.h.WriteNote)(ctx, c)
}

// Notes reads a session's notes.
func (w WorkCommands) Notes(ctx context.Context, sessionID string) (*notes.State, error) {
	return w.h.Notes(ctx, sessionID)
}

// SessionEvents folds a session's stream.
func (w WorkCommands) SessionEvents(ctx context.Context, sessionID string, fold Fold) error {
	return w.h.SessionEvents(ctx, sessionID, fold)
}
