package httpapi

import (
	"net/http"
	"regexp"
	"strconv"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/events"
)

// listSessions is GET /api/sessions?limit=N[&pruned=true]: the sessions, newest first, from
// the read models once they reached the log's head (read-your-writes by position); pruned ones
// only with pruned=true.
func (s *Server) listSessions(w http.ResponseWriter, r *http.Request, _ string) error {
	limit := 50
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return &Error{code: CodeBadRequest, Message: "limit " + strconv.Quote(v) + " is not a number from 1 to 1000", Fix: "pass limit=50"}
		}
		limit = n
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	list := s.app.Queries.Sessions
	if r.URL.Query().Get("pruned") == "true" {
		list = s.app.Queries.AllSessions
	}
	t, err := list(ctx, limit)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"sessions": objects(t)})
}

// objects turns a table into one JSON object per row, keyed by column.
func objects(t queries.Table) []map[string]any {
	out := make([]map[string]any, len(t.Rows))
	for i, row := range t.Rows {
		o := make(map[string]any, len(t.Columns))
		for j, c := range t.Columns {
			o[c] = row[j]
		}
		out[i] = o
	}
	return out
}

// getSession is GET /api/sessions/{sessionId}: the session folded from its stream, with its
// turns and their status.
func (s *Server) getSession(w http.ResponseWriter, r *http.Request, _ string) error {
	ctx, cancel := s.requestContext(r)
	defer cancel()
	info, err := s.app.Queries.Session(ctx, r.PathValue("sessionId"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, info)
}

// abortRequest is POST /api/sessions/{sessionId}/abort's optional body.
type abortRequest struct {
	CommandID string `json:"commandId,omitempty"`
	// TurnID names the turn to stop; the session's running turn when empty.
	TurnID string `json:"turnId,omitempty"`
}

// abort asks whichever process drives the session's running turn to stop it (InterruptTurn).
func (s *Server) abort(w http.ResponseWriter, r *http.Request, actor string) error {
	var req abortRequest
	if err := decodeOptional(r, &req); err != nil {
		return err
	}
	sid := r.PathValue("sessionId")
	meta, err := s.meta(req.CommandID, actor, sid, false)
	if err != nil {
		return err
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	res, err := s.app.Commands.InterruptTurn(ctx, meta, sid, req.TurnID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusAccepted, res)
}

// pruneRequest is POST /api/session/prune (the seeds' path): the session named in the body.
type pruneRequest struct {
	SessionID string `json:"sessionId"`
	// Mode is archive (the default) or delete.
	Mode      string `json:"mode,omitempty"`
	Reason    string `json:"reason,omitempty"`
	CommandID string `json:"commandId,omitempty"`
}

// prune archives or deletes a session and ends its standing approvals (PruneSession); a
// session whose turn is open is refused (409 turn_open).
func (s *Server) prune(w http.ResponseWriter, r *http.Request, actor string) error {
	var req pruneRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if !idPattern.MatchString(req.SessionID) {
		return &Error{code: CodeBadID, Message: "sessionId " + strconv.Quote(req.SessionID) + " is not an id",
			Fix: "name the session to prune by its id (ses_…)"}
	}
	if req.Mode == "" {
		req.Mode = events.PruneArchive
	}
	meta, err := s.meta(req.CommandID, actor, req.SessionID, false)
	if err != nil {
		return err
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	res, err := s.app.Commands.PruneSession(ctx, meta, req.SessionID, req.Mode, req.Reason)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}

// commandIDPattern is what a client's command id may be: printable, short, no spaces.
var commandIDPattern = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,128}$`)

// meta is the command's envelope: the client's command id (a new one when optional and
// absent), the authenticated actor, and the session it concerns.
func (s *Server) meta(commandID, actor, session string, required bool) (commands.Meta, error) {
	if commandID == "" && !required {
		commandID = app.NewID("cmd_")
	}
	if !commandIDPattern.MatchString(commandID) {
		return commands.Meta{}, &Error{code: CodeBadRequest,
			Message: "commandId " + strconv.Quote(commandID) + " is missing or not 1-128 of letters, digits, '_', '.', ':', '-'",
			Fix:     "send a commandId the client keeps, and send it again on a retry: the same id is the same command"}
	}
	return commands.Meta{CommandID: commandID, Actor: actor, CorrelationID: session}, nil
}
