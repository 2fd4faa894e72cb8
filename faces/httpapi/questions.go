package httpapi

import (
	"fmt"
	"net/http"

	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/domain/question"
	"github.com/zuno-run/zuno/events"
)

// The HTTP face of the QuestionPort (docs/questions.md): the seeds' paths, whose body or query
// names the session (as /api/session/prune does).

// listQuestions is GET /api/session/questions?sessionId=S[&all=true]: the session's open
// question requests (all=true: answered and voided ones too), read from the log, so the
// revision a client answers against is the current one.
func (s *Server) listQuestions(w http.ResponseWriter, r *http.Request, _ string) error {
	sid := r.URL.Query().Get("sessionId")
	if !idPattern.MatchString(sid) {
		return &Error{code: CodeBadID, Message: fmt.Sprintf("sessionId %q is missing or not an id", sid),
			Fix: "name the session: GET /api/session/questions?sessionId=ses_…"}
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	rs, err := s.app.Commands.Questions().List(ctx, sid, r.URL.Query().Get("all") != "true")
	if err != nil {
		return err
	}
	out := make([]app.RequestView, len(rs))
	for i, q := range rs {
		out[i] = app.ViewRequest(q)
	}
	return writeJSON(w, http.StatusOK, map[string]any{"questions": out})
}

// questionReply is POST /api/session/question/reply: answers to some or all of a request's
// items, or later: true to defer it. expectedRevision is the revision the client showed.
type questionReply struct {
	SessionID        string                      `json:"sessionId"`
	RequestID        string                      `json:"requestId"`
	ExpectedRevision *uint64                     `json:"expectedRevision"`
	CommandID        string                      `json:"commandId"`
	Answers          []events.QuestionItemAnswer `json:"answers,omitempty"`
	Later            bool                        `json:"later,omitempty"`
}

// CodeQuestionNotPending: a reply to a request that takes none: answered in full (by this or
// another face) or voided, never published, or another session's. As for asks, a second reply
// to a closed request is answered 404, whoever replied first.
const CodeQuestionNotPending = "question_not_pending"

// replyQuestion records the reply: 200 with the request's state after it; 404 when the request
// is not open; 409 for a stale expectedRevision or a commandId reused with other content.
func (s *Server) replyQuestion(w http.ResponseWriter, r *http.Request, actor string) error {
	var req questionReply
	if err := decode(r, &req); err != nil {
		return err
	}
	if !idPattern.MatchString(req.SessionID) || !idPattern.MatchString(req.RequestID) {
		return &Error{code: CodeBadID, Message: "sessionId and requestId must be ids",
			Fix: "name the session and the request (GET /api/session/questions lists them)"}
	}
	if req.ExpectedRevision == nil {
		return &Error{code: CodeBadRequest, Message: "expectedRevision is missing",
			Fix: "send the revision the request showed (GET /api/session/questions)"}
	}
	if req.Later == (len(req.Answers) > 0) {
		return &Error{code: CodeBadRequest, Message: "send answers, or later: true, not both nor neither",
			Fix: "answer some items, or defer the request with later: true (a deferral is no answer)"}
	}
	meta, err := s.meta(req.CommandID, actor, req.SessionID, true)
	if err != nil {
		return err
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	q := s.app.Commands.Questions()
	var done error
	var view any
	if req.Later {
		view, done = q.Later(ctx, meta, req.SessionID, req.RequestID, *req.ExpectedRevision)
	} else {
		view, done = q.Answer(ctx, meta, req.SessionID, req.RequestID, *req.ExpectedRevision, req.Answers, "http")
	}
	switch app.CodeOf(done) {
	case "":
		return writeJSON(w, http.StatusOK, view)
	case question.CodeQuestionNotFound, question.CodeQuestionClosed:
		return &Error{code: CodeQuestionNotPending, Message: fmt.Sprintf("session %s has no open question request %s", req.SessionID, req.RequestID),
			Fix: "list the session's open questions (GET /api/session/questions?sessionId=" + req.SessionID + "); an answered request is final"}
	}
	return done
}
