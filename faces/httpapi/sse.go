package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/events"
)

// eventJSON is one event as the stream sends it (as `zuno events read --format json` prints it).
type eventJSON struct {
	Position uint64          `json:"position"`
	ID       string          `json:"id"`
	Stream   string          `json:"stream"`
	Revision uint64          `json:"revision"`
	Type     string          `json:"type"`
	Data     json.RawMessage `json:"data"`
	Metadata events.Metadata `json:"metadata"`
}

// sessionEvents is GET /api/sessions/{sessionId}/events: the session's events as server-sent
// events (app.SessionEvents says which streams are the session's).
func (s *Server) sessionEvents(w http.ResponseWriter, r *http.Request, _ string) error {
	sid := r.PathValue("sessionId")
	if err := s.app.Queries.RequireSession(r.Context(), sid); err != nil {
		return err
	}
	return s.stream(w, r, app.SessionEvents(sid))
}

// allEvents is GET /api/events: every event of the log.
func (s *Server) allEvents(w http.ResponseWriter, r *http.Request, _ string) error {
	return s.stream(w, r, app.AllEvents)
}

// CodeBadLastEventID: Last-Event-ID (or after) is not a log position.
const CodeBadLastEventID = "bad_last_event_id"

// resumeAfter is where a stream starts: after the position Last-Event-ID names (a reconnecting
// EventSource sends the last id it saw), else after the query's after=N, else from the start.
func resumeAfter(r *http.Request) (uint64, error) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("after")
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, &Error{code: CodeBadLastEventID, Message: fmt.Sprintf("%q is not a log position", v),
			Fix: "send the id of the last event received, as the stream sent it"}
	}
	return n, nil
}

// stream sends the matching events after the resume position, each with its log position as
// its id, then each new one as it is appended, until the client leaves or the server stops.
// Because ids are log positions and the log is read in order, a client that reconnects with
// Last-Event-ID misses none and sees none twice (docs/server.md, "Resuming a stream").
func (s *Server) stream(w http.ResponseWriter, r *http.Request, match func(events.Recorded) bool) error {
	after, err := resumeAfter(r)
	if err != nil {
		return err
	}
	rc := http.NewResponseController(w)
	// The server's read and write timeouts bound a request; a stream lives on, with a write
	// deadline renewed for each write instead (a client that stops reading is still dropped).
	if err := rc.SetReadDeadline(time.Time{}); err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	recs := make(chan events.Recorded)
	errc := make(chan error, 1)
	go func() {
		errc <- s.app.Follow(ctx, after, match, func(rec events.Recorded) error {
			select {
			case recs <- rec:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	beat := time.NewTicker(s.cfg.Heartbeat)
	defer beat.Stop()
	if err := s.send(rc, w, "retry: 2000\n\n"); err != nil {
		return errWritten
	}
	for {
		var frame string
		select {
		case rec := <-recs:
			b, err := json.Marshal(eventJSON{rec.Position, rec.ID, rec.Stream, rec.StreamRevision, rec.Type, rec.Data, rec.Metadata})
			if err != nil {
				return errWritten
			}
			frame = fmt.Sprintf("id: %d\ndata: %s\n\n", rec.Position, b)
		case <-beat.C:
			frame = ": keep-alive\n\n"
		case err := <-errc:
			s.logf("event stream ended: %v", err)
			return errWritten
		case <-ctx.Done():
			return errWritten
		}
		if err := s.send(rc, w, frame); err != nil {
			return errWritten
		}
	}
}

// send writes one frame within the write timeout and flushes it.
func (s *Server) send(rc *http.ResponseController, w http.ResponseWriter, frame string) error {
	if err := rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout)); err != nil {
		return err
	}
	if _, err := fmt.Fprint(w, frame); err != nil {
		return err
	}
	return rc.Flush()
}
