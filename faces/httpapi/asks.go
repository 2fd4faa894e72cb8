package httpapi

import (
	"fmt"
	"net/http"

	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/queries"
)

// listAsks is GET /api/sessions/{sessionId}/asks[?pending=true]: the session's permission
// asks and their replies, folded from the log.
func (s *Server) listAsks(w http.ResponseWriter, r *http.Request, _ string) error {
	ctx, cancel := s.requestContext(r)
	defer cancel()
	asks, err := s.app.Queries.Asks(ctx, r.PathValue("sessionId"))
	if err != nil {
		return err
	}
	out := []queries.AskView{}
	for _, a := range asks {
		if a.Pending || r.URL.Query().Get("pending") != "true" {
			out = append(out, a)
		}
	}
	return writeJSON(w, http.StatusOK, map[string]any{"asks": out})
}

// replyRequest is POST /api/sessions/{sessionId}/asks/{askId}/reply.
type replyRequest struct {
	// Reply is once, always or reject.
	Reply     string `json:"reply"`
	CommandID string `json:"commandId,omitempty"`
}

// CodeAskNotPending: a reply to an ask that is not waiting for one (seeds 004: a committed
// reply is final, and a second reply, a retry included, is answered 404).
const CodeAskNotPending = "ask_not_pending"

// reply answers a pending ask: 204 once recorded; 404 for an ask of another session, one
// never asked, or one answered already, whoever answered it.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, actor string) error {
	var req replyRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	sid, askID := r.PathValue("sessionId"), r.PathValue("askId")
	meta, err := s.meta(req.CommandID, actor, sid, false)
	if err != nil {
		return err
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	asks, err := s.app.Queries.Asks(ctx, sid)
	if err != nil {
		return err
	}
	var callID string
	found := false
	for _, a := range asks {
		if a.AskID == askID && a.Pending {
			callID, found = a.CallID, true
		}
	}
	if !found {
		return notPending(sid, askID)
	}
	res, err := s.app.Commands.AnswerPermission(ctx, meta, sid, askID, callID, req.Reply)
	switch {
	case app.CodeOf(err) == "already_answered":
		return notPending(sid, askID) // another reply was committed between the read and the append
	case err != nil:
		return err
	case res.Events == 0 && !res.Duplicate:
		return notPending(sid, askID) // the same reply, committed by another request first
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func notPending(sid, askID string) error {
	return &Error{code: CodeAskNotPending, Message: fmt.Sprintf("session %s has no pending ask %s", sid, askID),
		Fix: "list the session's pending asks (GET /api/sessions/" + sid + "/asks?pending=true); a recorded reply is final"}
}
